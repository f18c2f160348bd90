/*
 * The ledger's rules as the database keeps them, against the real stack
 * (tests/integration.sh): each statement below breaks exactly one rule, as the owner (who
 * passes every privilege), and must be refused with the SQLSTATE given; nothing it wrote
 * stays (each runs in a transaction rolled back). The one-column rules are domains
 * (sql/026_ledger_domains.sql), the balanced-transaction and transfer-group rules statement
 * triggers (sql/027_posting_triggers.sql), the merchants' and the sessions' references
 * triggers (sql/039_session_merchant_unlocked.sql): with any of them removed, its case fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <libpq-fe.h>

#include "fixture.h"

/* An account row of the given column and value (the rest valid). */
#define ACCOUNT(col, val) "INSERT INTO accounts (account_number, kind, currency, " col ")" \
    " VALUES ('CU9999999990', 'customer', 'AFN', " val ")"
/* A new ledger transaction, then entries of it on the first two accounts: amounts a1, a2,
 * both with version v (balance before 0). */
#define ENTRIES(a1, a2, v) "INSERT INTO ledger_transactions (kind) VALUES ('adjustment');" \
    " INSERT INTO ledger_entries (transaction_id, account_id, amount, balance_before," \
    " balance_after, version) SELECT currval('ledger_transactions_id_seq'), a.id, s.amount, 0," \
    " s.amount, " v " FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM accounts" \
    " ORDER BY id LIMIT 2) a JOIN (VALUES (1, " a1 "), (2, " a2 ")) s(n, amount) USING (n)"
/* A new ledger transaction, then n transfers of it (to the first n accounts): column col of
 * each is expr (n the row's number). */
#define TRANSFERS(n, col, expr) "INSERT INTO ledger_transactions (kind) VALUES ('transfer');" \
    " INSERT INTO transfers (id, ledger_transaction_id, merchant_id, vendor_account_id," \
    " amount, position, group_id, " col ") SELECT 'tr_' || md5(a.id || 'rules'), currval(" \
    "'ledger_transactions_id_seq'), (SELECT min(id) FROM merchants), a.id, 1, a.n - 1," \
    " 'trg_' || md5('rules'), " expr " FROM (SELECT id, row_number() OVER (ORDER BY id) AS n" \
    " FROM accounts ORDER BY id LIMIT " n ") a"
/* A merchant of this test's own, then a session of the merchant m. */
#define MERCHANT "INSERT INTO merchants (name, currency) VALUES ('rules', 'AFN')"
#define SESSION(m) "INSERT INTO payment_sessions (merchant_id, amount, currency, expires_at," \
    " user_id) VALUES (" m ", 100, 'AFN', now() + interval '1 hour', 'rules')"
/* An idempotency record of the merchant m. */
#define IDEM_RECORD(m) "INSERT INTO idempotency_keys (merchant_id, key, request_hash," \
    " status_code, body) VALUES (" m ", 'rules', sha256(''), 200, '{}')"
/* Sets the transaction's Idempotency-Key, as the worker does (DB_IDEM_LOCK). */
#define IDEM(key) "SELECT set_config('marketpay.idempotency_key', " key ", true); "

static const struct rule {
	const char *sql, *state;
} rules[] = {
	/* The domains of sql/026_ledger_domains.sql, one column each. */
	{ ACCOUNT("name", "'x'"), "00000" },
	{ "INSERT INTO accounts (account_number, kind, currency) VALUES ('cu1', 'customer', 'AFN')",
	  "23514" },
	{ "INSERT INTO accounts (account_number, kind, currency) VALUES ('CU9999999990', 'alien',"
	  " 'AFN')", "23514" },
	{ "INSERT INTO accounts (account_number, kind, currency) VALUES ('CU9999999990',"
	  " 'customer', 'afn')", "23514" },
	{ ACCOUNT("status", "'gone'"), "23514" },
	{ ACCOUNT("version", "-1"), "23514" },
	{ ACCOUNT("name", "repeat('x', 201)"), "23514" },
	{ ACCOUNT("pin_digest", "'\\x00'"), "23514" },
	{ ACCOUNT("pin_failures", "-1"), "23514" },
	{ ACCOUNT("pin_locks", "-1"), "23514" },
	{ ACCOUNT("pin_scheme", "3"), "23514" },
	{ "INSERT INTO ledger_transactions (kind) VALUES ('gift')", "23514" },
	{ "INSERT INTO ledger_transactions (kind, reference) VALUES ('adjustment',"
	  " repeat('x', 201))", "23514" },
	{ ENTRIES("5", "-5", "999999999"), "00000" },
	{ ENTRIES("0", "0", "999999999"), "23514" },
	{ ENTRIES("5", "-5", "0"), "23514" },
	{ TRANSFERS("2", "idempotency_key", "NULL"), "00000" },
	{ TRANSFERS("1", "idempotency_key", "NULL") "; UPDATE transfers SET id = 'tr_x'"
	  " WHERE ledger_transaction_id = currval('ledger_transactions_id_seq')", "23514" },
	/* The ids: 32 lowercase hexadecimal digits exactly, the nonce 16 to 64 of its set. */
	{ TRANSFERS("1", "idempotency_key", "NULL") "; UPDATE transfers SET id = 'tr_' ||"
	  " upper(md5('rules')) WHERE ledger_transaction_id = currval('ledger_transactions_id_seq')",
	  "23514" },
	{ TRANSFERS("1", "idempotency_key", "NULL") "; UPDATE transfers SET id = 'tr_' ||"
	  " md5('rules') || '0' WHERE ledger_transaction_id = currval('ledger_transactions_id_seq')",
	  "23514" },
	{ "INSERT INTO pin_nonces (merchant_id, nonce) VALUES ((SELECT min(id) FROM merchants),"
	  " 'a nonce with spaces')", "23514" },
	{ "INSERT INTO webhook_events (id, merchant_id, type, body) VALUES ('evt_' ||"
	  " md5('rules') || 'g', (SELECT min(id) FROM merchants), 'payment.succeeded', '{}')",
	  "23514" },
	{ "INSERT INTO ledger_transactions (kind) VALUES ('transfer'); INSERT INTO transfers (id,"
	  " ledger_transaction_id, merchant_id, vendor_account_id, amount, position) VALUES"
	  " ('tr_' || md5('rules'), currval('ledger_transactions_id_seq'), (SELECT min(id) FROM"
	  " merchants), (SELECT min(id) FROM accounts), 0, 0)", "23514" },
	{ "INSERT INTO ledger_transactions (kind) VALUES ('transfer'); INSERT INTO transfers (id,"
	  " ledger_transaction_id, merchant_id, vendor_account_id, amount, position) VALUES"
	  " ('tr_' || md5('rules'), currval('ledger_transactions_id_seq'), (SELECT min(id) FROM"
	  " merchants), (SELECT min(id) FROM accounts), 1, -1)", "23514" },
	{ TRANSFERS("1", "idempotency_key", "NULL") "; UPDATE transfers SET group_id = 'trg_x'"
	  " WHERE ledger_transaction_id = currval('ledger_transactions_id_seq')", "23514" },
	{ IDEM("repeat('k', 256)") TRANSFERS("1", "idempotency_key", "repeat('k', 256)"),
	  "23514" },
	{ "INSERT INTO pin_nonces (merchant_id, nonce) VALUES ((SELECT min(id) FROM merchants),"
	  " 'short')", "23514" },
	{ "INSERT INTO webhook_events (id, merchant_id, type, body) VALUES ('evt_x', (SELECT"
	  " min(id) FROM merchants), 'payment.succeeded', '{}')", "23514" },
	{ "INSERT INTO webhook_events (id, merchant_id, type, body) VALUES ('evt_' || md5('rules'),"
	  " (SELECT min(id) FROM merchants), '', '{}')", "23514" },
	{ "INSERT INTO webhook_events (id, merchant_id, type, body, attempts) VALUES ('evt_' ||"
	  " md5('rules'), (SELECT min(id) FROM merchants), 'payment.succeeded', '{}', -1)",
	  "23514" },
	/* Balanced transactions (ledger_entries_balanced), checked at the end of each INSERT. */
	{ ENTRIES("5", "-4", "999999999"), "23514" },
	{ "INSERT INTO ledger_transactions (kind) VALUES ('adjustment'); INSERT INTO ledger_entries"
	  " (transaction_id, account_id, amount, balance_before, balance_after, version) SELECT"
	  " currval('ledger_transactions_id_seq'), min(id), 5, 0, 5, 999999999 FROM accounts",
	  "23514" },
	/* An entry added to a transaction already balanced. */
	{ ENTRIES("5", "-5", "999999999") "; INSERT INTO ledger_entries (transaction_id,"
	  " account_id, amount, balance_before, balance_after, version) SELECT currval("
	  "'ledger_transactions_id_seq'), min(id), 5, 0, 5, 999999998 FROM accounts", "23514" },
	/* One request's transfers (transfers_one_group): one group id per ledger transaction... */
	{ "INSERT INTO ledger_transactions (kind) VALUES ('transfer'); INSERT INTO transfers (id,"
	  " ledger_transaction_id, merchant_id, vendor_account_id, amount, position, group_id)"
	  " SELECT 'tr_' || md5(a.id || 'rules'), currval('ledger_transactions_id_seq'), (SELECT"
	  " min(id) FROM merchants), a.id, 1, a.n - 1, 'trg_' || md5(a.id || 'rules') FROM (SELECT"
	  " id, row_number() OVER (ORDER BY id) AS n FROM accounts ORDER BY id LIMIT 2) a",
	  "23514" },
	/* ... also when a later statement adds one of another group ... */
	{ TRANSFERS("1", "idempotency_key", "NULL") "; INSERT INTO transfers (id,"
	  " ledger_transaction_id, merchant_id, vendor_account_id, amount, position, group_id)"
	  " SELECT 'tr_' || md5('rules 2'), currval('ledger_transactions_id_seq'), (SELECT min(id)"
	  " FROM merchants), max(id), 1, 7, 'trg_' || md5('rules 2') FROM accounts", "23514" },
	/* ... a row written without one gets its transaction's (transfers_group) ... */
	{ TRANSFERS("1", "idempotency_key", "NULL") "; INSERT INTO transfers (id,"
	  " ledger_transaction_id, merchant_id, vendor_account_id, amount, position) SELECT"
	  " 'tr_' || md5('rules 2'), currval('ledger_transactions_id_seq'), (SELECT min(id) FROM"
	  " merchants), max(id), 1, 7 FROM accounts", "00000" },
	/* ... and the Idempotency-Key is the writing transaction's. */
	{ TRANSFERS("1", "idempotency_key", "'forged'"), "23514" },
	{ IDEM("'key-1'") TRANSFERS("1", "idempotency_key", "'key-1'"), "00000" },
	{ IDEM("'key-1'") TRANSFERS("1", "idempotency_key", "'key-2'"), "23514" },
	/* A merchant is kept (merchants_kept): never deleted, renumbered or truncated... */
	{ MERCHANT "; UPDATE merchants SET name = 'rules 2' WHERE name = 'rules'", "00000" },
	{ MERCHANT "; DELETE FROM merchants WHERE name = 'rules'", "23001" },
	{ MERCHANT "; UPDATE merchants SET id = DEFAULT WHERE name = 'rules'", "23001" },
	{ "TRUNCATE merchants CASCADE", "23001" },
	/* ... and a session's merchant exists (payment_sessions_merchant). */
	{ SESSION("(SELECT min(id) FROM merchants)"), "00000" },
	{ SESSION("(SELECT max(id) + 1 FROM merchants)"), "23503" },
	{ SESSION("(SELECT min(id) FROM merchants)") "; UPDATE payment_sessions SET merchant_id ="
	  " (SELECT max(id) + 1 FROM merchants) WHERE user_id = 'rules'", "23503" },
	/* ... and an idempotency record's (idempotency_keys_merchant). */
	{ IDEM_RECORD("(SELECT min(id) FROM merchants)"), "00000" },
	{ IDEM_RECORD("(SELECT max(id) + 1 FROM merchants)"), "23503" },
};

START_TEST(test_rule)
{
	PGconn *c = db_connect_as(NULL);
	char state[6], got[6], msg[512];

	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(db_state(c, "BEGIN", 0, NULL, state), "00000");
	db_state(c, rules[_i].sql, 0, NULL, got);
	snprintf(msg, sizeof(msg), "%s", PQerrorMessage(c));
	db_state(c, "ROLLBACK", 0, NULL, state);
	PQfinish(c);
	ck_assert_msg(strcmp(got, rules[_i].state) == 0, "rule %d: %s: %s, not %s: %s", _i,
	    rules[_i].sql, got, rules[_i].state, msg);
}
END_TEST

/*
 * A session or an idempotency record being written holds no lock on its merchant's row
 * (sql/039): the foreign keys they had took FOR KEY SHARE on it until the end of each
 * create-session's transaction, and the concurrent ones of a busy merchant shared that lock
 * through a new MultiXact each. While such a row of merchant A is written and not yet
 * committed, A's row can be locked FOR UPDATE (which conflicts with FOR KEY SHARE) without
 * waiting.
 */
static const char *const unlocked[] = { SESSION("$1"), IDEM_RECORD("$1") };

START_TEST(test_row_locks_no_merchant)
{
	PGconn *writer = db_connect_as(NULL), *other = db_connect_as(NULL);
	const char *m[] = { fx.merchant_a };
	char state[6], got[6], msg[512];

	ck_assert_ptr_nonnull(writer);
	ck_assert_ptr_nonnull(other);
	ck_assert_str_eq(db_state(writer, "BEGIN", 0, NULL, state), "00000");
	ck_assert_msg(strcmp(db_state(writer, unlocked[_i], 1, m, state), "00000") == 0,
	    "%s: %s", unlocked[_i], PQerrorMessage(writer));
	db_state(other, "SELECT 1 FROM merchants WHERE id = $1 FOR UPDATE NOWAIT", 1, m, got);
	snprintf(msg, sizeof(msg), "%s", PQerrorMessage(other));
	db_state(writer, "ROLLBACK", 0, NULL, state);
	PQfinish(writer);
	PQfinish(other);
	ck_assert_msg(strcmp(got, "00000") == 0, "%s locks the merchant's row: %s %s",
	    unlocked[_i], got, msg);
}
END_TEST

/*
 * A posting waiting for its accounts holds no lock on its merchant's row (sql/040): it
 * inserted its ledger transaction, whose foreign key took FOR KEY SHARE on the merchant's row,
 * before it locked the accounts, so a busy merchant's payments, queued at its balance, all
 * held that row at once through a MultiXact. Here one connection holds the merchant's
 * account; a posting to it waits; meanwhile the merchant's row can be locked FOR UPDATE
 * without waiting. Everything is rolled back.
 */
START_TEST(test_posting_waits_unlocked)
{
	PGconn *holder = db_connect_as(NULL), *poster = db_connect_as(NULL),
	    *other = db_connect_as(NULL);
	const char *m[] = { fx.merchant_a }, *p[2];
	char accounts[64], state[6], got[6] = "", msg[512] = "", posted[512] = "", pid[16];
	const char *v;
	PGresult *r;
	int i, waiting = 0;

	ck_assert_ptr_nonnull(holder);
	ck_assert_ptr_nonnull(poster);
	ck_assert_ptr_nonnull(other);
	v = db_valuev("SELECT mp_merchant_account($1, 'AFN') || ' ' || mp_funding_account('AFN')",
	    1, m);
	ck_assert_ptr_nonnull(v);
	snprintf(accounts, sizeof(accounts), "%s", v);
	p[0] = fx.merchant_a;
	p[1] = accounts;
	ck_assert_str_eq(db_state(holder, "BEGIN", 0, NULL, state), "00000");
	ck_assert_str_eq(db_state(holder, "SELECT 1 FROM accounts WHERE id = mp_merchant_account("
	    "$1, 'AFN') FOR UPDATE", 1, m, state), "00000");
	ck_assert_str_eq(db_state(poster, "BEGIN", 0, NULL, state), "00000");
	/* The funding account pays the merchant's 0.01. */
	ck_assert_int_eq(PQsendQueryParams(poster, "SELECT mp_post('payment', $1, 'rules', 'AFN', "
	    "ARRAY[split_part($2, ' ', 2), split_part($2, ' ', 1)]::bigint[], ARRAY[-1, 1])", 2,
	    NULL, p, NULL, NULL, 0), 1);
	snprintf(pid, sizeof(pid), "%d", PQbackendPID(poster));
	for (i = 0; i < 500 && !waiting; i++) {
		v = db_value("SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $1",
		    pid);
		waiting = v != NULL && strcmp(v, "t") == 0;
		if (!waiting)
			usleep(10000);
	}
	if (waiting) {
		db_state(other, "SELECT 1 FROM merchants WHERE id = $1 FOR UPDATE NOWAIT", 1, m, got);
		snprintf(msg, sizeof(msg), "%s", PQerrorMessage(other));
	}
	db_state(holder, "ROLLBACK", 0, NULL, state);
	while ((r = PQgetResult(poster)) != NULL) {
		if (PQresultStatus(r) != PGRES_TUPLES_OK)
			snprintf(posted, sizeof(posted), "%s", PQresultErrorMessage(r));
		PQclear(r);
	}
	db_state(poster, "ROLLBACK", 0, NULL, state);
	PQfinish(holder);
	PQfinish(poster);
	PQfinish(other);
	ck_assert_msg(waiting, "the posting did not wait for the merchant's account");
	ck_assert_msg(strcmp(got, "00000") == 0, "a posting waiting for its accounts locks the "
	    "merchant's row: %s %s", got, msg);
	ck_assert_msg(posted[0] == '\0', "the posting failed: %s", posted);
}
END_TEST

/*
 * The ENTRIES and TRANSFERS rules write on the first accounts: two at least, also when this
 * suite runs alone on a new stack, before any other has made one.
 */
static void
two_accounts(void)
{
	const char *n = db_value("SELECT count(*) FROM accounts", NULL);
	int i;

	for (i = n != NULL ? atoi(n) : 0; i < 2; i++)
		if (ctl("account create --kind customer") == NULL) {
			fprintf(stderr, "check_ledger_rules: cannot make an account\n");
			exit(1);
		}
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("ledger rules", "rules", 60, &t);

	tcase_add_loop_test(t, test_rule, 0, NELEM(rules));
	tcase_add_loop_test(t, test_row_locks_no_merchant, 0, NELEM(unlocked));
	tcase_add_test(t, test_posting_waits_unlocked);
	return fixture_main(s, two_accounts, NULL);
}
