/*
 * The ledger the payments post to, against the real stack (tests/integration.sh): the
 * database refuses tampering even by its owner, the workers' role may not write it at all
 * (only mp_post() moves money), marketpayctl ledger verify finds damage done behind the
 * triggers' back (also in refunds and transfer reversals), and the account commands move and
 * show money as they say.
 */
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "checkout_form.h"
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

	new_customer("10.00", acct);
	id = db_value("SELECT e.id FROM ledger_entries e JOIN accounts a ON a.id = e.account_id"
	    " WHERE a.account_number = $1", acct);
	ck_assert_ptr_nonnull(id);
	/* Damage one entry behind the triggers' back, as only a superuser could. */
	ck_assert_int_eq(sh("psql -q -1 -c 'ALTER TABLE ledger_entries DISABLE TRIGGER USER'"
	    " -c 'UPDATE ledger_entries SET amount = amount + 1, balance_after = balance_after + 1"
	    " WHERE id = %s' -c 'ALTER TABLE ledger_entries ENABLE TRIGGER USER' >/dev/null", id), 0);
	ck_assert_int_ne(run_capture(CTL "ledger verify 2>&1", out, sizeof(out)), 0);
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
	char acct[16], cmd[256], out[4096] = "";

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
	snprintf(cmd, sizeof(cmd), CTL "account show %s", acct);
	ck_assert_int_eq(run_capture(cmd, out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "balance\t12.35\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "kind\tcustomer\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "pin\tset\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "\tdeposit\tdeposit\t0.05\t12.35\n") != NULL, "%s", out);
	/* The PIN is stored as a 32-byte digest, never as digits. */
	ck_assert_str_eq(db_value("SELECT length(pin_digest) FROM accounts WHERE account_number ="
	    " $1", acct), "32");
}
END_TEST

/*
 * Refunds and reversals: the rows test_refunds_verified makes, found by their reasons (a
 * refund's reversals carry its reason) and names, the latest of each (the case may run
 * again on the same stack).
 */
#define LATEST(what, table, where) \
    "(SELECT " what " FROM " table " WHERE " where " ORDER BY created_at DESC LIMIT 1)"
#define WALLET_REFUND LATEST("id", "refunds", "reason = 'verify wallet'")
#define WALLET_TX LATEST("ledger_transaction_id", "refunds", "reason = 'verify wallet'")
#define WALLET_SESSION LATEST("session_id", "refunds", "reason = 'verify wallet'")
#define CARD_SESSION LATEST("session_id", "refunds", "reason = 'verify card'")
#define REVERSED LATEST("transfer_id", "transfer_reversals", "reason = 'verify reversal'")
#define ACCOUNT(name) LATEST("id", "accounts", "name = '" name "'")

/* Damage done as the superuser with every trigger off, its repair, and what verify says. */
struct damage {
	const char *sql, *repair;
	const char *finds[3];
};

static const struct damage damages[] = {
	{ "UPDATE refunds SET amount = amount + 1 WHERE id = " WALLET_REFUND,
	  "UPDATE refunds SET amount = amount - 1 WHERE id = " WALLET_REFUND,
	  { "refunds differ from the session's amount_refunded", "refund does not credit its payer",
	    "merchant's entry is not the net of refund and reversals" } },
	/* What the CHECKs would refuse: with them dropped, as a restore without them could. */
	{ "ALTER TABLE payment_sessions DROP CONSTRAINT payment_sessions_rules;"
	  " UPDATE payment_sessions SET amount_refunded = amount + 1 WHERE id = " CARD_SESSION,
	  "UPDATE payment_sessions SET amount_refunded = amount WHERE id = " CARD_SESSION ";"
	  " ALTER TABLE payment_sessions ADD CONSTRAINT payment_sessions_rules CHECK"
	  " (mp_session_rules(payment_sessions))",
	  { "refunds differ from the session's amount_refunded", "session refunded above its amount",
	    "session status does not match its refunds" } },
	{ "ALTER TABLE transfers DROP CONSTRAINT reversals_within_amount;"
	  " UPDATE transfers SET amount_reversed = amount + 1 WHERE id = " REVERSED,
	  "UPDATE transfers t SET amount_reversed = (SELECT sum(amount) FROM transfer_reversals v"
	  " WHERE v.transfer_id = t.id) WHERE id = " REVERSED "; ALTER TABLE transfers"
	  " ADD CONSTRAINT reversals_within_amount CHECK (amount_reversed BETWEEN 0 AND amount)",
	  { "reversals differ from the transfer's amount_reversed",
	    "transfer reversed above its amount" } },
	{ "UPDATE ledger_transactions SET kind = 'adjustment' WHERE id = " WALLET_TX,
	  "UPDATE ledger_transactions SET kind = 'refund' WHERE id = " WALLET_TX,
	  { "refund or reversal not posted as its kind" } },
	{ "UPDATE transfer_reversals SET refund_id = NULL WHERE refund_id = " WALLET_REFUND,
	  "UPDATE transfer_reversals SET refund_id = " WALLET_REFUND
	  " WHERE ledger_transaction_id = " WALLET_TX,
	  { "refund or reversal not posted as its kind" } },
	/* The refund as if paid by test card: the funding account was not credited. */
	{ "UPDATE payment_sessions SET customer_account_id = NULL WHERE id = " WALLET_SESSION,
	  "UPDATE payment_sessions SET customer_account_id = " ACCOUNT("verify wallet")
	  " WHERE id = " WALLET_SESSION,
	  { "refund does not credit its payer" } },
	{ "UPDATE transfers SET vendor_account_id = " ACCOUNT("verify spare") " WHERE id = " REVERSED,
	  "UPDATE transfers SET vendor_account_id = " ACCOUNT("verify vendor 1") " WHERE id = " REVERSED,
	  { "reversals do not debit the vendor" } },
	{ "UPDATE ledger_transactions SET merchant_id = NULL WHERE id = " WALLET_TX,
	  "UPDATE ledger_transactions SET merchant_id = "
	  LATEST("merchant_id", "refunds", "reason = 'verify wallet'") " WHERE id = " WALLET_TX,
	  { "merchant's entry is not the net of refund and reversals" } },
};

/* Runs sql as the superuser with triggers and foreign keys off, in one transaction. */
static int
as_replica(const char *sql)
{
	return sh("psql -X -q -v ON_ERROR_STOP=1 -1 -c 'SET session_replication_role = replica'"
	    " -c \"%s\" >/dev/null", sql);
}

/* The merchant's transfer to the vendor account number, by the intent's inner function. */
static void
transfer_to(const char *merchant, const char *vendor, const char *minor, char id[40])
{
	const char *p[3] = { merchant, vendor, minor }, *v;

	v = db_valuev("SELECT transfer_id FROM mp_transfer($1::bigint, (SELECT currency FROM"
	    " merchants WHERE id = $1::bigint), ARRAY[$2], ARRAY[$3::bigint], 'UTC')", 3, p);
	ck_assert_ptr_nonnull(v);
	snprintf(id, 40, "%s", v);
}

/* A refund (amount NULL: all left) with a reversal of transfer (amount NULL: all left). */
static void
refund(const char *merchant, const char *session, const char *amount, const char *reason,
    const char *transfer, const char *reversal)
{
	const char *p[6] = { merchant, session, amount, reason, transfer, reversal };

	ck_assert_ptr_nonnull(db_valuev("SELECT mp_refund_session($1::bigint, $2::uuid,"
	    " $3::bigint, $4, ARRAY[$5], ARRAY[$6::bigint])", 6, p));
}

START_TEST(test_refunds_verified)
{
	char merchant[32], auth[200], wallet[16], vendor1[16], vendor2[16], card[37], paid[37];
	char t1[40], t2[40], cmd[256], out[8192];
	const char *p[3];
	struct http_resp r;
	size_t i, j;
	int rc;

	/* A merchant paid 15.50 by wallet and 15.50 by test card, who paid two vendors. */
	snprintf(merchant, sizeof(merchant), "%s", ctl("merchant create --name 'Refund Shop'"));
	snprintf(auth, sizeof(auth), "Authorization: API-KEY %s", ctl("key create %s", merchant));
	new_customer("20.00", wallet);
	ck_assert_ptr_nonnull(db_value("UPDATE accounts SET name = 'verify wallet'"
	    " WHERE account_number = $1 RETURNING id", wallet));
	snprintf(vendor1, sizeof(vendor1), "%s", ctl("account create --kind vendor --name"
	    " 'verify vendor 1'"));
	snprintf(vendor2, sizeof(vendor2), "%s", ctl("account create --kind vendor --name"
	    " 'verify vendor 2'"));
	ck_assert_ptr_nonnull(ctl("account create --kind vendor --name 'verify spare'"));
	new_session(auth, GOOD_BODY, paid);
	pay_wallet(paid, wallet, "1234", &r);
	http_free(&r);
	ck_assert_str_eq(status_of(paid), "paid");
	new_session(auth, GOOD_BODY, card);
	ck_assert_str_eq(db_value("SELECT outcome FROM mp_pay_test_card($1::uuid, 'visa', '4242',"
	    " NULL)", card), "paid");
	transfer_to(merchant, vendor1, "500", t1);
	transfer_to(merchant, vendor2, "300", t2);
	/* 4.00 of the wallet's with 2.00 of vendor 1's; all of the card's with all of vendor
	 * 2's; 1.00 more of vendor 1's by itself. */
	refund(merchant, paid, "400", "verify wallet", t1, "200");
	refund(merchant, card, NULL, "verify card", t2, NULL);
	p[0] = merchant;
	p[1] = t1;
	p[2] = "100";
	ck_assert_ptr_nonnull(db_valuev("SELECT mp_reverse_transfer($1::bigint, $2, $3::bigint,"
	    " 'verify reversal')", 3, p));
	ck_assert_str_eq(status_of(card), "refunded");
	assert_ledger_ok();

	/* account show: refunds and reversals as their own kinds. */
	snprintf(cmd, sizeof(cmd), CTL "account show %s", vendor1);
	ck_assert_int_eq(run_capture(cmd, out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "\treversal\tsession ") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "\treversal\ttransfer ") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "balance\t2.00\n") != NULL, "%s", out);
	snprintf(cmd, sizeof(cmd), CTL "account show %s", wallet);
	ck_assert_int_eq(run_capture(cmd, out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "\trefund\tsession ") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "\t4.00\t8.50\n") != NULL, "%s", out);

	/* Each damage is found and named; repaired, the ledger is whole again. */
	for (i = 0; i < NELEM(damages); i++) {
		ck_assert_msg(as_replica(damages[i].sql) == 0, "damage %zu did not apply", i);
		rc = run_capture(CTL "ledger verify 2>&1", out, sizeof(out));
		ck_assert_msg(as_replica(damages[i].repair) == 0, "damage %zu not repaired", i);
		ck_assert_msg(rc != 0, "verify passed damage %zu: %s", i, out);
		for (j = 0; j < NELEM(damages[i].finds) && damages[i].finds[j] != NULL; j++)
			ck_assert_msg(strstr(out, damages[i].finds[j]) != NULL,
			    "damage %zu: no '%s' in: %s", i, damages[i].finds[j], out);
		assert_ledger_ok();
	}
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
	tcase_add_test(t, test_refunds_verified);
	return fixture_main(s, NULL, NULL);
}
