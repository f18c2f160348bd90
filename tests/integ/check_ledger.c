/*
 * The ledger the payments post to, against the real stack (tests/integration.sh): the
 * database refuses tampering even by its owner, the workers' role may not write it at all
 * (only mp_post() moves money), marketpayctl ledger verify finds damage done behind the
 * triggers' back, and the account commands move and show money as they say.
 */
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "fixture.h"

static const char *const tampering[] = {
	"UPDATE ledger_entries SET amount = amount + 1",
	"DELETE FROM ledger_entries",
	"TRUNCATE ledger_entries CASCADE",
	"UPDATE ledger_transactions SET kind = 'adjustment'",
	"DELETE FROM ledger_transactions",
	"UPDATE accounts SET balance = balance + 100 WHERE kind = 'customer'",
	"INSERT INTO ledger_transactions (kind) VALUES ('adjustment');"
	" INSERT INTO ledger_entries (transaction_id, account_id, amount, balance_before,"
	" balance_after, version) SELECT currval('ledger_transactions_id_seq'), id, 5, balance,"
	" balance + 5, version + 1 FROM accounts WHERE kind = 'customer' LIMIT 1",
	"INSERT INTO accounts (account_number, kind, currency, balance) VALUES"
	" ('CU0000000001', 'customer', 'AFN', -5)",
};

START_TEST(test_ledger_refuses_tampering)
{
	char acct[16], cmd[1024];

	new_customer("10.00", acct);
	snprintf(cmd, sizeof(cmd), "psql -v ON_ERROR_STOP=1 -q -1 -c \"%s\" >/dev/null 2>&1",
	    tampering[_i]);
	ck_assert_msg(sh("%s", cmd) != 0, "the database accepted: %s", tampering[_i]);
	ck_assert_int_eq(balance_of(acct), 1000);
	assert_ledger_ok();
}
END_TEST

/* What the workers' role may not do at all, even balanced: only mp_post() moves money. */
static const char *const app_forbidden[] = {
	"INSERT INTO ledger_transactions (kind) VALUES ('adjustment')",
	"INSERT INTO ledger_entries (transaction_id, account_id, amount, balance_before,"
	" balance_after, version) SELECT max(transaction_id), account_id, 1, 0, 1, 999"
	" FROM ledger_entries GROUP BY account_id LIMIT 1",
	"UPDATE accounts SET balance = balance + 100 WHERE kind = 'customer'",
	"UPDATE accounts SET status = 'active'",
	"INSERT INTO accounts (account_number, kind, currency) VALUES ('CU0000000002',"
	" 'customer', 'AFN')",
	"DELETE FROM payment_sessions",
	"UPDATE payment_sessions SET amount = 1",
	"UPDATE api_keys SET revoked_at = NULL",
	"SELECT set_config('marketpay.posting', 'on', false); UPDATE accounts SET balance = 0",
};

START_TEST(test_app_role_cannot_write_ledger)
{
	char acct[16];

	new_customer("10.00", acct);
	/* The role works for what it is for: reading, and posting through mp_post(). */
	ck_assert_int_eq(sh("psql -v ON_ERROR_STOP=1 -q -c 'SET ROLE marketpay_app'"
	    " -c 'SELECT count(*) FROM ledger_entries' >/dev/null 2>&1"), 0);
	ck_assert_msg(sh("psql -v ON_ERROR_STOP=1 -q -1 -c 'SET ROLE marketpay_app' -c \"%s\""
	    " >/dev/null 2>&1", app_forbidden[_i]) != 0, "marketpay_app may: %s",
	    app_forbidden[_i]);
	ck_assert_int_eq(balance_of(acct), 1000);
	assert_ledger_ok();
}
END_TEST

START_TEST(test_ledger_verify_finds_damage)
{
	char acct[16], out[4096] = "";
	const char *id;
	FILE *p;
	size_t n;
	int rc;

	new_customer("10.00", acct);
	id = db_value("SELECT e.id FROM ledger_entries e JOIN accounts a ON a.id = e.account_id"
	    " WHERE a.account_number = $1", acct);
	ck_assert_ptr_nonnull(id);
	/* Damage one entry behind the triggers' back, as only a superuser could. */
	ck_assert_int_eq(sh("psql -q -1 -c 'ALTER TABLE ledger_entries DISABLE TRIGGER USER'"
	    " -c 'UPDATE ledger_entries SET amount = amount + 1, balance_after = balance_after + 1"
	    " WHERE id = %s' -c 'ALTER TABLE ledger_entries ENABLE TRIGGER USER' >/dev/null", id), 0);
	p = popen(CTL "ledger verify 2>&1", "r");
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	rc = pclose(p);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(out, "unbalanced transaction") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "balance differs from its entries") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "trial balance not zero") != NULL, "%s", out);
	/* Put it back: verify is clean again. */
	ck_assert_int_eq(sh("psql -q -1 -c 'ALTER TABLE ledger_entries DISABLE TRIGGER USER'"
	    " -c 'UPDATE ledger_entries SET amount = amount - 1, balance_after = balance_after - 1"
	    " WHERE id = %s' -c 'ALTER TABLE ledger_entries ENABLE TRIGGER USER' >/dev/null", id), 0);
	assert_ledger_ok();
}
END_TEST

START_TEST(test_account_commands)
{
	char acct[16], out[4096] = "";
	FILE *p;
	size_t n;

	new_customer("12.30", acct);
	ck_assert_ptr_nonnull(ctl("account deposit %s 0.05", acct));
	ck_assert_int_eq(balance_of(acct), 1235);
	/* Bad amounts and accounts are refused and move nothing. */
	ck_assert_ptr_null(ctl("account deposit %s 1.234", acct));
	ck_assert_ptr_null(ctl("account deposit %s -5", acct));
	ck_assert_ptr_null(ctl("account deposit %s 0", acct));
	ck_assert_ptr_null(ctl("account deposit CU0000000000 5"));
	ck_assert_ptr_null(ctl("account create --kind merchant"));
	ck_assert_ptr_null(ctl("account create --kind alien"));
	ck_assert_int_ne(sh("echo 12 | " CTL "account pin %s 2>/dev/null", acct), 0);
	ck_assert_int_eq(balance_of(acct), 1235);
	snprintf(out, sizeof(out), CTL "account show %s", acct);
	p = popen(out, "r");
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_msg(strstr(out, "balance\t12.35\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "kind\tcustomer\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "pin\tset\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "\tdeposit\tdeposit\t0.05\t12.35\n") != NULL, "%s", out);
	/* The PIN is stored as a 32-byte digest, never as digits. */
	ck_assert_str_eq(db_value("SELECT length(pin_digest) FROM accounts WHERE account_number ="
	    " $1", acct), "32");
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("ledger", "ledger", 60, &t);

	tcase_add_loop_test(t, test_ledger_refuses_tampering, 0, NELEM(tampering));
	tcase_add_loop_test(t, test_app_role_cannot_write_ledger, 0, NELEM(app_forbidden));
	tcase_add_test(t, test_ledger_verify_finds_damage);
	tcase_add_test(t, test_account_commands);
	return fixture_main(s, NULL, NULL);
}
