/*
 * Integration tests of refunds against the real stack (tests/integration.sh): POST
 * /api/v1/payment/sessions/{id}/refunds and GET /api/v1/payment/refunds/{id}, the money
 * going back where it came from, the session's totals, every refusal (nothing moved), the
 * 404s and 401s, Idempotency-Key, and the refund.succeeded webhook. Transfer reversals, also
 * those a refund carries: check_reversal.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "checkout_form.h"
#include "fixture.h"
#include "http.h"
#include "outbox.h"
#include "receiver.h"
#include "refunds.h"
#include "transfers.h"

#define NO_SESSION "00000000-0000-4000-8000-000000000000"

/* Set up once in the parent before the cases run (they run forked and inherit it). */
static struct merchant shop;    /* settlement on, PIN 1234, webhooks to the stack's receiver */
static char secret[128];        /* ... signed with this */
static char vendor[16];

/* GETs session sid as auth into r, a 200 with amount_refunded and status. */
static void
get_session(const char *auth, const char *sid, const char *status, const char *refunded,
    struct http_resp *r)
{
	api("GET", auth, NULL, NULL, r, "/api/v1/payment/sessions/%s", sid);
	ck_assert_msg(r->status == 200, "%ld %s", r->status, r->body);
	ck_assert_str_eq(http_json_str(r, "status"), status);
	ck_assert_str_eq(http_json_str(r, "amount_refunded"), refunded);
}

/* The i-th refund (oldest first) of a session's GET reply, of n in all. */
static struct json_object *
session_refund(const struct http_resp *r, size_t i, size_t n)
{
	struct json_object *refunds;

	ck_assert(json_object_object_get_ex(r->json, "refunds", &refunds) &&
	    json_object_is_type(refunds, json_type_array));
	ck_assert_uint_eq(json_object_array_length(refunds), n);
	return json_object_array_get_idx(refunds, i);
}

/* Refunds body of sid as auth, which must succeed for amount: R's id into id[40]. */
static void
refund_ok(const char *auth, const char *sid, const char *body, const char *amount, char id[40])
{
	struct http_resp r;

	refund_post(auth, sid, body, &r);
	check_refund(refund_of(&r, "Refund succeeded."), sid, amount, NULL, 0);
	snprintf(id, 40, "%s", jstr(refund_of(&r, "Refund succeeded."), "id"));
	http_free(&r);
}

/* Session sid's stored status and amount_refunded, as "paid 300". */
static const char *
session_state(const char *sid)
{
	return db_value("SELECT status || ' ' || amount_refunded FROM payment_sessions WHERE"
	    " id = $1::uuid", sid);
}

/* Case 1: a wallet payment refunded in full, and everything that shows it. */
START_TEST(test_full_wallet)
{
	char cust[16], sid[37], rid[40], want[256];
	struct http_resp r, g;
	struct json_object *R;
	long long c0, m0;
	int txs;

	new_customer("50.00", cust);
	paid_session(shop.auth, "20.00", "order-full", cust, sid);
	c0 = balance_of(cust);
	m0 = balance_of(shop.acct);
	txs = atoi(db_value("SELECT count(*) FROM ledger_transactions", NULL));
	refund_post(shop.auth, sid, "{\"reason\":\"damaged\"}", &r);
	R = refund_of(&r, "Refund succeeded.");
	check_refund(R, sid, "20.00", "damaged", 0);
	snprintf(rid, sizeof(rid), "%s", jstr(R, "id"));
	ck_assert_str_eq(db_value("SELECT abs(extract(epoch FROM now() - $1::timestamptz)) < 60",
	    jstr(R, "created_at")), "t");
	/* The customer has it back, the merchant gave it: one ledger transaction of kind refund. */
	ck_assert_int_eq(balance_of(cust), c0 + 2000);
	ck_assert_int_eq(balance_of(shop.acct), m0 - 2000);
	ck_assert_int_eq(atoi(db_value("SELECT count(*) FROM ledger_transactions", NULL)), txs + 1);
	snprintf(want, sizeof(want), "refund %s %s:-2000,%s:2000", shop.id, shop.acct, cust);
	ck_assert_str_eq(ledger_of(rid), want);
	snprintf(want, sizeof(want), "%s %s 2000 AFN damaged succeeded", sid, shop.id);
	ck_assert_str_eq(db_value("SELECT session_id || ' ' || merchant_id || ' ' || amount ||"
	    " ' ' || currency || ' ' || reason || ' ' || status FROM refunds WHERE id = $1", rid), want);
	ck_assert_str_eq(session_state(sid), "refunded 2000");
	/* The session and the refund read back as the POST answered. */
	get_session(shop.auth, sid, "refunded", "20.00", &g);
	ck_assert_msg(json_object_equal(session_refund(&g, 0, 1), R), "%s", g.body);
	http_free(&g);
	api("GET", shop.auth, NULL, NULL, &g, "/api/v1/payment/refunds/%s", rid);
	ck_assert_msg(json_object_equal(refund_of(&g, "Refund found."), R), "%s", g.body);
	http_free(&g);
	http_free(&r);
	assert_ledger_ok();
}
END_TEST

/* Case 2: a test-card payment refunded in two steps, back to the funding account. */
START_TEST(test_partial_card)
{
	char sid[37], fund[16], first[40], second[40], want[128];
	struct http_resp g;
	long long f0, m0;

	paid_session(shop.auth, "10.00", "order-card", NULL, sid);
	snprintf(fund, sizeof(fund), "%s", funding_account());
	f0 = balance_of(fund);
	m0 = balance_of(shop.acct);
	refund_ok(shop.auth, sid, "{\"amount\": 3.00}", "3.00", first);
	ck_assert_str_eq(session_state(sid), "paid 300");
	ck_assert_int_eq(balance_of(fund), f0 + 300);
	ck_assert_int_eq(balance_of(shop.acct), m0 - 300);
	snprintf(want, sizeof(want), "refund %s %s:-300,%s:300", shop.id, shop.acct, fund);
	ck_assert_str_eq(ledger_of(first), want);
	get_session(shop.auth, sid, "paid", "3.00", &g);
	ck_assert_str_eq(jstr(session_refund(&g, 0, 1), "id"), first);
	http_free(&g);
	/* {} refunds the rest. */
	refund_ok(shop.auth, sid, "{}", "7.00", second);
	ck_assert_str_eq(session_state(sid), "refunded 1000");
	ck_assert_int_eq(balance_of(fund), f0 + 1000);
	ck_assert_int_eq(balance_of(shop.acct), m0 - 1000);
	get_session(shop.auth, sid, "refunded", "10.00", &g);
	ck_assert_str_eq(jstr(session_refund(&g, 0, 2), "id"), first);
	ck_assert_str_eq(jstr(session_refund(&g, 1, 2), "id"), second);
	http_free(&g);
	assert_ledger_ok();
}
END_TEST

static const char *const not_paid[] = { "open", "failed", "canceled", "expired" };

/* Case 3: only a paid session can be refunded; the open one, once paid, can. */
START_TEST(test_not_paid)
{
	char sid[37], cust[16], needle[128], rid[40];
	struct http_resp r;

	new_session(shop.auth, GOOD_BODY, sid);
	if (_i == 1) {
		pay_card(sid, "4000000000000002", &r);
		http_free(&r);
	} else if (_i == 2) {
		post_form(sid, "action=cancel", &r);
		http_free(&r);
	} else if (_i == 3) {
		ck_assert_ptr_nonnull(db_value("UPDATE payment_sessions SET created_at = now() -"
		    " interval '2 hours', expires_at = now() - interval '1 hour' WHERE id = $1::uuid"
		    " RETURNING 1", sid));
		/* The sweep stores it (expire_interval = 1): not while the footprints are taken. */
		wait_value("SELECT status FROM payment_sessions WHERE id = $1::uuid", sid, "expired",
		    15000);
	}
	ck_assert_str_eq(db_value("SELECT mp_session_status(status, expires_at) FROM"
	    " payment_sessions WHERE id = $1::uuid", sid), not_paid[_i]);
	snprintf(needle, sizeof(needle), "the payment session is %s, not paid: only a paid session"
	    " can be refunded", not_paid[_i]);
	assert_refused(shop.auth, refunds_path(sid), "{}", 400, needle);
	assert_refused(shop.auth, refunds_path(sid), "{\"amount\":1.00}", 400, needle);
	if (_i == 0) {
		new_customer("20.00", cust);
		pay_wallet(sid, cust, "1234", &r);
		ck_assert_int_eq(r.status, 303);
		http_free(&r);
		refund_ok(shop.auth, sid, "{}", "15.50", rid);
		ck_assert_int_eq(balance_of(cust), 2000);
	}
}
END_TEST

/* Case 3: more than is left, and nothing left at all. */
START_TEST(test_above_left)
{
	char sid[37], rid[40];

	paid_session(shop.auth, "10.00", "order-left", NULL, sid);
	assert_refused(shop.auth, refunds_path(sid), "{\"amount\":10.01}", 400,
	    "amount 10.01 is above what is left to refund (10.00)");
	refund_ok(shop.auth, sid, "{\"amount\":6.00}", "6.00", rid);
	assert_refused(shop.auth, refunds_path(sid), "{\"amount\":6.00}", 400,
	    "amount 6.00 is above what is left to refund (4.00)");
	ck_assert_str_eq(session_state(sid), "paid 600");
	refund_ok(shop.auth, sid, "{\"amount\":4.00}", "4.00", rid);
	ck_assert_str_eq(session_state(sid), "refunded 1000");
	assert_refused(shop.auth, refunds_path(sid), "{}", 400,
	    "amount: the payment session is refunded in full; nothing is left to refund");
	assert_refused(shop.auth, refunds_path(sid), "{\"amount\":0.01}", 400,
	    "amount: the payment session is refunded in full; nothing is left to refund");
	assert_ledger_ok();
}
END_TEST

/* Bodies refused before anything is looked up: body, then reps copies of fill, then tail. */
static const struct bad {
	const char *body, *fill;
	int reps;
	const char *tail, *needle;
} bad_bodies[] = {
	{ "{\"amount\":0}", NULL, 0, "", "amount must be greater than 0" },
	{ "{\"amount\":0.00}", NULL, 0, "", "amount must be greater than 0" },
	{ "{\"amount\":-1}", NULL, 0, "", "amount must not be negative" },
	{ "{\"amount\":1.001}", NULL, 0, "", "amount must have at most two decimal places" },
	{ "{\"amount\":\"5.00\"}", NULL, 0, "", "amount must be a number" },
	{ "{\"amount\":1e3}", NULL, 0, "", "amount must be a plain decimal number" },
	{ "{\"amount\":true}", NULL, 0, "", "amount must be a number" },
	{ "{\"amount\":1000000000.00}", NULL, 0, "", "amount is above the maximum amount" },
	{ "{\"reason\":\"", "a", 501, "\"}", "reason must be at most 500 characters" },
	{ "{\"reason\":\"", "\xc3\xa9", 501, "\"}", "reason must be at most 500 characters" },
	{ "{\"reason\":42}", NULL, 0, "", "reason must be a string" },
	{ "{\"amount\":1,\"currency\":\"AFN\"}", NULL, 0, "", "currency is not a known field" },
	{ "{\"refund\":{}}", NULL, 0, "", "refund is not a known field" },
	{ "[]", NULL, 0, "", "request body must be a JSON object" },
	{ "{\"amount\":1", NULL, 0, "", "not valid JSON" },
	{ "{\"reverse_transfers\":[]}", NULL, 0, "", "reverse_transfers" },
	{ "{\"reverse_transfers\":{}}", NULL, 0, "", "reverse_transfers must be an array" },
	{ "{\"reverse_transfers\":[", "{\"transfer_id\":\"tr_x\"},", 16,
	  "{\"transfer_id\":\"tr_y\"}]}", "reverse_transfers must have at most 16 entries" },
	{ "{\"reverse_transfers\":[{\"amount\":1}]}", NULL, 0, "",
	  "reverse_transfers[0].transfer_id is required" },
	{ "{\"reverse_transfers\":[{\"transfer_id\":\"tr_x\",\"amount\":0}]}", NULL, 0, "",
	  "reverse_transfers[0].amount must be greater than 0" },
	{ "{\"reverse_transfers\":[{\"transfer_id\":\"tr_x\",\"vendor\":1}]}", NULL, 0, "",
	  "reverse_transfers[0].vendor is not a known field" },
};

START_TEST(test_invalid)
{
	const struct bad *b = &bad_bodies[_i];
	char body[2048], sid[37];
	int i;

	paid_session(shop.auth, "10.00", "order-invalid", NULL, sid);
	snprintf(body, sizeof(body), "%s", b->body);
	for (i = 0; i < b->reps; i++)
		strcat(body, b->fill);
	strcat(body, b->tail);
	assert_refused(shop.auth, refunds_path(sid), body, 400, b->needle);
	ck_assert_str_eq(session_state(sid), "paid 0");
}
END_TEST

/* The positive side of validation: the edges that are allowed. */
START_TEST(test_valid_edges)
{
	char sid[37], rid[40], reason[1001] = "", *body;
	struct http_resp r;
	int i;

	paid_session(shop.auth, "20.00", "order-edges", NULL, sid);
	refund_ok(shop.auth, sid, "{\"amount\":1}", "1.00", rid);
	refund_ok(shop.auth, sid, "{\"amount\":0.01,\"reason\":null}", "0.01", rid);
	/* 500 characters, 1000 bytes: the limit counts characters. */
	for (i = 0; i < 500; i++)
		strcat(reason, "\xc3\xa9");
	ck_assert_int_ge(asprintf(&body, "{\"amount\":2.5,\"reason\":\"%s\"}", reason), 0);
	refund_post(shop.auth, sid, body, &r);
	check_refund(refund_of(&r, "Refund succeeded."), sid, "2.50", reason, 0);
	http_free(&r);
	free(body);
	ck_assert_str_eq(db_value("SELECT char_length(reason) || ' ' || octet_length(reason) FROM"
	    " refunds WHERE session_id = $1::uuid AND amount = 250", sid), "500 1000");
	refund_ok(shop.auth, sid, "{\"amount\":null}", "16.49", rid);
	ck_assert_str_eq(session_state(sid), "refunded 2000");
}
END_TEST

/* The merchant's settlement account must cover the refund; exactly its balance does. */
START_TEST(test_merchant_short)
{
	struct merchant m;
	char cust[16], sid[37], to[1][16], tr[1][40], rid[40];

	new_merchant(&m, "1234", "1.00", true);
	new_customer("20.00", cust);
	paid_session(m.auth, "10.00", "order-short", cust, sid);
	strcpy(to[0], vendor);
	transfer_ok(&m, 1, to, (const char *const[]){ "9.00" }, tr);
	ck_assert_int_eq(balance_of(m.acct), 200);
	assert_refused(m.auth, refunds_path(sid), "{\"amount\":5.00}", 400,
	    "amount 5.00: the merchant's available balance is 2.00, short by 3.00");
	assert_refused(m.auth, refunds_path(sid), "{}", 400,
	    "amount 10.00: the merchant's available balance is 2.00, short by 8.00");
	refund_ok(m.auth, sid, "{\"amount\":2.00}", "2.00", rid);
	ck_assert_int_eq(balance_of(m.acct), 0);
	ck_assert_int_eq(balance_of(cust), 1200);
	assert_refused(m.auth, refunds_path(sid), "{\"amount\":0.01}", 400,
	    "amount 0.01: the merchant's available balance is 0.00, short by 0.01");
	assert_ledger_ok();
}
END_TEST

/*
 * A frozen wallet takes no refund; active again, it does. A closed one (spent to zero
 * first: only such a wallet closes, for good) takes none either.
 */
START_TEST(test_wallet_frozen)
{
	char cust[16], sid[37], rid[40], spent[16], sid2[37];

	new_customer("20.00", cust);
	paid_session(shop.auth, "10.00", "order-frozen", cust, sid);
	ck_assert_ptr_nonnull(db_value("UPDATE accounts SET status = 'frozen' WHERE"
	    " account_number = $1 RETURNING 1", cust));
	assert_refused(shop.auth, refunds_path(sid), "{}", 400,
	    "the customer's wallet to refund is frozen: nothing can be refunded to it");
	new_customer("10.00", spent);
	paid_session(shop.auth, "10.00", "order-closed", spent, sid2);
	ck_assert_ptr_nonnull(db_value("UPDATE accounts SET status = 'closed' WHERE"
	    " account_number = $1 RETURNING 1", spent));
	assert_refused(shop.auth, refunds_path(sid2), "{\"amount\":1.00}", 400,
	    "the customer's wallet to refund is closed: nothing can be refunded to it");
	ck_assert_ptr_nonnull(db_value("UPDATE accounts SET status = 'active' WHERE"
	    " account_number = $1 RETURNING 1", cust));
	refund_ok(shop.auth, sid, "{}", "10.00", rid);
	ck_assert_int_eq(balance_of(cust), 2000);
	assert_ledger_ok();
}
END_TEST

/* Case 4: unknown, malformed and another merchant's ids look all alike. */
START_TEST(test_not_found)
{
	static const char *const bad_ids[] = { NO_SESSION, "not-a-uuid", "'%3B--",
	    "00000000-0000-4000-8000-00000000000" };
	static const char *const bad_refunds[] = { "re_00000000000000000000000000000000",
	    "re_xyz", "x", "'%3B--" };
	char cust[16], bsid[37], rid[40];
	struct http_resp r, u;
	size_t i;

	for (i = 0; i < NELEM(bad_ids); i++)
		assert_refused(shop.auth, refunds_path(bad_ids[i]), "{}", 404,
		    "payment session not found");
	/* Merchant B's paid session: shop cannot refund it, B can. */
	new_customer("20.00", cust);
	paid_session(fx.auth_b, "5.00", "order-b", cust, bsid);
	assert_refused(shop.auth, refunds_path(bsid), "{}", 404, "payment session not found");
	assert_refused(shop.auth, refunds_path(bsid), "{\"amount\":1.00}", 404,
	    "payment session not found");
	/* An invalid body is refused alike for B's session and for none: nothing told apart. */
	api("POST", shop.auth, NULL, "{\"amount\":0}", &r, "%s", refunds_path(bsid));
	api("POST", shop.auth, NULL, "{\"amount\":0}", &u, "%s", refunds_path(NO_SESSION));
	ck_assert_int_eq(r.status, u.status);
	ck_assert_str_eq(r.body, u.body);
	http_free(&r);
	http_free(&u);
	refund_ok(fx.auth_b, bsid, "{}", "5.00", rid);
	/* B's refund: shop cannot read it, B can. */
	api("GET", shop.auth, NULL, NULL, &r, "/api/v1/payment/refunds/%s", rid);
	assert_fail(&r, 404, "refund not found");
	http_free(&r);
	for (i = 0; i < NELEM(bad_refunds); i++) {
		api("GET", fx.auth_b, NULL, NULL, &r, "/api/v1/payment/refunds/%s", bad_refunds[i]);
		assert_fail(&r, 404, "refund not found");
		http_free(&r);
	}
	api("GET", fx.auth_b, NULL, NULL, &r, "/api/v1/payment/refunds/%s", rid);
	check_refund(refund_of(&r, "Refund found."), bsid, "5.00", NULL, 0);
	http_free(&r);
}
END_TEST

/* Authorization lines that get a 401 on all three endpoints, before anything else. */
static const char *
bad_auth(int i)
{
	static char buf[512];

	switch (i) {
	case 0: return NULL;
	case 1: return "Authorization: API-KEY mp_test_0000000000000000000000000000";
	case 2: snprintf(buf, sizeof(buf), "Authorization: API-KEY %s", fx.key_revoked); return buf;
	case 3: snprintf(buf, sizeof(buf), "Authorization: API-KEY %s", fx.key_live); return buf;
	default: snprintf(buf, sizeof(buf), "Authorization: Bearer %s", fx.key_a); return buf;
	}
}

/* A 401 with exactly detail, and nothing else. */
static void
assert_denied(const struct http_resp *r, const char *detail)
{
	struct json_object *v;

	ck_assert_msg(r->status == 401, "%ld %s", r->status, r->body);
	ck_assert_str_eq(http_json_str(r, "detail"), detail);
	ck_assert(!json_object_object_get_ex(r->json, "success", &v));
}

START_TEST(test_auth_denied)
{
	char sid[37], rid[40], to[1][16], tr[1][40], before[FOOTPRINT_LEN];
	const char *auth = bad_auth(_i);
	struct http_resp r;

	/* Real ids, which shop's key reaches. */
	paid_session(shop.auth, "5.00", "order-auth", NULL, sid);
	refund_ok(shop.auth, sid, "{\"amount\":1.00}", "1.00", rid);
	strcpy(to[0], vendor);
	transfer_ok(&shop, 1, to, (const char *const[]){ "1.00" }, tr);
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	refund_post(auth, sid, "{}", &r);
	assert_denied(&r, REFUND_DENY);
	http_free(&r);
	refund_post(auth, sid, "{\"amount\":0}", &r);   /* auth comes before the body */
	assert_denied(&r, REFUND_DENY);
	http_free(&r);
	api("GET", auth, NULL, NULL, &r, "/api/v1/payment/refunds/%s", rid);
	assert_denied(&r, REFUND_DENY);
	http_free(&r);
	reversal_post(auth, tr[0], "{}", &r);
	assert_denied(&r, TRANSFER_DENY);
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
}
END_TEST

/* Idempotency-Key: a replay answers the first reply and refunds nothing more. */
START_TEST(test_idempotency)
{
	char sid[37], path[128];
	struct http_resp r;

	paid_session(shop.auth, "10.00", "order-idem", NULL, sid);
	snprintf(path, sizeof(path), "%s", refunds_path(sid));
	assert_idempotent(shop.id, shop.auth, path, "refund", "{\"amount\":2.00}",
	    "{\"amount\":3.00}", &r);
	check_refund(refund_of(&r, "Refund succeeded."), sid, "2.00", NULL, 0);
	http_free(&r);
	ck_assert_str_eq(session_state(sid), "paid 200");
	ck_assert_str_eq(db_value("SELECT count(*) FROM refunds WHERE session_id = $1::uuid", sid),
	    "1");
}
END_TEST

/* Refunds at once: under the session's row lock exactly what is left goes through. */
START_TEST(test_race)
{
	enum { N = 5 };
	const char *h[] = { JSON_CT, shop.auth, NULL };
	char sid[37];
	struct http_resp r[N];
	int i, ok = 0;

	paid_session(shop.auth, "10.00", "order-race", NULL, sid);
	ck_assert_int_eq(http_parallel(N, refunds_path(sid), h, "{\"amount\":4.00}", r), 0);
	for (i = 0; i < N; i++) {
		if (r[i].status == 200)
			ok++;
		else
			assert_fail(&r[i], 400, "amount 4.00 is above what is left to refund (2.00)");
		http_free(&r[i]);
	}
	ck_assert_int_eq(ok, 2);
	ck_assert_str_eq(session_state(sid), "paid 800");
	assert_ledger_ok();
}
END_TEST

/* Case 7: refund.succeeded reaches the merchant, signed, with the contract's data. */
START_TEST(test_webhook)
{
	char cust[16], sid[37], rid[40];
	struct json_object *payload, *data, *v;
	struct http_resp r;
	int i;
	static const char *const amounts[] = { "8.00", "2.00" }, *const left[] = { "2.00", "0.00" };
	static const char *const total[] = { "8.00", "10.00" };

	new_customer("20.00", cust);
	paid_session(shop.auth, "10.00", "order-hook", cust, sid);
	for (i = 0; i < 2; i++) {
		refund_post(shop.auth, sid, i == 0 ? "{\"amount\":8.00,\"reason\":\"late\"}" : "{}",
		    &r);
		check_refund(refund_of(&r, "Refund succeeded."), sid, amounts[i],
		    i == 0 ? "late" : NULL, 0);
		snprintf(rid, sizeof(rid), "%s", jstr(refund_of(&r, "Refund succeeded."), "id"));
		payload = receiver_event(event_of("refund.succeeded", rid), secret, "refund.succeeded",
		    &data);
		ck_assert(matches(jstr(payload, "created_at"), ISO_UTC));
		ck_assert(json_object_object_get_ex(data, "refund", &v));
		ck_assert_msg(json_object_equal(v, refund_of(&r, "Refund succeeded.")), "%s",
		    json_object_to_json_string(data));
		ck_assert_str_eq(jstr(data, "session_id"), sid);
		ck_assert_str_eq(jstr(data, "user_id"), "order-hook");
		ck_assert_str_eq(jstr(data, "amount_refunded"), total[i]);
		ck_assert_str_eq(jstr(data, "amount_refundable"), left[i]);
		json_object_put(payload);
		http_free(&r);
	}
}
END_TEST

static void
setup(void)
{
	new_merchant(&shop, "1234", "1000.00", true);
	merchant_webhook(&shop, secret);
	new_account(vendor, "--kind vendor");
	service_key_load(shop.auth);
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("refund", "refunds", 60, &t);

	tcase_add_test(t, test_full_wallet);
	tcase_add_test(t, test_partial_card);
	tcase_add_loop_test(t, test_not_paid, 0, NELEM(not_paid));
	tcase_add_test(t, test_above_left);
	tcase_add_loop_test(t, test_invalid, 0, NELEM(bad_bodies));
	tcase_add_test(t, test_valid_edges);
	tcase_add_test(t, test_merchant_short);
	tcase_add_test(t, test_wallet_frozen);
	tcase_add_test(t, test_not_found);
	tcase_add_loop_test(t, test_auth_denied, 0, 5);
	tcase_add_test(t, test_idempotency);
	tcase_add_test(t, test_race);
	tcase_add_test(t, test_webhook);
	return fixture_main(s, setup, service_key_free);
}
