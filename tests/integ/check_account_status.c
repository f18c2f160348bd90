/*
 * Freezing and closing ledger accounts (marketpayctl account freeze|unfreeze|close, sql/022),
 * against the real stack (tests/integration.sh): a frozen vendor takes no transfer and a
 * frozen wallet (or one of another currency) pays nothing, each refusal moving nothing;
 * unfrozen, both work again; only an account at zero closes, and closing is final, also for
 * the database's owner; every change is recorded; and a freeze that commits while transfers
 * wait for the account lets none of them post (the row lock every posting takes orders them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "checkout_form.h"
#include "fixture.h"
#include "transfers.h"

/* marketpayctl ARGS, both streams into out[n] (static buffer); its exit status into rc. */
static const char *
ctl_out(int *rc, const char *args, const char *account, const char *reason)
{
	static char out[2048];
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), CTL "account %s %s --reason '%s' 2>&1", args, account, reason);
	*rc = run_capture(cmd, out, sizeof(out));
	return out;
}

/* account freeze|unfreeze|close, which must succeed and print the account's new status. */
static void
change_ok(const char *verb, const char *account, const char *status)
{
	char want[64];
	const char *out;
	int rc;

	out = ctl_out(&rc, verb, account, "case of check_account_status");
	ck_assert_msg(rc == 0, "account %s %s: %s", verb, account, out);
	snprintf(want, sizeof(want), "%s\t%s\t", account, status);
	ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "%s", out);
}

/* The same refused with a message holding needle; the account's status stays was. */
static void
change_refused(const char *verb, const char *account, const char *needle, const char *was)
{
	const char *out;
	int rc;

	out = ctl_out(&rc, verb, account, "refused");
	ck_assert_msg(rc != 0 && strstr(out, needle) != NULL, "account %s %s: %s", verb,
	    account, out);
	ck_assert_str_eq(db_value("SELECT status FROM accounts WHERE account_number = $1",
	    account), was);
}

/* A transfer of amount to vendor alone by m, its reply into r. */
static void
send_one(const struct merchant *m, const char *vendor, const char *amount, struct http_resp *r)
{
	char accts[1][16];
	const char *amounts[1] = { amount };

	snprintf(accts[0], sizeof(accts[0]), "%s", vendor);
	send_as(m->auth, transfer_body(pin_ok(), 1, accts, amounts), NULL, r);
}

START_TEST(test_freeze_vendor)
{
	struct merchant m;
	struct http_resp r;
	char vendor[16], before[FOOTPRINT_LEN], id[40];

	new_merchant(&m, "1234", "100.00", true);
	new_account(vendor, "--kind vendor");
	new_transfer(&m, vendor, "10.00", id);
	change_ok("freeze", vendor, "frozen");
	/* Recorded: who, why, and the balance and version it was frozen at. */
	ck_assert_str_eq(db_value("SELECT c.old_status || ' ' || c.new_status || ' ' || c.balance"
	    " || ' ' || (c.version = a.version) || ' ' || c.reason || ' ' || (c.changed_by ="
	    " current_user) || ' ' || (c.os_user IS NOT NULL) FROM account_status_changes c JOIN"
	    " accounts a ON a.id = c.account_id WHERE a.account_number = $1", vendor),
	    "active frozen 1000 true case of check_account_status true true");
	/* A transfer to it, and a deposit into it, move nothing. */
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, vendor));
	send_one(&m, vendor, "5.00", &r);
	assert_fail(&r, 400, "vendors[0].account_number is not active");
	http_free(&r);
	ck_assert_ptr_null(ctl("account deposit %s 5", vendor));
	ck_assert_str_eq(db_footprint(NULL, vendor), before);
	change_refused("freeze", vendor, "is frozen: freeze applies only to an account active",
	    "frozen");
	/* Unfrozen, it takes transfers again. */
	change_ok("unfreeze", vendor, "active");
	new_transfer(&m, vendor, "5.00", id);
	ck_assert_int_eq(balance_of(vendor), 1500);
	ck_assert_str_eq(db_value("SELECT count(*) FROM account_status_changes c JOIN accounts a"
	    " ON a.id = c.account_id WHERE a.account_number = $1", vendor), "2");
	assert_ledger_ok();
}
END_TEST

START_TEST(test_freeze_wallet)
{
	char wallet[16], id[37], before[FOOTPRINT_LEN];
	struct http_resp r;

	new_customer("50.00", wallet);
	open_session(fx.auth_a, "10.00", "order-frozen-wallet", id);
	change_ok("freeze", wallet, "frozen");
	/* The right PIN on the checkout page: refused, the session still open, nothing moved. */
	snprintf(before, sizeof(before), "%s", db_footprint(id, wallet));
	pay_wallet(id, wallet, "1234", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_msg(strstr(r.body, "This account cannot be used for payments.") != NULL, "%s",
	    r.body);
	http_free(&r);
	ck_assert_str_eq(db_footprint(id, wallet), before);
	ck_assert_str_eq(status_of(id), "open");
	/* Unfrozen, the same payment goes through. */
	change_ok("unfreeze", wallet, "active");
	pay_wallet(id, wallet, "1234", &r);
	assert_paid(&r, id);
	http_free(&r);
	ck_assert_int_eq(balance_of(wallet), 4000);
}
END_TEST

/*
 * A wallet of another currency pays nothing, and a merchant's first payment, refused, leaves
 * it without the settlement account a payment makes (sql/041 reads the posting's refusals
 * before it makes the account; the subtransaction of before took it back).
 */
START_TEST(test_first_payment_refused)
{
	char merchant[32], auth[200], wallet[16], other[16], id[37], before[FOOTPRINT_LEN];
	const char *key;
	struct http_resp r;

	snprintf(merchant, sizeof(merchant), "%s", ctl("merchant create --name First --currency"
	    " AFN"));
	ck_assert_ptr_nonnull(key = ctl("key create %s", merchant));
	snprintf(auth, sizeof(auth), "Authorization: API-KEY %s", key);
	snprintf(other, sizeof(other), "%s", ctl("account create --kind customer --currency USD"));
	ck_assert_ptr_nonnull(ctl("account deposit %s 50.00", other));
	ck_assert_int_eq(sh("echo 1234 | " CTL "account pin %s >/dev/null", other), 0);
	new_customer("50.00", wallet);
	open_session(auth, "10.00", "order-first", id);
	change_ok("freeze", wallet, "frozen");
	snprintf(before, sizeof(before), "%s", db_footprint(id, wallet));
	pay_wallet(id, other, "1234", &r);
	ck_assert_msg(r.status == 200 && strstr(r.body, "This account holds another currency.")
	    != NULL, "%ld %s", r.status, r.body);
	http_free(&r);
	pay_wallet(id, wallet, "1234", &r);
	ck_assert_msg(r.status == 200 && strstr(r.body, "This account cannot be used for "
	    "payments.") != NULL, "%ld %s", r.status, r.body);
	http_free(&r);
	ck_assert_str_eq(db_footprint(id, wallet), before);
	ck_assert_str_eq(status_of(id), "open");
	ck_assert_str_eq(db_value("SELECT count(*) FROM accounts WHERE merchant_id = $1",
	    merchant), "0");
	ck_assert_int_eq(balance_of(other), 5000);
	/* Unfrozen, it pays, and the merchant's account is made with the payment. */
	change_ok("unfreeze", wallet, "active");
	pay_wallet(id, wallet, "1234", &r);
	assert_paid(&r, id);
	http_free(&r);
	ck_assert_str_eq(db_value("SELECT string_agg(currency || ' ' || balance, ',') FROM accounts"
	    " WHERE merchant_id = $1", merchant), "AFN 1000");
	ck_assert_int_eq(balance_of(wallet), 4000);
	assert_ledger_ok();
}
END_TEST

START_TEST(test_close)
{
	char wallet[16], vendor[16], state[6];
	PGconn *c;

	/* Money in it: not closed, nothing recorded. */
	new_customer("0.01", wallet);
	change_refused("close", wallet, "holds 0.01: only an account at zero can be closed",
	    "active");
	ck_assert_str_eq(db_value("SELECT count(*) FROM account_status_changes c JOIN accounts a"
	    " ON a.id = c.account_id WHERE a.account_number = $1", wallet), "0");
	/* At zero (frozen first, as an operator winding it down would): closed, for good. */
	new_account(vendor, "--kind vendor");
	change_ok("freeze", vendor, "frozen");
	change_ok("close", vendor, "closed");
	change_refused("unfreeze", vendor, "is closed", "closed");
	change_refused("freeze", vendor, "is closed", "closed");
	ck_assert_ptr_null(ctl("account deposit %s 5", vendor));
	ck_assert_int_eq(balance_of(vendor), 0);
	/* Not even the owner reopens it, or freezes the funding account. */
	c = db_connect_as(NULL);
	ck_assert_str_eq(db_state(c, "UPDATE accounts SET status = 'active' WHERE account_number"
	    " = $1", 1, (const char *const[]){ vendor }, state), "MP050");
	ck_assert_str_eq(db_state(c, "UPDATE accounts SET status = 'frozen' WHERE kind ="
	    " 'system'", 0, NULL, state), "MP050");
	/* Nor rewrites the record. */
	ck_assert_str_eq(db_state(c, "UPDATE account_status_changes SET reason = 'x'", 0, NULL,
	    state), "42501");
	PQfinish(c);
	ck_assert_ptr_null(ctl("account close CU0000000000 --reason gone"));
	ck_assert_ptr_null(ctl("account close %s", wallet));
}
END_TEST

/*
 * The race: transfers to a vendor that have passed mp_transfer's checks (the vendor still
 * active) wait for its row while a freeze holds it; the freeze commits and none of them
 * posts. The version recorded with the freeze divides the vendor's history: no entry after
 * it. Then, unfrozen, the same burst all posts (the positive control).
 */
START_TEST(test_race_freeze)
{
	enum { N = 8 };
	struct merchant m;
	struct http_resp r[N];
	struct http_req q[N];
	static char bodies[N][2048];
	char vendor[1][16], needle[64];
	const char *h[] = { JSON_CT, NULL, NULL }, *amounts[1] = { "1.00" }, *p[1], *msg;
	int i, waiting, refused = 0;

	new_merchant(&m, "1234", "100.00", true);
	new_account(vendor[0], "--kind vendor");
	h[1] = m.auth;
	for (i = 0; i < N; i++)
		q[i] = (struct http_req){ "POST", SEND, h,
		    strcpy(bodies[i], transfer_body(pin_ok(), 1, vendor, amounts)) };
	p[0] = vendor[0];
	waiting = http_parallel_held(db_hold("SELECT * FROM mp_account_set_status($1, 'frozen',"
	    " '{active}', 'race', 'check_account_status')", 1, p), 2, N, q, r);
	ck_assert_int_ge(waiting, 2);
	snprintf(needle, sizeof(needle), "account %s is frozen", vendor[0]);
	for (i = 0; i < N; i++) {
		msg = refusal(&r[i]);
		ck_assert_msg(msg != NULL && (strstr(msg, needle) != NULL ||
		    strstr(msg, "vendors[0].account_number is not active") != NULL),
		    "reply %d: %ld %s", i, r[i].status, r[i].body);
		refused += strstr(msg, needle) != NULL;
		http_free(&r[i]);
	}
	/* Some were refused by the posting itself, under the lock, after the freeze. */
	ck_assert_int_ge(refused, 1);
	ck_assert_str_eq(db_value("SELECT (SELECT count(*) FROM ledger_entries e WHERE e.account_id"
	    " = c.account_id AND e.version > c.version) || ' ' || a.balance || ' ' || a.version"
	    " FROM account_status_changes c JOIN accounts a ON a.id = c.account_id WHERE"
	    " a.account_number = $1", vendor[0]), "0 0 0");
	ck_assert_int_eq(balance_of(m.acct), 10000);
	change_ok("unfreeze", vendor[0], "active");
	for (i = 0; i < N; i++)   /* new PINs: each nonce was spent */
		strcpy(bodies[i], transfer_body(pin_ok(), 1, vendor, amounts));
	ck_assert_int_eq(http_parallel_reqs(N, q, r, NULL, NULL), 0);
	for (i = 0; i < N; i++) {
		ck_assert_msg(transfer_accepted(&r[i], 1) != NULL, "reply %d: %ld %s", i, r[i].status,
		    r[i].body);
		http_free(&r[i]);
	}
	ck_assert_int_eq(balance_of(vendor[0]), N * 100);
	assert_ledger_ok();
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("account-status", "freeze and close", 120, &t);

	tcase_add_test(t, test_freeze_vendor);
	tcase_add_test(t, test_freeze_wallet);
	tcase_add_test(t, test_first_payment_refused);
	tcase_add_test(t, test_close);
	tcase_add_test(t, test_race_freeze);
	return fixture_main(s, service_key_setup, service_key_free);
}
