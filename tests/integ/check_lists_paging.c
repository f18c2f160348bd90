/*
 * Paging while items arrive (marketpay-api(7), LISTS), for GET refunds, transfers,
 * balance-transactions and events (check_lists has the sessions): each walked page by page with
 * starting_after and with ending_before while new items of that collection are created,
 * between the page requests and at the same time as them. Every walk must show each item of
 * its range once, in the database's own order: an OFFSET, or a cursor compared wrongly,
 * would show an item twice or leave one out as soon as one arrives.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "crypto.h"
#include "fixture.h"
#include "lists.h"
#include "pin.h"
#include "refunds.h"
#include "transfers.h"

#define LIMIT 3      /* a page; more than a round of arrivals adds, so a walk ends */
#define START 4      /* rounds of arrivals before a walk, so that it has pages */

/*
 * A collection: its list, and its rows as the database has them (the API's id, the owner
 * as $1, created_at, and k, the id in its own type, by which ties are ordered).
 */
static const struct coll {
	const char *list;
	const char *rows;
	bool refunds, transfers;   /* what a round of arrivals makes */
} colls[] = {
	{ "refunds", "SELECT id AS api_id, merchant_id::text AS owner, created_at, id AS k"
	  " FROM refunds", true, false },
	/* Two vendors a request: the request's transfers share created_at, ordered by id. */
	{ "transfers", "SELECT id AS api_id, merchant_id::text AS owner, created_at, id AS k"
	  " FROM transfers", false, true },
	{ "balance-transactions", "SELECT 'btx_' || e.id AS api_id, a.merchant_id::text AS owner,"
	  " e.created_at, e.id AS k FROM ledger_entries e JOIN accounts a ON a.id = e.account_id"
	  " WHERE a.kind = 'merchant'", true, true },
	/* A refund's refund.succeeded, a request's transfer.succeeded. */
	{ "events", "SELECT id AS api_id, merchant_id::text AS owner, created_at, id AS k"
	  " FROM webhook_events", true, true },
};

/* The case's merchant, the session its refunds take a cent of each, two vendors. */
static struct merchant shop;
static char sid[37], vendor[2][16];

/* A round of arrivals of collection arg: a refund, a transfer to both vendors, or both. */
static int
arrivals(void *arg, struct http_req *reqs)
{
	static const char *const amounts[] = { "0.01", "0.02" };
	static const char *h[] = { JSON_CT, shop.auth, NULL };
	static char path[128], body[2048];
	const struct coll *c = arg;
	int n = 0;

	if (c->refunds) {
		snprintf(path, sizeof(path), "%s", refunds_path(sid));
		reqs[n++] = (struct http_req){ "POST", path, h, "{\"amount\":0.01}" };
	}
	if (c->transfers) {
		snprintf(body, sizeof(body), "%s", transfer_body(pin_ok(), 2, vendor, amounts));
		reqs[n++] = (struct http_req){ "POST", SEND, h, body };
	}
	return n;
}

/* A round of arrivals between two pages, each answered before the next page is asked. */
static void
arrive(void *arg)
{
	struct http_req reqs[2];
	struct http_resp r;
	int i, n = arrivals(arg, reqs);

	for (i = 0; i < n; i++) {
		ck_assert_int_eq(http_do(reqs[i].method, reqs[i].path, reqs[i].headers,
		    reqs[i].body, -1, &r), 0);
		ck_assert_msg(r.status == 200, "%s: %ld %s", reqs[i].path, r.status, r.body);
		http_free(&r);
	}
}

/*
 * The database's ids of shop's items of c, newest first (by created_at, then id), from upto
 * (itself included; NULL: the newest) down to after (itself left out; NULL: the oldest).
 */
static const char *
db_ids(const struct coll *c, const char *upto, const char *after)
{
	const char *p[3] = { shop.id, upto, after };
	char sql[2048];

	snprintf(sql, sizeof(sql), "SELECT coalesce(string_agg(api_id, ' ' ORDER BY created_at"
	    " DESC, k DESC), '') FROM (%1$s) x WHERE owner = $1 AND ($2::text IS NULL OR"
	    " (created_at, k) <= (SELECT created_at, k FROM (%1$s) y WHERE api_id = $2)) AND"
	    " ($3::text IS NULL OR (created_at, k) > (SELECT created_at, k FROM (%1$s) z"
	    " WHERE api_id = $3))", c->rows);
	return db_valuev(sql, 3, p);
}

/* The number of ids in a space-separated list. */
static int
count(const char *ids)
{
	int n = ids[0] != '\0';

	for (; *ids != '\0'; ids++)
		n += *ids == ' ';
	return n;
}

/* A walk's ids are want's (the database's): else where they part, briefly. */
static void
assert_ids(const char *what, const char *got, const char *want)
{
	size_t i = 0, at = 0;

	ck_assert_ptr_nonnull(want);
	for (; got[i] != '\0' && got[i] == want[i]; i++)
		if (got[i] == ' ')
			at = i + 1;
	ck_assert_msg(got[i] == want[i], "%s: item %d of %d (the database has %d) is %.*s, "
	    "not %.*s", what, count(got) - count(got + at) + 1, count(got), count(want),
	    (int)strcspn(got + at, " "), got + at, (int)strcspn(want + at, " "), want + at);
}

/* The first id of a space-separated list, into id[64]. */
static char *
first_of(const char *ids, char id[64])
{
	snprintf(id, 64, "%.*s", (int)strcspn(ids, " "), ids);
	return id;
}

/*
 * Walks c forward from its newest item and backward from its oldest while items of it
 * arrive (racing: with each page's request; else between the pages). Each walk must be the
 * database's range, every item once in order: the forward one down from its first item,
 * the backward one up to its last (the newest: every arrival but those racing the last
 * page).
 */
static void
walk_both(const struct coll *c, bool racing)
{
	char first[64], oldest[64], secret[128], *fwd;
	const char *back, *paid;
	int i, had;

	/* A merchant of its own: the walks go through all its items. */
	new_merchant(&shop, "1234", "100.00", true);
	/* Its events go to the stack's receiver: undeliverable ones would keep the outbox busy
	 * with retries for the suites after this one. */
	merchant_webhook(&shop, secret);
	new_account(vendor[0], "--kind vendor");
	new_account(vendor[1], "--kind vendor");
	new_session(shop.auth, "{\"items\":[{\"id\":\"a\",\"name\":\"Crate\",\"price\":50}]}",
	    sid);
	paid = db_value("SELECT outcome FROM mp_pay_test_card($1::uuid, 'visa', '4242', NULL)",
	    sid);
	ck_assert_str_eq(paid, "paid");
	for (i = 0; i < START; i++)
		arrive((void *)c);
	fwd = strdup(racing ? list_walk_racing(shop.auth, c->list, "id", LIMIT, NULL, arrivals,
	    (void *)c) : list_walk(shop.auth, c->list, "id", LIMIT, NULL, arrive, (void *)c));
	ck_assert_int_ge(count(fwd), START);
	first_of(fwd, first);
	assert_ids("starting_after", fwd, db_ids(c, first, NULL));
	/* Items did arrive while it walked (newer than where it began). */
	ck_assert_int_gt(count(db_ids(c, NULL, first)), 0);
	snprintf(oldest, sizeof(oldest), "%s", strrchr(fwd, ' ') + 1);
	free(fwd);

	had = count(db_ids(c, NULL, oldest));
	back = racing ? list_walk_racing(shop.auth, c->list, "id", LIMIT, oldest, arrivals,
	    (void *)c) : list_walk(shop.auth, c->list, "id", LIMIT, oldest, arrive, (void *)c);
	assert_ids("ending_before", back, db_ids(c, racing ? first_of(back, first) : NULL,
	    oldest));
	/* It showed what arrived while it walked. */
	ck_assert_int_gt(count(back), had);
}

/* Items created between the page requests. */
START_TEST(test_paging_while_created)
{
	walk_both(&colls[_i], false);
}
END_TEST

/* Items created at the same time as the page requests (curl multi). */
START_TEST(test_paging_concurrent)
{
	walk_both(&colls[_i], true);
}
END_TEST

/*
 * A payment whose transaction began before a refund of the same merchant and ended after it
 * (held open while the refund was made): its event became visible after the refund's, so it
 * is placed after it, where a merchant polling GET events with ending_before (the newest
 * event it has: the refund's) finds it. Placed at its transaction's start, it would sit
 * behind that cursor, on no page the merchant asks for again.
 */
START_TEST(test_event_recorded_late)
{
	static const char *h[] = { JSON_CT, NULL, NULL };
	const char *p[1], *p2[2];
	char late[37], state[6], paid_evt[64], refund_evt[64];
	struct http_resp r;
	PGconn *held;

	new_merchant(&shop, "1234", "100.00", true);
	h[1] = shop.auth;
	new_session(shop.auth, "{\"items\":[{\"id\":\"a\",\"name\":\"Crate\",\"price\":50}]}",
	    sid);
	new_session(shop.auth, "{\"items\":[{\"id\":\"b\",\"name\":\"Lid\",\"price\":5}]}",
	    late);
	ck_assert_str_eq(db_value("SELECT outcome FROM mp_pay_test_card($1::uuid, 'visa', '4242',"
	    " NULL)", sid), "paid");

	held = db_hold("SELECT now()", 0, NULL);
	ck_assert_int_eq(http_do("POST", refunds_path(sid), h, "{\"amount\":0.01}", -1, &r), 0);
	ck_assert_msg(r.status == 200, "refund: %ld %s", r.status, r.body);
	http_free(&r);
	p[0] = late;
	ck_assert_str_eq(db_state(held, "SELECT outcome FROM mp_pay_test_card($1::uuid, 'visa',"
	    " '4242', NULL)", 1, p, state), "00000");
	db_release(held);

	snprintf(refund_evt, sizeof(refund_evt), "%s", db_value("SELECT id FROM webhook_events"
	    " WHERE merchant_id = $1 AND type = 'refund.succeeded'", shop.id));
	p2[0] = shop.id;
	p2[1] = late;
	snprintf(paid_evt, sizeof(paid_evt), "%s", db_valuev("SELECT id FROM webhook_events"
	    " WHERE merchant_id = $1 AND type = 'payment.succeeded' AND body::json->'data'->>"
	    "'session_id' = $2", 2, p2));
	list_expect(shop.auth, "id", paid_evt, "events?ending_before=%s", refund_evt);
}
END_TEST

/*
 * The same for a transfer: one whose transaction began before another transfer of the
 * merchant and was recorded after it (held open meanwhile) is listed ending_before the
 * other, where it became visible, not behind it.
 */
START_TEST(test_transfer_recorded_late)
{
	static const char *const amounts[] = { "1.00" };
	static const char *h[] = { JSON_CT, NULL, NULL };
	char pepper[512], owner[64], digest[PIN_DIGEST_LEN], legacy[PIN_DIGEST_LEN], state[6];
	char first[64], late[64];
	const char *p[3];
	struct http_resp r;
	PGconn *held;

	new_merchant(&shop, "1234", "100.00", true);
	new_account(vendor[0], "--kind vendor");
	h[1] = shop.auth;
	snprintf(pepper, sizeof(pepper), "%s/pin-pepper", getenv("MARKETPAY_STACK_DIR"));
	snprintf(owner, sizeof(owner), "merchant:%s", shop.id);
	ck_assert_int_eq(pin_digest(pepper, owner, "1234", digest, legacy), 0);

	held = db_hold("SELECT now()", 0, NULL);
	ck_assert_int_eq(http_do("POST", SEND, h, transfer_body(pin_ok(), 1, vendor, amounts), -1,
	    &r), 0);
	ck_assert_msg(r.status == 200, "transfer: %ld %s", r.status, r.body);
	http_free(&r);
	p[0] = shop.id;
	p[1] = digest;
	p[2] = vendor[0];
	/* Any outcome but ok is cast to a number, which fails the statement, naming it. */
	ck_assert_str_eq(db_state(held, "SELECT CASE outcome WHEN 'ok' THEN 1 ELSE outcome::int"
	    " END FROM mp_transfer_send($1::bigint, $2::bytea, NULL, extract(epoch FROM"
	    " now())::bigint, 'held-transfer-0001', ARRAY[$3], ARRAY[100::bigint], 'UTC')", 3, p,
	    state), "00000");
	db_release(held);

	/* The request's transfer was posted first. */
	snprintf(first, sizeof(first), "%s", db_value("SELECT id FROM transfers WHERE merchant_id"
	    " = $1::bigint ORDER BY ledger_transaction_id LIMIT 1", shop.id));
	snprintf(late, sizeof(late), "%s", db_value("SELECT id FROM transfers WHERE merchant_id ="
	    " $1::bigint ORDER BY ledger_transaction_id DESC LIMIT 1", shop.id));
	list_expect(shop.auth, "id", late, "transfers?ending_before=%s", first);
	crypto_wipe(legacy, sizeof(legacy));
	crypto_wipe(digest, sizeof(digest));
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("lists_paging", "paging", 120, &t);

	tcase_add_loop_test(t, test_paging_while_created, 0, NELEM(colls));
	tcase_add_loop_test(t, test_paging_concurrent, 0, NELEM(colls));
	tcase_add_test(t, test_event_recorded_late);
	tcase_add_test(t, test_transfer_recorded_late);
	return fixture_main(s, service_key_setup, service_key_free);
}
