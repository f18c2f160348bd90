/*
 * What the database itself keeps of refunds and transfer reversals, whoever writes
 * (sql/009_refunds.sql), against the stack's database as its owner: rows that would take
 * more than a session's (transfer's) amount back are refused with check_violation, also
 * when each alone is within it; the running totals cannot be set outside their bounds;
 * refunds and reversals are append-only. Each refusal is matched by its SQLSTATE beside a
 * statement of the same shape that the database accepts. What the workers' role may not
 * do: check_intents.c; the totals under concurrent requests: check_refund_race.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <libpq-fe.h>

#include "checkout_form.h"
#include "fixture.h"
#include "http.h"
#include "refunds.h"
#include "transfers.h"

/*
 * Made once before the cases (an unchecked fixture: they run forked and inherit it): a
 * merchant's session of 10.00 paid and refunded 2.00 with 3.00 of its transfer of 10.00 (so
 * both tables hold a row), and an open session of it.
 */
static struct merchant shop;
static char paid[37], open_[37], transfer[40], vendor[16];

/* One row of refunds ($2 a session) or transfer_reversals ($2 a transfer) of $3 minor units
 * for merchant $1, with a ledger transaction of its own (no entries: never committed). */
static const char *const insert_row[] = {
	"WITH t AS (INSERT INTO ledger_transactions (kind, merchant_id) VALUES ('refund',"
	" $1::bigint) RETURNING id) INSERT INTO refunds (id, session_id, merchant_id,"
	" ledger_transaction_id, amount, currency) SELECT 're_' || md5(random()::text), $2::uuid,"
	" $1::bigint, t.id, $3::bigint, 'AFN' FROM t",
	"WITH t AS (INSERT INTO ledger_transactions (kind, merchant_id) VALUES ('reversal',"
	" $1::bigint) RETURNING id) INSERT INTO transfer_reversals (id, transfer_id, merchant_id,"
	" ledger_transaction_id, amount, currency) SELECT 'trr_' || md5(random()::text), $2,"
	" $1::bigint, t.id, $3::bigint, 'AFN' FROM t",
};

/* The running total that insert_row[i] adds to: $1 the session (transfer). */
static const char *const total_of[] = {
	"SELECT amount_refunded FROM payment_sessions WHERE id = $1::uuid",
	"SELECT amount_reversed FROM transfers WHERE id = $1",
};

/* The refunds' and reversals' rows, sums and totals of the fixture, as one string. */
static const char *
state_of_refunds(void)
{
	const char *p[2] = { paid, transfer };

	return db_valuev("SELECT (SELECT count(*) || ':' || sum(amount) FROM refunds WHERE"
	    " session_id = $1::uuid) || '/' || (SELECT count(*) || ':' || sum(amount) FROM"
	    " transfer_reversals WHERE transfer_id = $2) || '/' || (SELECT amount_refunded || ':' ||"
	    " status FROM payment_sessions WHERE id = $1::uuid) || '/' || (SELECT amount_reversed"
	    " FROM transfers WHERE id = $2)", 2, p);
}

/*
 * As the owner, in one transaction that is rolled back: rows of 6.00 and then 6.00 of the
 * same session (_i 0; transfer, _i 1) of 10.00, which has 2.00 (3.00) taken back already.
 * The first is stored and counted (the control), the second is check_violation: the sum
 * would pass the amount, though it alone would not.
 */
START_TEST(test_rows_sum_within_amount)
{
	const char *target = _i == 0 ? paid : transfer, *p[3] = { shop.id, target, "600" };
	const char *taken = _i == 0 ? "200" : "300";
	char before[256], st[6];
	PGconn *c = db_connect_as(NULL);
	PGresult *r;

	snprintf(before, sizeof(before), "%s", state_of_refunds());
	ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
	ck_assert_str_eq(db_state(c, "BEGIN", 0, NULL, st), "00000");
	ck_assert_str_eq(db_state(c, insert_row[_i], 3, p, st), "00000");
	r = PQexecParams(c, total_of[_i], 1, NULL, &target, NULL, NULL, 0);
	ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
	ck_assert_int_eq(atoi(PQgetvalue(r, 0, 0)), atoi(taken) + 600);
	PQclear(r);
	ck_assert_str_eq(db_state(c, insert_row[_i], 3, p, st), "23514");
	ck_assert_str_eq(db_state(c, "ROLLBACK", 0, NULL, st), "00000");
	PQfinish(c);
	ck_assert_str_eq(state_of_refunds(), before);
}
END_TEST

/*
 * Single rows the owner cannot insert either (check_violation): above what is left alone,
 * the whole amount again, for a session that is not paid, for another merchant's session or
 * transfer. Each in a transaction of its own that fails, so nothing stays.
 */
static const struct {
	int table;              /* insert_row[] */
	const char *merchant;   /* NULL: the shop */
	const char **target;
	const char *amount;
} bad_rows[] = {
	{ 0, NULL, (const char *[]){ paid }, "801" },
	{ 0, NULL, (const char *[]){ paid }, "1000" },
	{ 0, NULL, (const char *[]){ open_ }, "100" },
	{ 0, fx.merchant_b, (const char *[]){ paid }, "100" },
	{ 1, NULL, (const char *[]){ transfer }, "701" },
	{ 1, fx.merchant_b, (const char *[]){ transfer }, "100" },
};

START_TEST(test_bad_row_refused)
{
	const char *p[3] = { bad_rows[_i].merchant ? bad_rows[_i].merchant : shop.id,
	    *bad_rows[_i].target, bad_rows[_i].amount };
	char before[256], st[6];
	PGconn *c = db_connect_as(NULL);

	snprintf(before, sizeof(before), "%s", state_of_refunds());
	ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
	ck_assert_str_eq(db_state(c, insert_row[bad_rows[_i].table], 3, p, st), "23514");
	PQfinish(c);
	ck_assert_str_eq(state_of_refunds(), before);
	assert_ledger_ok();
}
END_TEST

/*
 * What the owner may not change (the SQLSTATE it gets), beside statements of the same shape
 * it may run (00000). $1: the paid session (S), the transfer (T) or the open session (O).
 */
static const struct {
	const char *sql;
	char param;         /* 'S', 'T', 'O', or 0: none */
	const char *state;
} changes[] = {
	/* append-only, even for the owner (mp_refuse_change: insufficient_privilege) */
	{ "UPDATE refunds SET reason = 'changed' WHERE session_id = $1::uuid", 'S', "42501" },
	{ "UPDATE refunds SET amount = amount + 100 WHERE session_id = $1::uuid", 'S', "42501" },
	{ "DELETE FROM refunds WHERE session_id = $1::uuid", 'S', "42501" },
	{ "TRUNCATE refunds CASCADE", 0, "42501" },
	{ "UPDATE transfer_reversals SET amount = 1 WHERE transfer_id = $1", 'T', "42501" },
	{ "DELETE FROM transfer_reversals WHERE transfer_id = $1", 'T', "42501" },
	{ "TRUNCATE transfer_reversals", 0, "42501" },
	/* the controls: the rows those statements aim at are there, and can be read */
	{ "SELECT 1 / count(*)::int FROM refunds WHERE session_id = $1::uuid", 'S', "00000" },
	{ "SELECT 1 / count(*)::int FROM transfer_reversals WHERE transfer_id = $1", 'T',
	  "00000" },
	/* the running totals within their bounds, and refunded exactly when all is */
	{ "UPDATE payment_sessions SET amount_refunded = amount + 1 WHERE id = $1::uuid", 'S',
	  "23514" },
	{ "UPDATE payment_sessions SET amount_refunded = -1 WHERE id = $1::uuid", 'S', "23514" },
	{ "UPDATE payment_sessions SET amount_refunded = amount WHERE id = $1::uuid", 'S',
	  "23514" },
	{ "UPDATE payment_sessions SET status = 'refunded' WHERE id = $1::uuid", 'S', "23514" },
	{ "UPDATE payment_sessions SET amount_refunded = 100 WHERE id = $1::uuid", 'O', "23514" },
	{ "UPDATE transfers SET amount_reversed = amount + 1 WHERE id = $1", 'T', "23514" },
	{ "UPDATE transfers SET amount_reversed = -1 WHERE id = $1", 'T', "23514" },
	/* the controls: the same updates within the bounds are accepted (and change nothing) */
	{ "UPDATE payment_sessions SET amount_refunded = amount_refunded WHERE id = $1::uuid",
	  'S', "00000" },
	{ "UPDATE payment_sessions SET amount_refunded = 0 WHERE id = $1::uuid", 'O', "00000" },
	{ "UPDATE transfers SET amount_reversed = amount_reversed WHERE id = $1", 'T', "00000" },
};

START_TEST(test_owner_changes)
{
	const char *p[1] = { changes[_i].param == 'S' ? paid : changes[_i].param == 'T' ?
	    transfer : open_ };
	char before[256], st[6];
	PGconn *c = db_connect_as(NULL);

	snprintf(before, sizeof(before), "%s", state_of_refunds());
	ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
	ck_assert_msg(strcmp(db_state(c, changes[_i].sql, changes[_i].param ? 1 : 0, p, st),
	    changes[_i].state) == 0, "%s: %s, not %s (%s)", changes[_i].sql, st,
	    changes[_i].state, PQerrorMessage(c));
	PQfinish(c);
	ck_assert_str_eq(state_of_refunds(), before);
	assert_ledger_ok();
}
END_TEST

static void
shop_setup(void)
{
	char body[256], secret[128];
	struct http_resp r;

	new_merchant(&shop, "1234", "10.00", true);
	merchant_webhook(&shop, secret);
	new_account(vendor, "--kind vendor");
	new_transfer(&shop, vendor, "10.00", transfer);
	paid_session(shop.auth, "10.00", "order-db", NULL, paid);
	open_session(shop.auth, "10.00", "order-db", open_);
	snprintf(body, sizeof(body), "{\"amount\":2.00,\"reverse_transfers\":[{\"transfer_id\":"
	    "\"%s\",\"amount\":3.00}]}", transfer);
	refund_post(shop.auth, paid, body, &r);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	http_free(&r);
	ck_assert_str_eq(state_of_refunds(), "1:200/1:300/200:paid/300");
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("refund-db", "the database's own rules", 60, &t);

	tcase_add_unchecked_fixture(t, shop_setup, NULL);
	tcase_add_loop_test(t, test_rows_sum_within_amount, 0, 2);
	tcase_add_loop_test(t, test_bad_row_refused, 0, NELEM(bad_rows));
	tcase_add_loop_test(t, test_owner_changes, 0, NELEM(changes));
	return fixture_main(s, service_key_setup, service_key_free);
}
