/*
 * Integration tests of transfer reversals against the real stack (tests/integration.sh):
 * POST /api/v1/payment/transfers/{id}/reversals, and a refund's reverse_transfers (one ledger
 * transaction with the refund, all or nothing), every refusal (nothing moved), the 404s, and
 * the transfer.reversed webhook. The refund endpoints themselves: check_refund.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "checkout_form.h"
#include "fixture.h"
#include "http.h"
#include "receiver.h"
#include "refunds.h"
#include "transfers.h"

#define NO_TRANSFER "tr_00000000000000000000000000000000"

/* Set up once in the parent before the cases run (they run forked and inherit it). */
static struct merchant shop;    /* settlement on, PIN 1234, webhooks to the stack's receiver */
static struct merchant other;   /* another merchant that pays vendors */
static char secret[128];        /* shop's webhook secret */

/* n new vendor accounts (into v) to which shop transfers amounts[i]: tr_ ids into tr. */
static void
transfer_new(int n, char v[][16], const char *const *amounts, char tr[][40])
{
	int i;

	for (i = 0; i < n; i++)
		new_account(v[i], "--kind vendor");
	transfer_ok(&shop, n, v, amounts, tr);
}

/* A new transfer of other's (3.00): its id into tr[40]. */
static void
other_transfer(char tr[40])
{
	char v[1][16], ids[1][40];

	new_account(v[0], "--kind vendor");
	transfer_ok(&other, 1, v, (const char *const[]){ "3.00" }, ids);
	snprintf(tr, 40, "%s", ids[0]);
}

/* Reverses body of shop's transfer tr, which must succeed: V's id into id[40]. */
static void
reversal_ok(const char *tr, const char *body, const char *amount, const char *reason,
    char id[40])
{
	struct http_resp r;

	reversal_post(shop.auth, tr, body, &r);
	check_reversal(reversal_of(&r), tr, amount, reason, NULL);
	snprintf(id, 40, "%s", jstr(reversal_of(&r), "id"));
	http_free(&r);
}

/* The vendor pays out minor units (an owner's adjustment to the funding account). */
static void
vendor_spends(const char *vendor, const char *minor)
{
	const char *p[2] = { vendor, minor };

	ck_assert_ptr_nonnull(db_valuev("SELECT mp_post('adjustment', NULL, 'vendor payout',"
	    " 'AFN', ARRAY[(SELECT id FROM accounts WHERE account_number = $1), (SELECT id FROM"
	    " accounts WHERE kind = 'system' AND currency = 'AFN')], ARRAY[-$2::bigint,"
	    " $2::bigint])", 2, p));
}

static void
set_status(const char *acct, const char *status)
{
	const char *p[2] = { acct, status };

	ck_assert_ptr_nonnull(db_valuev("UPDATE accounts SET status = $2 WHERE account_number = $1"
	    " RETURNING 1", 2, p));
}

static const char *
reversed_of(const char *tr)
{
	return db_value("SELECT amount_reversed FROM transfers WHERE id = $1", tr);
}

/* Case 5: a transfer reversed in two steps, then refused once nothing is left. */
START_TEST(test_reverse)
{
	char v[1][16], tr[1][40], id[40], want[256];
	long long m0;

	transfer_new(1, v, (const char *const[]){ "10.00" }, tr);
	m0 = balance_of(shop.acct);
	reversal_ok(tr[0], "{\"amount\":4.00,\"reason\":\"returned\"}", "4.00", "returned", id);
	ck_assert_int_eq(balance_of(v[0]), 600);
	ck_assert_int_eq(balance_of(shop.acct), m0 + 400);
	snprintf(want, sizeof(want), "reversal %s %s:-400,%s:400", shop.id, v[0], shop.acct);
	ck_assert_str_eq(ledger_of(id), want);
	ck_assert_str_eq(reversed_of(tr[0]), "400");
	snprintf(want, sizeof(want), "%s %s 400 AFN returned -", tr[0], shop.id);
	ck_assert_str_eq(db_value("SELECT transfer_id || ' ' || merchant_id || ' ' || amount ||"
	    " ' ' || currency || ' ' || reason || ' ' || coalesce(refund_id, '-') FROM"
	    " transfer_reversals WHERE id = $1", id), want);
	reversal_ok(tr[0], "{}", "6.00", NULL, id);
	ck_assert_int_eq(balance_of(v[0]), 0);
	ck_assert_int_eq(balance_of(shop.acct), m0 + 1000);
	ck_assert_str_eq(reversed_of(tr[0]), "1000");
	snprintf(want, sizeof(want), "amount: transfer %s is reversed in full; nothing is left to"
	    " reverse", tr[0]);
	assert_refused(shop.auth, reversals_path(tr[0]), "{}", 400, want);
	assert_refused(shop.auth, reversals_path(tr[0]), "{\"amount\":0.01}", 400, want);
	assert_ledger_ok();
}
END_TEST

START_TEST(test_above_left)
{
	char v[1][16], tr[1][40], id[40], want[256];

	transfer_new(1, v, (const char *const[]){ "6.00" }, tr);
	snprintf(want, sizeof(want), "amount 7.00 is above what is left to reverse of transfer %s"
	    " (6.00)", tr[0]);
	assert_refused(shop.auth, reversals_path(tr[0]), "{\"amount\":7.00}", 400, want);
	reversal_ok(tr[0], "{\"amount\":1.00}", "1.00", NULL, id);
	snprintf(want, sizeof(want), "amount 5.01 is above what is left to reverse of transfer %s"
	    " (5.00)", tr[0]);
	assert_refused(shop.auth, reversals_path(tr[0]), "{\"amount\":5.01}", 400, want);
	reversal_ok(tr[0], "{\"amount\":5.00}", "5.00", NULL, id);
	ck_assert_str_eq(reversed_of(tr[0]), "600");
}
END_TEST

/* The vendor must still hold what is taken back; exactly its balance is fine. */
START_TEST(test_vendor_short)
{
	char v[1][16], tr[1][40], id[40];

	transfer_new(1, v, (const char *const[]){ "5.00" }, tr);
	vendor_spends(v[0], "300");
	ck_assert_int_eq(balance_of(v[0]), 200);
	assert_refused(shop.auth, reversals_path(tr[0]), "{\"amount\":3.00}", 400,
	    "amount 3.00 is above the vendor account's available balance");
	assert_refused(shop.auth, reversals_path(tr[0]), "{}", 400,
	    "amount 5.00 is above the vendor account's available balance");
	reversal_ok(tr[0], "{\"amount\":2.00}", "2.00", NULL, id);
	ck_assert_int_eq(balance_of(v[0]), 0);
	assert_ledger_ok();
}
END_TEST

/*
 * A frozen vendor account cannot be debited; active again, it can. A closed one (paid out
 * to zero first: only such an account closes, for good) cannot either.
 */
START_TEST(test_vendor_frozen)
{
	char v[2][16], tr[2][40], id[40];

	transfer_new(2, v, (const char *const[]){ "5.00", "3.00" }, tr);
	set_status(v[0], "frozen");
	assert_refused(shop.auth, reversals_path(tr[0]), "{}", 400,
	    "transfer_id: the vendor account is frozen, and cannot be debited");
	vendor_spends(v[1], "300");
	set_status(v[1], "closed");
	assert_refused(shop.auth, reversals_path(tr[1]), "{\"amount\":1.00}", 400,
	    "transfer_id: the vendor account is closed, and cannot be debited");
	set_status(v[0], "active");
	/* An account relabelled by the operator to another currency is named, not a 500. */
	ck_assert_ptr_nonnull(db_value("UPDATE accounts SET currency = 'USD' WHERE"
	    " account_number = $1 RETURNING 1", v[0]));
	assert_refused(shop.auth, reversals_path(tr[0]), "{}", 400,
	    "transfer_id: the vendor account holds USD, not AFN");
	ck_assert_ptr_nonnull(db_value("UPDATE accounts SET currency = 'AFN' WHERE"
	    " account_number = $1 RETURNING 1", v[0]));
	reversal_ok(tr[0], "{}", "5.00", NULL, id);
}
END_TEST

/* Unknown, malformed and another merchant's transfers look all alike. */
START_TEST(test_not_found)
{
	char other_tr[40];
	const char *const bad[] = { NO_TRANSFER, "tr_xyz", "x", "'%3B--", other_tr };
	struct http_resp r;
	size_t i;

	other_transfer(other_tr);
	for (i = 0; i < NELEM(bad); i++)
		assert_refused(shop.auth, reversals_path(bad[i]), "{}", 404, "transfer not found");
	ck_assert_str_eq(reversed_of(other_tr), "0");
	/* other reverses its own. */
	reversal_post(other.auth, other_tr, "{}", &r);
	check_reversal(reversal_of(&r), other_tr, "3.00", NULL, NULL);
	http_free(&r);
}
END_TEST

static const struct bad {
	const char *body, *needle;
} bad_bodies[] = {
	{ "{\"amount\":0}", "amount must be greater than 0" },
	{ "{\"amount\":-1}", "amount must not be negative" },
	{ "{\"amount\":1.001}", "amount must have at most two decimal places" },
	{ "{\"amount\":\"1.00\"}", "amount must be a number" },
	{ "{\"amount\":1e3}", "amount must be a plain decimal number" },
	{ "{\"reason\":7}", "reason must be a string" },
	{ "{\"transfer_id\":\"" NO_TRANSFER "\"}", "transfer_id is not a known field" },
	{ "{\"amount\":1,\"reverse_transfers\":[]}", "reverse_transfers is not a known field" },
	{ "[1]", "request body must be a JSON object" },
	{ "{", "not valid JSON" },
	{ NULL, "reason must be at most 500 characters" },   /* 501 characters */
};

START_TEST(test_invalid)
{
	char body[2048] = "{\"reason\":\"", v[1][16], vtr[1][40];
	int i;

	transfer_new(1, v, (const char *const[]){ "5.00" }, vtr);
	if (bad_bodies[_i].body != NULL)
		snprintf(body, sizeof(body), "%s", bad_bodies[_i].body);
	else {
		for (i = 0; i < 501; i++)
			strcat(body, "\xc3\xa9");
		strcat(body, "\"}");
	}
	assert_refused(shop.auth, reversals_path(vtr[0]), body, 400, bad_bodies[_i].needle);
	ck_assert_str_eq(reversed_of(vtr[0]), "0");
}
END_TEST

/* 500 characters of reason are allowed; an integer amount is fine. */
START_TEST(test_valid_edges)
{
	char v[1][16], tr[1][40], id[40], reason[1001] = "", body[1100];
	int i;

	transfer_new(1, v, (const char *const[]){ "5.00" }, tr);
	for (i = 0; i < 500; i++)
		strcat(reason, "\xc3\xa9");
	snprintf(body, sizeof(body), "{\"amount\":1,\"reason\":\"%s\"}", reason);
	reversal_ok(tr[0], body, "1.00", reason, id);
	reversal_ok(tr[0], "{\"amount\":null,\"reason\":null}", "4.00", NULL, id);
}
END_TEST

/* A paid session (20.00, from a new wallet into cust) and two transfers: 8.00 and 4.00. */
static void
split(char sid[37], char cust[16], char v[][16], char tr[][40])
{
	new_customer("50.00", cust);
	paid_session(shop.auth, "20.00", "order-split", cust, sid);
	transfer_new(2, v, (const char *const[]){ "8.00", "4.00" }, tr);
}

/* The refund body reverse_transfers [{tr0 (amount a0)}, {tr1 (amount a1)}] ("": no amount). */
static const char *
split_body(const char *tr0, const char *a0, const char *tr1, const char *a1)
{
	static char b[512];

	snprintf(b, sizeof(b), "{\"reason\":\"split\",\"reverse_transfers\":[{\"transfer_id\":\"%s\""
	    "%s%s},{\"transfer_id\":\"%s\"%s%s}]}", tr0, *a0 ? ",\"amount\":" : "", a0, tr1,
	    *a1 ? ",\"amount\":" : "", a1);
	return b;
}

/* Case 6: a refund carrying reversals, all in one ledger transaction. */
START_TEST(test_refund_reversals)
{
	char sid[37], cust[16], v[2][16], tr[2][40], rid[40], want[512];
	struct http_resp r, g;
	struct json_object *R, *list;
	long long m0, c0;

	split(sid, cust, v, tr);
	m0 = balance_of(shop.acct);
	c0 = balance_of(cust);
	refund_post(shop.auth, sid, split_body(tr[0], "", tr[1], "2.00"), &r);
	R = refund_of(&r, "Refund succeeded.");
	check_refund(R, sid, "20.00", "split", 2);
	reversal_in(R, tr[0], "8.00");
	reversal_in(R, tr[1], "2.00");
	snprintf(rid, sizeof(rid), "%s", jstr(R, "id"));
	ck_assert_int_eq(balance_of(cust), c0 + 2000);
	ck_assert_int_eq(balance_of(v[0]), 0);
	ck_assert_int_eq(balance_of(v[1]), 200);
	ck_assert_int_eq(balance_of(shop.acct), m0 - 1000);   /* net: 10.00 back, 20.00 out */
	snprintf(want, sizeof(want), "refund %s %s:-1000,%s:-800,%s:-200,%s:2000", shop.id,
	    shop.acct, v[0], v[1], cust);
	ck_assert_str_eq(ledger_of(rid), want);
	/* The reversals are the refund's ledger transaction, not ones of their own. */
	ck_assert_str_eq(db_value("SELECT count(*) || ' ' || bool_and(v.ledger_transaction_id ="
	    " r.ledger_transaction_id) FROM transfer_reversals v JOIN refunds r ON r.id ="
	    " v.refund_id WHERE r.id = $1", rid), "2 true");
	ck_assert_str_eq(db_value("SELECT string_agg(entry_kind, ',' ORDER BY amount) FROM"
	    " ledger_entry_kinds WHERE transaction_id = (SELECT ledger_transaction_id FROM"
	    " refunds WHERE id = $1)", rid), "refund,reversal,reversal,refund");
	ck_assert_str_eq(reversed_of(tr[0]), "800");
	ck_assert_str_eq(reversed_of(tr[1]), "200");
	api("GET", shop.auth, NULL, NULL, &g, "/api/v1/payment/refunds/%s", rid);
	ck_assert_msg(json_object_equal(refund_of(&g, "Refund found."), R), "%s", g.body);
	http_free(&g);
	/* The session lists the refund with its reversals, as the refund's reply had it. */
	api("GET", shop.auth, NULL, NULL, &g, "/api/v1/payment/sessions/%s", sid);
	ck_assert_int_eq(g.status, 200);
	ck_assert(json_object_object_get_ex(g.json, "refunds", &list));
	ck_assert_int_eq(json_object_array_length(list), 1);
	ck_assert_msg(json_object_equal(json_object_array_get_idx(list, 0), R), "%s", g.body);
	http_free(&g);
	http_free(&r);
	assert_ledger_ok();
}
END_TEST

/* Reversals that cover the whole refund: the merchant's account has no entry at all. */
START_TEST(test_refund_net_zero)
{
	struct merchant m;
	char cust[16], sid[37], v[1][16], tr[1][40], rid[40], want[256], body[256], path[128];
	struct http_resp r;

	/* A merchant that sent on everything it was paid: only the reversal can fund a refund. */
	new_merchant(&m, "1234", "0.01", true);
	new_customer("20.00", cust);
	paid_session(m.auth, "10.00", "order-net", cust, sid);
	new_account(v[0], "--kind vendor");
	transfer_ok(&m, 1, v, (const char *const[]){ "10.01" }, tr);
	ck_assert_int_eq(balance_of(m.acct), 0);
	snprintf(path, sizeof(path), "%s", refunds_path(sid));
	assert_refused(m.auth, path, "{}", 400,
	    "amount 10.00: the merchant's available balance is 0.00, short by 10.00");
	/* The check is on the net debit: the refund less the reversals it carries. */
	snprintf(body, sizeof(body), "{\"reverse_transfers\":[{\"transfer_id\":\"%s\","
	    "\"amount\":9.00}]}", tr[0]);
	assert_refused(m.auth, path, body, 400,
	    "amount 10.00: the merchant's available balance is 0.00, short by 1.00");
	snprintf(body, sizeof(body), "{\"reverse_transfers\":[{\"transfer_id\":\"%s\","
	    "\"amount\":10.00}]}", tr[0]);
	refund_post(m.auth, sid, body, &r);
	check_refund(refund_of(&r, "Refund succeeded."), sid, "10.00", NULL, 1);
	snprintf(rid, sizeof(rid), "%s", jstr(refund_of(&r, "Refund succeeded."), "id"));
	http_free(&r);
	snprintf(want, sizeof(want), "refund %s %s:-1000,%s:1000", m.id, v[0], cust);
	ck_assert_str_eq(ledger_of(rid), want);
	ck_assert_int_eq(balance_of(m.acct), 0);
	ck_assert_int_eq(balance_of(v[0]), 1);
	assert_ledger_ok();
}
END_TEST

/* Two transfers to one vendor: one ledger entry for it, its balance checked for both. */
START_TEST(test_refund_same_vendor)
{
	char sid[37], cust[16], v[1][16], a[1][40], b[1][40], path[128], want[256];
	struct http_resp r;

	new_customer("20.00", cust);
	paid_session(shop.auth, "5.00", "order-same", cust, sid);
	transfer_new(1, v, (const char *const[]){ "3.00" }, a);
	transfer_ok(&shop, 1, v, (const char *const[]){ "2.00" }, b);
	vendor_spends(v[0], "100");   /* 4.00 left: either reversal fits, both do not */
	snprintf(path, sizeof(path), "%s", refunds_path(sid));
	assert_refused(shop.auth, path, split_body(a[0], "", b[0], ""), 400,
	    "reverse_transfers[0].amount: 2 reversals from one vendor total 5.00, above its "
	    "balance");
	refund_post(shop.auth, sid, split_body(a[0], "", b[0], "1.00"), &r);
	check_refund(refund_of(&r, "Refund succeeded."), sid, "5.00", "split", 2);
	snprintf(want, sizeof(want), "refund %s %s:-400,%s:-100,%s:500", shop.id, v[0], shop.acct,
	    cust);
	ck_assert_str_eq(ledger_of(jstr(refund_of(&r, "Refund succeeded."), "id")), want);
	http_free(&r);
	ck_assert_int_eq(balance_of(v[0]), 0);
	assert_ledger_ok();
}
END_TEST

/* Idempotency-Key on reversals too. */
START_TEST(test_idempotency)
{
	char v[1][16], tr[1][40], path[128];
	struct http_resp r;

	transfer_new(1, v, (const char *const[]){ "5.00" }, tr);
	snprintf(path, sizeof(path), "%s", reversals_path(tr[0]));
	assert_idempotent(shop.id, shop.auth, path, "reversal", "{\"amount\":1.00}",
	    "{\"amount\":2.00}", &r);
	check_reversal(reversal_of(&r), tr[0], "1.00", NULL, NULL);
	http_free(&r);
	ck_assert_str_eq(reversed_of(tr[0]), "100");
	ck_assert_int_eq(balance_of(v[0]), 400);
}
END_TEST

/* Reversals at once: under the transfer's row lock exactly what is left goes through. */
START_TEST(test_race)
{
	enum { N = 5 };
	const char *h[] = { JSON_CT, shop.auth, NULL };
	char v[1][16], tr[1][40], want[256];
	struct http_resp r[N];
	int i, ok = 0;

	transfer_new(1, v, (const char *const[]){ "5.00" }, tr);
	snprintf(want, sizeof(want), "amount 2.00 is above what is left to reverse of transfer %s"
	    " (1.00)", tr[0]);
	ck_assert_int_eq(http_parallel(N, reversals_path(tr[0]), h, "{\"amount\":2.00}", r), 0);
	for (i = 0; i < N; i++) {
		if (r[i].status == 200)
			ok++;
		else
			assert_fail(&r[i], 400, want);
		http_free(&r[i]);
	}
	ck_assert_int_eq(ok, 2);
	ck_assert_str_eq(reversed_of(tr[0]), "400");
	ck_assert_int_eq(balance_of(v[0]), 100);
	assert_ledger_ok();
}
END_TEST

/* Case 6, all or nothing: the second reversal is refused, so the first is not made either. */
enum { R_ABOVE, R_UNKNOWN, R_MALFORMED, R_REPEATS, R_OTHERS, R_SHORT, R_FROZEN, R_FULL };
static const char *const refusals[] = { "above", "unknown", "malformed", "repeats", "others",
    "short", "frozen", "full" };

START_TEST(test_refund_reversals_refused)
{
	char sid[37], cust[16], v[2][16], tr[2][40], rid[40], id[40], path[128], want[256];
	char other_tr[40];
	const char *body = NULL;
	struct http_resp r;

	split(sid, cust, v, tr);
	other_transfer(other_tr);
	snprintf(path, sizeof(path), "%s", refunds_path(sid));
	switch (_i) {
	case R_ABOVE:
		body = split_body(tr[0], "3.00", tr[1], "5.00");
		snprintf(want, sizeof(want), "reverse_transfers[1].amount 5.00 is above what is left"
		    " to reverse of transfer %s (4.00)", tr[1]);
		break;
	case R_UNKNOWN:
	case R_MALFORMED:
	case R_OTHERS:
		body = split_body(tr[0], "", _i == R_UNKNOWN ? NO_TRANSFER : _i == R_OTHERS ?
		    other_tr : "x", "");
		snprintf(want, sizeof(want), "reverse_transfers[1].transfer_id: no such transfer");
		break;
	case R_REPEATS:
		body = split_body(tr[0], "1.00", tr[0], "2.00");
		snprintf(want, sizeof(want), "reverse_transfers[1].transfer_id repeats"
		    " reverse_transfers[0].transfer_id");
		break;
	case R_SHORT:
		vendor_spends(v[1], "300");
		body = split_body(tr[0], "", tr[1], "2.00");
		snprintf(want, sizeof(want), "reverse_transfers[1].amount 2.00 is above the vendor"
		    " account's available balance");
		break;
	case R_FROZEN:
		set_status(v[1], "frozen");
		body = split_body(tr[0], "", tr[1], "");
		snprintf(want, sizeof(want), "reverse_transfers[1].transfer_id: the vendor account is"
		    " frozen, and cannot be debited");
		break;
	case R_FULL:
		reversal_ok(tr[1], "{}", "4.00", NULL, id);
		body = split_body(tr[0], "", tr[1], "");
		snprintf(want, sizeof(want), "reverse_transfers[1].amount: transfer %s is reversed in"
		    " full; nothing is left to reverse", tr[1]);
		break;
	}
	assert_refused(shop.auth, path, body, 400, want);
	ck_assert_str_eq(reversed_of(tr[0]), "0");
	ck_assert_int_eq(balance_of(v[0]), 800);
	ck_assert_str_eq(db_value("SELECT status || ' ' || amount_refunded FROM payment_sessions"
	    " WHERE id = $1::uuid", sid), "paid 0");
	/* The same refund with the first reversal alone goes through. */
	snprintf(want, sizeof(want), "{\"reverse_transfers\":[{\"transfer_id\":\"%s\"}]}", tr[0]);
	refund_post(shop.auth, sid, want, &r);
	check_refund(refund_of(&r, "Refund succeeded."), sid, "20.00", NULL, 1);
	reversal_in(refund_of(&r, "Refund succeeded."), tr[0], "8.00");
	snprintf(rid, sizeof(rid), "%s", jstr(refund_of(&r, "Refund succeeded."), "id"));
	http_free(&r);
	ck_assert_int_eq(balance_of(v[0]), 0);
	ck_assert_str_eq(reversed_of(tr[0]), "800");
	assert_ledger_ok();
}
END_TEST

/* Case 7: transfer.reversed, one per reversal, also for those a refund makes. */
START_TEST(test_webhook)
{
	char sid[37], cust[16], v[2][16], tr[2][40], id[40], evt[64];
	struct json_object *payload, *data, *V, *R;
	struct http_resp r;
	int i;
	static const char *const reversed[] = { "3.00", "8.00" };
	static const char *const left[] = { "5.00", "0.00" };

	split(sid, cust, v, tr);
	reversal_ok(tr[0], "{\"amount\":3.00}", "3.00", NULL, id);
	refund_post(shop.auth, sid, split_body(tr[0], "", tr[1], "1.00"), &r);
	R = refund_of(&r, "Refund succeeded.");
	check_refund(R, sid, "20.00", "split", 2);
	for (i = 0; i < 2; i++) {
		V = i == 0 ? NULL : reversal_in(R, tr[0], "5.00");
		snprintf(evt, sizeof(evt), "%s", event_of("transfer.reversed",
		    i == 0 ? id : jstr(V, "id")));
		payload = receiver_event(evt, secret, "transfer.reversed", &data);
		ck_assert(matches(jstr(payload, "created_at"), ISO_UTC));
		ck_assert(json_object_object_get_ex(data, "reversal", &V));
		check_reversal(V, tr[0], i == 0 ? "3.00" : "5.00", i == 0 ? NULL : "split",
		    i == 0 ? NULL : jstr(R, "id"));
		ck_assert_str_eq(jstr(data, "transfer_id"), tr[0]);
		ck_assert_str_eq(jstr(data, "vendor_account_number"), v[0]);
		ck_assert_str_eq(jstr(data, "amount_reversed"), reversed[i]);
		ck_assert_str_eq(jstr(data, "amount_reversible"), left[i]);
		json_object_put(payload);
	}
	/* The refund's other reversal, and the refund itself. */
	snprintf(evt, sizeof(evt), "%s", event_of("transfer.reversed",
	    jstr(reversal_in(R, tr[1], "1.00"), "id")));
	payload = receiver_event(evt, secret, "transfer.reversed", &data);
	ck_assert_str_eq(jstr(data, "amount_reversible"), "3.00");
	json_object_put(payload);
	snprintf(evt, sizeof(evt), "%s", event_of("refund.succeeded", jstr(R, "id")));
	payload = receiver_event(evt, secret, "refund.succeeded", &data);
	ck_assert(json_object_object_get_ex(data, "refund", &V));
	ck_assert(json_object_equal(V, R));
	json_object_put(payload);
	http_free(&r);
}
END_TEST

static void
setup(void)
{
	new_merchant(&shop, "1234", "1000.00", true);
	new_merchant(&other, "1234", "100.00", true);
	merchant_webhook(&shop, secret);
	service_key_load(shop.auth);
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("reversal", "transfer reversals", 60, &t);

	tcase_add_test(t, test_reverse);
	tcase_add_test(t, test_above_left);
	tcase_add_test(t, test_vendor_short);
	tcase_add_test(t, test_vendor_frozen);
	tcase_add_test(t, test_not_found);
	tcase_add_loop_test(t, test_invalid, 0, NELEM(bad_bodies));
	tcase_add_test(t, test_valid_edges);
	tcase_add_test(t, test_refund_reversals);
	tcase_add_test(t, test_refund_net_zero);
	tcase_add_test(t, test_refund_same_vendor);
	tcase_add_test(t, test_idempotency);
	tcase_add_test(t, test_race);
	tcase_add_loop_test(t, test_refund_reversals_refused, 0, NELEM(refusals));
	tcase_add_test(t, test_webhook);
	return fixture_main(s, setup, service_key_free);
}
