/*
 * marketpayctl db roles against the stack's database: the stack's workers and daemon log in
 * with roles it made (tests/stack.sh), and what those login roles may and may not do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "fixture.h"

#define OUT "\"$MARKETPAY_STACK_DIR/roles.out\""

/* Runs sql as the login role user: its SQLSTATE ("00000": it ran; "LOGIN": no login). */
static const char *
as_role(const char *user, const char *sql)
{
	static char state[6];

	return db_as(user, sql, state);
}

START_TEST(test_lists_the_stack_roles)
{
	ck_assert_int_eq(sh(CTL "db roles >" OUT), 0);
	ck_assert_int_eq(sh("grep -qx 'marketpay_app mp_worker' " OUT), 0);
	ck_assert_int_eq(sh("grep -qx 'marketpay_webhookd mp_webhookd' " OUT), 0);
	ck_assert_int_eq(sh("grep -qx 'marketpay_readonly mp_dba' " OUT), 0);
	sh("rm -f " OUT);
}
END_TEST

/* Each program's connections say who they are to the DBA: program/environment. */
START_TEST(test_application_names)
{
	ck_assert_str_eq(db_value("SELECT string_agg(DISTINCT usename || ' ' || application_name,"
	    " ',' ORDER BY usename || ' ' || application_name) FROM pg_stat_activity"
	    " WHERE usename IN ('mp_worker', 'mp_webhookd')", NULL),
	    "mp_webhookd marketpay-webhookd/sandbox,mp_worker marketpay-fcgi/sandbox");
}
END_TEST

START_TEST(test_readonly_role_reads_and_writes_nothing)
{
	ck_assert_int_eq(sh(CTL "db roles --readonly mp_report_t >/dev/null"), 0);
	/* Running it again changes nothing and succeeds. */
	ck_assert_int_eq(sh(CTL "db roles --readonly mp_report_t >/dev/null"), 0);
	ck_assert_str_eq(db_value("SELECT rolcanlogin::text FROM pg_roles WHERE rolname = $1",
	    "mp_report_t"), "true");
	ck_assert_str_eq(as_role("mp_report_t", "SELECT count(*) FROM ledger_entries"), "00000");
	ck_assert_str_eq(as_role("mp_report_t", "SELECT * FROM trial_balance"), "00000");
	ck_assert_str_eq(as_role("mp_report_t", "DELETE FROM idempotency_keys"), "42501");
	ck_assert_str_eq(as_role("mp_report_t",
	    "INSERT INTO ledger_transactions (kind) VALUES ('adjustment')"), "42501");
	ck_assert_str_eq(as_role("mp_report_t", "UPDATE accounts SET balance = 0"), "42501");
	/* Nor through a function that runs with its owner's rights: it may run none. */
	ck_assert_str_eq(db_value("SELECT coalesce(string_agg(p.proname, ','), '') FROM pg_proc p"
	    " WHERE p.prosecdef AND p.pronamespace = 'public'::regnamespace"
	    " AND has_function_privilege('marketpay_readonly', p.oid, 'EXECUTE')", NULL), "");
}
END_TEST

/*
 * Every SQL and PL/pgSQL function of ours is executable only by the roles granted it:
 * PostgreSQL lets PUBLIC execute a new function unless its migration revokes that.
 */
START_TEST(test_no_function_for_public)
{
	ck_assert_str_eq(db_value("SELECT coalesce(string_agg(p.proname, ',' ORDER BY p.proname),"
	    " '') FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang"
	    " WHERE p.pronamespace = 'public'::regnamespace AND l.lanname IN ('sql', 'plpgsql')"
	    " AND has_function_privilege('public', p.oid, 'EXECUTE')", NULL), "");
}
END_TEST

/*
 * Each group role executes exactly the functions marketpay-ledger(7) lists for it (name and
 * number of arguments, every overload): a grant by mistake, or a form left executable after
 * the service stopped calling it, fails here.
 */
static const struct {
	const char *role;
	const char *functions;
} role_functions[] = {
	{ "marketpay_app",
	    "mp_balance_json/1,mp_balance_transaction_json/1,mp_cancel_session/1,"
	    "mp_create_session/11,mp_environment/0,mp_event_json/1,"
	    "mp_expire_session/2,mp_iso/1,mp_key_use_stale/1,mp_key_used/1,"
	    "mp_list/10,mp_list_cursor/7,mp_money_text/1,mp_pay_test_card/4,"
	    "mp_pay_wallet/4,mp_purge_events/2,mp_purge_idempotency/1,"
	    "mp_purge_sessions/2,mp_redeliver_event/2,mp_refund_json/1,"
	    "mp_refund_session/6,mp_reversal_json/1,mp_reverse_transfer/4,"
	    "mp_rotate_webhook_secret/2,mp_session_json/1,mp_session_rules/1,"
	    "mp_session_status/2,mp_settlement_account/1,mp_transfer_json/1,"
	    "mp_transfer_send/8,mp_uuid_v7/0,mp_webhook_backlog/0" },
	{ "marketpay_webhookd",
	    "mp_environment/0,mp_expire_sessions/1,mp_iso/1,mp_money_text/1,"
	    "mp_session_status/2,mp_webhook_claim/4,mp_webhook_record/11" },
	{ "marketpay_readonly",
	    "mp_balance_json/1,mp_balance_transaction_json/1,mp_environment/0,"
	    "mp_event_json/1,mp_iso/1,mp_key_use_stale/1,mp_list/10,mp_list_cursor/7,"
	    "mp_money_text/1,mp_refund_json/1,mp_reversal_json/1,mp_session_json/1,"
	    "mp_session_status/2,mp_settlement_account/1,mp_transfer_json/1" },
};

START_TEST(test_role_functions)
{
	ck_assert_str_eq(db_value("SELECT coalesce(string_agg(p.proname || '/' || p.pronargs, ','"
	    " ORDER BY p.proname, p.pronargs), '') FROM pg_proc p"
	    " WHERE p.pronamespace = 'public'::regnamespace"
	    " AND has_function_privilege($1, p.oid, 'EXECUTE')", role_functions[_i].role),
	    role_functions[_i].functions);
}
END_TEST

/*
 * The group roles are the cluster's, shared by every environment's database: CONNECT is what
 * keeps one environment's roles out of the other's database. db roles (tests/stack.sh ran
 * it) took it from PUBLIC and gave it to each login role it named.
 */
START_TEST(test_connect_only_the_named_roles)
{
	ck_assert_str_eq(db_value("SELECT has_database_privilege('public', current_database(),"
	    " 'CONNECT')::text", NULL), "false");
	ck_assert_str_eq(db_value("SELECT string_agg(r, ',' ORDER BY r) FROM"
	    " unnest(ARRAY['mp_worker', 'mp_webhookd', 'mp_dba', 'marketpay_app']) r"
	    " WHERE has_database_privilege(r, current_database(), 'CONNECT')", NULL),
	    "mp_dba,mp_webhookd,mp_worker");
}
END_TEST

/* The daily purge timer runs marketpayctl with the workers' role: it may purge, only that. */
START_TEST(test_worker_role_may_purge)
{
	ck_assert_int_eq(sh(CTL "idempotency purge >/dev/null"), 0);
	ck_assert_int_eq(sh("\"$MARKETPAYCTL\" -c \"$MARKETPAY_STACK_DIR/worker.conf\""
	    " idempotency purge >/dev/null"), 0);
	ck_assert_str_eq(as_role("mp_worker", "SELECT mp_purge_idempotency(60)"), "00000");
	ck_assert_str_eq(as_role("mp_worker", "DELETE FROM idempotency_keys"), "42501");
	ck_assert_str_eq(as_role("mp_report_t", "SELECT mp_purge_idempotency(60)"), "42501");
	/* The retention functions alike (sql/016_retention.sql). */
	ck_assert_int_eq(sh("\"$MARKETPAYCTL\" -c \"$MARKETPAY_STACK_DIR/worker.conf\""
	    " purge >/dev/null"), 0);
	ck_assert_str_eq(as_role("mp_report_t", "SELECT * FROM mp_purge_events(90, 1)"), "42501");
	ck_assert_str_eq(as_role("mp_report_t", "SELECT * FROM mp_purge_sessions(365, 1)"),
	    "42501");
	ck_assert_str_eq(as_role("mp_webhookd", "SELECT * FROM mp_purge_events(90, 1)"), "42501");
}
END_TEST

/* What the workers' login role may not do to the ledger, whatever the statement's shape. */
static const char *const ledger_writes[] = {
	"UPDATE ledger_entries SET amount = amount",
	"DELETE FROM ledger_entries",
	"UPDATE ledger_transactions SET kind = kind",
	"DELETE FROM ledger_transactions",
	"UPDATE accounts SET balance = balance + 1",
	"TRUNCATE ledger_entries CASCADE",
};

START_TEST(test_worker_login_cannot_change_ledger)
{
	const char *before = db_value("SELECT count(*) || '/' || coalesce(sum(amount), 0)"
	    " FROM ledger_entries", NULL);
	char saved[128];

	snprintf(saved, sizeof(saved), "%s", before ? before : "");
	ck_assert_str_eq(as_role("mp_worker", "SELECT count(*) FROM ledger_entries"), "00000");
	ck_assert_msg(strcmp(as_role("mp_worker", ledger_writes[_i]), "42501") == 0,
	    "mp_worker: %s answered %s, not 42501", ledger_writes[_i], as_role("mp_worker",
	    ledger_writes[_i]));
	ck_assert_str_eq(db_value("SELECT count(*) || '/' || coalesce(sum(amount), 0)"
	    " FROM ledger_entries", NULL), saved);
}
END_TEST

/* Names are checked before anything is created: no quoting games, no system roles. */
static const char *const bad_names[] = {
	"'Robert\\\"; DROP TABLE accounts; --'", "pg_monitor", "marketpay_app", "UpperCase",
	"9lives", "''",
};

START_TEST(test_bad_role_names_refused)
{
	const char *before = db_value("SELECT count(*) FROM pg_roles", NULL);
	char saved[32];

	snprintf(saved, sizeof(saved), "%s", before ? before : "");
	ck_assert_int_ne(sh(CTL "db roles --app %s >/dev/null 2>&1", bad_names[_i]), 0);
	ck_assert_str_eq(db_value("SELECT count(*) FROM pg_roles", NULL), saved);
}
END_TEST

START_TEST(test_usage_errors)
{
	ck_assert_int_ne(sh(CTL "db roles --app >/dev/null 2>&1"), 0);
	ck_assert_int_ne(sh(CTL "db roles --owner mp_x >/dev/null 2>&1"), 0);
	ck_assert_ptr_null(db_value("SELECT rolname FROM pg_roles WHERE rolname = $1", "mp_x"));
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("roles", "db roles", 60, &t);

	tcase_add_test(t, test_lists_the_stack_roles);
	tcase_add_test(t, test_application_names);
	tcase_add_test(t, test_readonly_role_reads_and_writes_nothing);
	tcase_add_test(t, test_connect_only_the_named_roles);
	tcase_add_test(t, test_no_function_for_public);
	tcase_add_loop_test(t, test_role_functions, 0,
	    sizeof(role_functions) / sizeof(role_functions[0]));
	tcase_add_test(t, test_worker_role_may_purge);
	tcase_add_loop_test(t, test_worker_login_cannot_change_ledger, 0,
	    sizeof(ledger_writes) / sizeof(ledger_writes[0]));
	tcase_add_loop_test(t, test_bad_role_names_refused, 0,
	    sizeof(bad_names) / sizeof(bad_names[0]));
	tcase_add_test(t, test_usage_errors);
	return run_suite(s);
}
