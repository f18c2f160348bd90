/*
 * Outages against the real stack (tests/integration.sh): a worker killed, the database gone
 * and back, the pool stopped with a request in hand. The last suite that needs the pool: its
 * last case stops it. First, the database module's pipeline (db_pipeline: several
 * statements in one round trip, as an Idempotency-Key's begin and end run) against the
 * stack's database: a failure in the middle, a COMMIT that rolls back, the connection lost.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <libpq-fe.h>

#include "checkout_form.h"
#include "db.h"
#include "fixture.h"
#include "http.h"
#include "refunds.h"
#include "transfers.h"

enum { T_PLUS_ONE, T_ONE_OVER };
static const struct db_sql pipeline_sql[] = {
	{ "t_plus_one", "SELECT $1::int + 1" },
	{ "t_one_over", "SELECT 1 / $1::int" },
};

START_TEST(test_pipeline)
{
	struct db *db = db_new("");
	const char *one[] = { "1" }, *zero[] = { "0" };
	const struct db_step ok[] = {
		{ .sql = "BEGIN" }, { .stmt = T_PLUS_ONE, .n = 1, .params = one }, { .sql = "COMMIT" },
	}, bad[] = {
		{ .sql = "BEGIN" }, { .stmt = T_ONE_OVER, .n = 1, .params = zero },
		{ .stmt = T_PLUS_ONE, .n = 1, .params = one }, { .sql = "COMMIT" },
	}, commit[] = { { .sql = "COMMIT" } }, nosuch[] = { { .stmt = 7 } }, hold[] = {
		{ .sql = "BEGIN" }, { .sql = "SELECT pg_advisory_xact_lock(7301)" },
	}, wait[] = {
		{ .sql = "BEGIN" }, { .sql = "SET LOCAL lock_timeout = '50ms'" },
		{ .sql = "SELECT pg_advisory_xact_lock(7301)" }, { .sql = "COMMIT" },
	};
	struct db *other = db_new("");
	char pid[16];
	PGresult *r;
	enum err e;

	ck_assert_ptr_nonnull(db);
	db_set_statements(db, pipeline_sql, 2);
	ck_assert(db_ready(db));
	/* All three in one round trip; the kept result is the middle one's. */
	r = db_pipeline(db, ok, 3, 1, &e);
	ck_assert_int_eq(e, ERR_OK);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(PQgetvalue(r, 0, 0), "2");
	PQclear(r);
	ck_assert_int_eq(PQtransactionStatus(db_conn(db)), PQTRANS_IDLE);
	/* A failure in the middle: its error, the rest not run, the transaction left to roll back. */
	ck_assert_ptr_null(db_pipeline(db, bad, 4, 2, &e));
	ck_assert_int_eq(e, ERR_DB);
	ck_assert_str_eq(db_sqlstate(db), "22012");
	ck_assert_int_eq(PQtransactionStatus(db_conn(db)), PQTRANS_INERROR);
	/* COMMIT of the failed transaction answers ROLLBACK: an error, and the transaction ends. */
	ck_assert_ptr_null(db_pipeline(db, commit, 1, -1, &e));
	ck_assert_int_eq(e, ERR_DB);
	ck_assert_str_eq(db_error(db), "COMMIT rolled back\n");
	ck_assert_int_eq(PQtransactionStatus(db_conn(db)), PQTRANS_IDLE);
	/* Out of pipeline mode: an ordinary statement runs. */
	ck_assert_ptr_nonnull(r = db_run(db, T_PLUS_ONE, 1, one, &e));
	PQclear(r);
	ck_assert_ptr_null(db_pipeline(db, nosuch, 1, -1, &e));
	ck_assert_int_eq(e, ERR_INTERNAL);
	ck_assert_str_eq(db_error(db), "no such prepared statement\n");
	ck_assert_ptr_null(db_pipeline(db, nosuch, 0, -1, &e));
	ck_assert_int_eq(e, ERR_INTERNAL);
	ck_assert_str_eq(db_error(db), "empty pipeline\n");
	/*
	 * A lock held elsewhere past lock_timeout: a conflict (the API's 409), not a broken
	 * connection; the steps after it are not run, and the connection stays for the next.
	 */
	ck_assert(other != NULL && db_ready(other));
	ck_assert_ptr_null(db_pipeline(other, hold, 2, -1, &e));
	ck_assert_int_eq(e, ERR_OK);
	ck_assert_ptr_null(db_pipeline(db, wait, 4, -1, &e));
	ck_assert_int_eq(e, ERR_CONFLICT);
	ck_assert_str_eq(db_sqlstate(db), "55P03");
	ck_assert_ptr_nonnull(db_conn(db));
	ck_assert_int_eq(PQtransactionStatus(db_conn(db)), PQTRANS_INERROR);
	ck_assert_ptr_null(db_pipeline(db, commit, 1, -1, &e));
	ck_assert_ptr_null(db_pipeline(other, commit, 1, -1, &e));
	ck_assert_int_eq(e, ERR_OK);
	db_free(other);
	/* The server ends the connection: unavailable, dropped, and the next use reconnects. */
	snprintf(pid, sizeof(pid), "%d", PQbackendPID(db_conn(db)));
	ck_assert_str_eq(db_value("SELECT pg_terminate_backend($1::int)", pid), "t");
	ck_assert_ptr_null(db_pipeline(db, ok, 3, 1, &e));
	ck_assert_int_eq(e, ERR_UNAVAILABLE);
	ck_assert_ptr_null(db_conn(db));
	ck_assert(db_ready(db));
	ck_assert_ptr_nonnull(r = db_pipeline(db, ok, 3, 1, &e));
	PQclear(r);
	db_free(db);
}
END_TEST

/*
 * The server ends a connection while it idles (a restart, pg_terminate_backend, an idle
 * timeout): db_ready notices before the next statement and connects afresh, so no request
 * fails for it. With nothing to read, db_ready reads nothing.
 */
START_TEST(test_idle_connection_lost)
{
	struct db *db = db_new("");
	const char *one[] = { "1" };
	const struct db_step ok[] = { { .stmt = T_PLUS_ONE, .n = 1, .params = one } };
	char pid[16];
	PGresult *r;
	enum err e;
	int i;

	ck_assert_ptr_nonnull(db);
	db_set_statements(db, pipeline_sql, 2);
	ck_assert(db_ready(db));
	ck_assert(db_ready(db));
	snprintf(pid, sizeof(pid), "%d", PQbackendPID(db_conn(db)));
	ck_assert_str_eq(db_value("SELECT pg_terminate_backend($1::int, 5000)", pid), "t");
	/* Its FATAL message and the end of the stream are on their way: wait for them. */
	for (i = 0; i < 100 && strcmp(db_value("SELECT count(*) FROM pg_stat_activity"
	    " WHERE pid = $1::int", pid), "0") != 0; i++)
		usleep(20000);
	usleep(100000);
	ck_assert(db_ready(db));
	ck_assert_ptr_nonnull(db_conn(db));
	ck_assert_int_ne(PQbackendPID(db_conn(db)), atoi(pid));
	ck_assert_ptr_nonnull(r = db_pipeline(db, ok, 1, 0, &e));
	ck_assert_int_eq(e, ERR_OK);
	ck_assert_str_eq(PQgetvalue(r, 0, 0), "2");
	PQclear(r);
	db_free(db);
}
END_TEST

START_TEST(test_database_outage)
{
	struct http_resp r;
	char hv[16], pv[16], sid[37], page[64];
	int i, ok = 0, page_status;

	new_session(fx.auth_a, GOOD_BODY, sid);
	snprintf(page, sizeof(page), "/checkout/%s", sid);
	/* The database goes away: 503 with the usual body, and the workers stay up. */
	ck_assert_int_eq(sh("\"$MP_STACK\" pg-stop \"$MARKETPAY_STACK_DIR\""), 0);
	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, NULL, &r), 0);
	assert_fail(&r, 503, "temporarily unavailable");
	if (http_header(&r, "Retry-After", hv, sizeof(hv)) == NULL)
		hv[0] = '\0';
	http_free(&r);
	/* The customer's page too, with when to try again (it had none). */
	ck_assert_int_eq(http_do("GET", page, NULL, NULL, 0, &r), 0);
	page_status = r.status;
	if (http_header(&r, "Retry-After", pv, sizeof(pv)) == NULL)
		pv[0] = '\0';
	http_free(&r);
	ck_assert_int_eq(http_do("GET", "/api/v1/health", NULL, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 503);
	http_free(&r);
	/* It comes back: the same workers reconnect on their own within their back-off. */
	ck_assert_int_eq(sh("\"$MP_STACK\" pg-start \"$MARKETPAY_STACK_DIR\""), 0);
	/* Checked once the database is back: a failure must not leave it stopped for the rest. */
	ck_assert_str_eq(hv, "1");
	ck_assert_int_eq(page_status, 503);
	ck_assert_str_eq(pv, "1");
	for (i = 0; i < 100 && !ok; i++) {
		ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, NULL, &r), 0);
		ok = r.status == 200;
		ck_assert(r.status == 200 || r.status == 503);
		http_free(&r);
		if (!ok)
			usleep(100000);
	}
	ck_assert_msg(ok, "the pool did not recover after the database came back");
}
END_TEST

/* The refund every refund case sends. */
#define REFUND_4 "{\"amount\":4.00}"

/* A refund's case: a merchant (PIN 1234, fee 1.00) paid 10.00 from a new wallet. */
struct refund_case {
	struct merchant m;
	char wallet[16], sid[37];
	const char *h[4];   /* JSON_CT, the merchant's key, an Idempotency-Key or NULL */
	int fd[2];          /* refund_waiting's child writes its status code here */
	pid_t child;
	bool waited;        /* the child's request was seen waiting for a lock */
};

/* Makes t's merchant, wallet and session paid for order; key: an Idempotency-Key or NULL. */
static void
paid_case(struct refund_case *t, const char *order, const char *key)
{
	memset(t, 0, sizeof(*t));
	new_merchant(&t->m, "1234", "1.00", true);
	new_customer("10.00", t->wallet);
	paid_session(t->m.auth, "10.00", order, t->wallet, t->sid);
	t->h[0] = JSON_CT;
	t->h[1] = t->m.auth;
	t->h[2] = key;
}

/*
 * After t's refund of 4.00 answered 503: nothing refunded or moved; the same request then
 * refunds, once.
 */
static void
refund_undone_then_retried(const struct refund_case *t)
{
	struct http_resp r;

	ck_assert_str_eq(db_value("SELECT count(*) FROM refunds WHERE session_id = $1::uuid",
	    t->sid), "0");
	ck_assert_str_eq(db_value("SELECT status || ' ' || amount_refunded FROM payment_sessions"
	    " WHERE id = $1::uuid", t->sid), "paid 0");
	ck_assert_int_eq(balance_of(t->wallet), 0);
	ck_assert_int_eq(balance_of(t->m.acct), 1100);
	assert_ledger_ok();
	ck_assert_int_eq(http_do("POST", refunds_path(t->sid), t->h, REFUND_4, -1, &r), 0);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	http_free(&r);
	ck_assert_int_eq(balance_of(t->wallet), 400);
	ck_assert_int_eq(balance_of(t->m.acct), 700);
	assert_ledger_ok();
}

/* ALTER SYSTEM what (SET name = value, or RESET name), then the reload that applies it. */
static void
alter_system(const char *what)
{
	ck_assert_int_eq(sh("psql -X -qAt -c \"ALTER SYSTEM %s\" -c 'SELECT pg_reload_conf()'"
	    " >/dev/null", what), 0);
}

/*
 * The database takes no writes (a demoted primary after a failover, or a standby: SQLSTATE
 * 25006): a 503 with the usual body, nothing stored, and writes again once it takes them.
 * It was a 500. The checkout page's payment gets a 503 too, with its Retry-After.
 */
START_TEST(test_read_only)
{
	struct http_resp r, page;
	char before[32], ledger[32], sid[37], ra[8];
	int i, ok = 0;

	open_session(fx.auth_a, "5.00", "order-read-only", sid);
	snprintf(before, sizeof(before), "%s", db_value("SELECT count(*) FROM payment_sessions",
	    NULL));
	snprintf(ledger, sizeof(ledger), "%s", db_value("SELECT count(*) FROM ledger_transactions",
	    NULL));
	alter_system("SET default_transaction_read_only = on");
	usleep(300000);
	/* Both requests first, then writes back on, then the checks: a failed check must not
	 * leave the database read-only for the tests after this one. */
	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, NULL, &r), 0);
	/* The customer's payment on the page: 503, with when to try again; nothing taken. */
	pay_card(sid, TEST_CARD, &page);
	alter_system("RESET default_transaction_read_only");
	assert_fail(&r, 503, "temporarily unavailable");
	http_free(&r);
	ck_assert_msg(page.status == 503, "%ld %s", page.status, page.body);
	ck_assert_str_eq(http_header(&page, "Retry-After", ra, sizeof(ra)), "1");
	http_free(&page);
	ck_assert_str_eq(db_value("SELECT count(*) FROM payment_sessions", NULL), before);
	ck_assert_str_eq(db_value("SELECT status FROM payment_sessions WHERE id = $1::uuid", sid),
	    "open");
	ck_assert_str_eq(db_value("SELECT count(*) FROM ledger_transactions", NULL), ledger);
	for (i = 0; i < 50 && !ok; i++) {
		ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, NULL, &r), 0);
		ok = r.status == 200;
		ck_assert_msg(r.status == 200 || r.status == 503, "%ld %s", r.status, r.body);
		http_free(&r);
		if (!ok)
			usleep(100000);
	}
	ck_assert_msg(ok, "no write succeeded once the database took writes again");
}
END_TEST

/*
 * Another transaction takes the refund's locks the other way round: it holds the merchant's
 * account, the refund holds the wallet and waits for that account, and the other asks for
 * the wallet. PostgreSQL breaks the deadlock by cancelling the refund, which waited first
 * (40P01). Nothing was done: a 503 to retry (it was a 500, "internal error"), nothing
 * stored or moved, and the same request with the same Idempotency-Key refunds once retried.
 * The other transaction runs in a child, as a DBA's session would beside the service.
 */
START_TEST(test_deadlock_broken)
{
	static const char lock[] = "SELECT 1 FROM accounts WHERE account_number = $1 FOR UPDATE";
	struct refund_case t;
	struct http_resp r;
	char st[6];
	int fd[2], status = 0;
	pid_t child;

	paid_case(&t, "order-deadlock", "Idempotency-Key: deadlock-1");
	ck_assert_int_eq(pipe(fd), 0);
	if ((child = fork()) == 0) {
		const char *acct[] = { t.m.acct }, *w[] = { t.wallet };
		PGconn *c = db_connect_as(NULL);
		int i, ok = PQstatus(c) == CONNECTION_OK &&
		    strcmp(db_state(c, "BEGIN", 0, NULL, st), "00000") == 0 &&
		    strcmp(db_state(c, lock, 1, acct, st), "00000") == 0;

		/*
		 * Held: the parent sends the refund; once it waits, the wallet is asked for.
		 * lock_waiters() asks on the fixture's connection, inherited: the parent uses it
		 * again only once this child is gone, and _exit sends no Terminate on it.
		 */
		if (write(fd[1], "h", 1) != 1 || !ok)
			_exit(2);
		for (i = 0; i < 100 && lock_waiters() < 1; i++)
			usleep(50000);
		/* Later than the refund by far: its deadlock_timeout runs out first, not ours. */
		usleep(300000);
		ok = i < 100 && strcmp(db_state(c, lock, 1, w, st), "00000") == 0 &&
		    strcmp(db_state(c, "ROLLBACK", 0, NULL, st), "00000") == 0;
		PQfinish(c);
		_exit(ok ? 0 : 3);
	}
	ck_assert_int_eq(read(fd[0], st, 1), 1);
	ck_assert_int_eq(http_do("POST", refunds_path(t.sid), t.h, REFUND_4, -1, &r), 0);
	waitpid(child, &status, 0);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the other side: %d", status);
	assert_fail(&r, 503, "temporarily unavailable");
	ck_assert_str_eq(http_header(&r, "Retry-After", st, sizeof(st)), "1");
	http_free(&r);
	refund_undone_then_retried(&t);
}
END_TEST

/*
 * Sends t's refund of 4.00 from a child, and waits until a backend waits for a lock (5 s at
 * most; t->waited says whether one did). refund_answer() reads the child's status code.
 */
static void
refund_waiting(struct refund_case *t)
{
	struct http_resp r;
	int i;

	ck_assert_int_eq(pipe(t->fd), 0);
	if ((t->child = fork()) == 0) {
		long st = http_do("POST", refunds_path(t->sid), t->h, REFUND_4, -1, &r) == 0 ?
		    r.status : -1;

		_exit(write(t->fd[1], &st, sizeof(st)) == sizeof(st) ? 0 : 1);
	}
	for (i = 0; i < 100 && lock_waiters() < 1; i++)
		usleep(50000);
	t->waited = i < 100;
}

/* The status code of refund_waiting's request (-1: none), once its child is gone. */
static long
refund_answer(struct refund_case *t)
{
	long got = -1;
	int status;

	if (read(t->fd[0], &got, sizeof(got)) != (ssize_t)sizeof(got))
		got = -1;
	waitpid(t->child, &status, 0);
	close(t->fd[0]);
	close(t->fd[1]);
	return got;
}

/*
 * A statement cancelled (57014: statement_timeout, or pg_cancel_backend as here) while the
 * refund waits for its session, which another transaction holds: a 503, nothing refunded,
 * and the refund goes through once the other is done. It was a 500.
 */
START_TEST(test_statement_cancelled)
{
	struct refund_case t;
	const char *p[1];
	long got;
	PGconn *c;

	paid_case(&t, "order-cancel", NULL);
	p[0] = t.sid;
	c = db_hold("SELECT 1 FROM payment_sessions WHERE id = $1::uuid FOR UPDATE", 1, p);
	refund_waiting(&t);
	ck_assert(t.waited);
	ck_assert_str_eq(db_value("SELECT count(*) FILTER (WHERE pg_cancel_backend(pid)) FROM"
	    " pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
	    NULL), "1");
	got = refund_answer(&t);
	db_release(c);
	ck_assert_int_eq(got, 503);
	refund_undone_then_retried(&t);
}
END_TEST

/*
 * A serialization failure (40001): a DBA made repeatable read the default, and another
 * transaction updates the session while the refund waits for it, so the refund cannot go on
 * from its snapshot. Nothing was done: a 503 to retry, nothing refunded, and the same
 * request with the same Idempotency-Key refunds once retried.
 */
START_TEST(test_serialization_failure)
{
	struct refund_case t;
	const char *p[1];
	long got;
	PGconn *c;

	paid_case(&t, "order-serialization", "Idempotency-Key: serialization-1");
	p[0] = t.sid;
	alter_system("SET default_transaction_isolation = 'repeatable read'");
	usleep(300000);
	c = db_hold("UPDATE payment_sessions SET status = status WHERE id = $1::uuid", 1, p);
	/* The refund has its snapshot and waits for the session: the update commits. */
	refund_waiting(&t);
	db_release(c);
	got = refund_answer(&t);
	alter_system("RESET default_transaction_isolation");
	usleep(300000);
	ck_assert(t.waited);
	ck_assert_int_eq(got, 503);
	refund_undone_then_retried(&t);
}
END_TEST

/* The pool's worker pids, newest last, as one comparable string. */
static const char *
worker_pids(void)
{
	static char out[512];
	/* The workers' command lines start with the program; multiwatch's names it later. */
	FILE *p = popen("pgrep -f \"^[^ ]*marketpay-fcgi -c $MARKETPAY_STACK_DIR/worker.conf\""
	    " | sort -n | tr '\\n' ' '", "r");
	size_t n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;

	out[n] = '\0';
	if (p != NULL)
		pclose(p);
	return out;
}

START_TEST(test_worker_killed)
{
	char before[512], after[512], victim[32];
	struct http_resp r;
	int i, count_before = 0, count_after = 0;

	snprintf(before, sizeof(before), "%s", worker_pids());
	for (i = 0; before[i] != '\0'; i++)
		count_before += before[i] == ' ';
	ck_assert_int_ge(count_before, 2);
	sscanf(before, "%31s", victim);
	/* A worker dies hard: multiwatch starts another, and the pool keeps serving. */
	ck_assert_int_eq(sh("kill -KILL %s", victim), 0);
	for (i = 0; i < 50 && count_after != count_before; i++) {
		usleep(100000);
		snprintf(after, sizeof(after), "%s", worker_pids());
		count_after = 0;
		for (size_t j = 0; after[j] != '\0'; j++)
			count_after += after[j] == ' ';
	}
	ck_assert_int_eq(count_after, count_before);
	ck_assert_msg(strstr(after, victim) == NULL || strstr(after, victim)[strlen(victim)] != ' ',
	    "worker %s still there: %s", victim, after);
	for (i = 0; i < 20; i++) {
		ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, NULL, &r), 0);
		ck_assert_int_eq(r.status, 200);
		http_free(&r);
	}
}
END_TEST

START_TEST(test_graceful_stop)
{
	PGconn *c;
	struct http_resp r;
	int fd[2], status = 0;
	long got = 0;
	pid_t child;

	/*
	 * A request is in hand (it waits on an Idempotency-Key lock we hold) when the pool gets
	 * SIGTERM: the worker must finish it and answer, not drop it (nginx would say 502).
	 */
	c = hold_idempotency_lock(fx.merchant_a, "stop-key");
	ck_assert_int_eq(pipe(fd), 0);
	if ((child = fork()) == 0) {
		long st = create(fx.auth_a, GOOD_BODY, -1, "Idempotency-Key: stop-key", &r) == 0 ?
		    r.status : -1;

		_exit(write(fd[1], &st, sizeof(st)) == sizeof(st) ? 0 : 1);
	}
	usleep(100000);
	ck_assert_int_eq(sh("kill -TERM \"$(cat \"$MARKETPAY_STACK_DIR/pool.pid\")\""), 0);
	ck_assert_int_eq(read(fd[0], &got, sizeof(got)), (ssize_t)sizeof(got));
	waitpid(child, &status, 0);
	db_release(c);
	ck_assert_int_eq(got, 409);
	/* And then the pool is gone: nginx has no worker to pass new requests to. */
	usleep(300000);
	ck_assert_int_eq(http_do("GET", "/api/v1/health", NULL, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 502);
	http_free(&r);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("outage", "outage", 60, &t);

	tcase_add_test(t, test_pipeline);
	tcase_add_test(t, test_idle_connection_lost);
	tcase_add_test(t, test_worker_killed);
	tcase_add_test(t, test_database_outage);
	tcase_add_test(t, test_read_only);
	tcase_add_test(t, test_deadlock_broken);
	tcase_add_test(t, test_statement_cancelled);
	tcase_add_test(t, test_serialization_failure);
	tcase_add_test(t, test_graceful_stop);
	return fixture_main(s, NULL, NULL);
}
