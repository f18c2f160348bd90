/*
 * Outages against the real stack (tests/integration.sh): a worker killed, the database gone
 * and back, the pool stopped with a request in hand. The last suite that needs the pool: its
 * last case stops it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <libpq-fe.h>

#include "fixture.h"
#include "http.h"

START_TEST(test_database_outage)
{
	struct http_resp r;
	int i, ok = 0;

	/* The database goes away: 503 with the usual body, and the workers stay up. */
	ck_assert_int_eq(sh("\"$MP_STACK\" pg-stop \"$MARKETPAY_STACK_DIR\""), 0);
	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, NULL, &r), 0);
	assert_fail(&r, 503, "temporarily unavailable");
	http_free(&r);
	ck_assert_int_eq(http_do("GET", "/api/v1/health", NULL, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 503);
	http_free(&r);
	/* It comes back: the same workers reconnect on their own within their back-off. */
	ck_assert_int_eq(sh("\"$MP_STACK\" pg-start \"$MARKETPAY_STACK_DIR\""), 0);
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

/*
 * The database takes no writes (a demoted primary after a failover, or a standby: SQLSTATE
 * 25006): a 503 with the usual body, nothing stored, and writes again once it takes them.
 * It was a 500.
 */
START_TEST(test_read_only)
{
	struct http_resp r;
	char before[32];
	int i, ok = 0;

	snprintf(before, sizeof(before), "%s", db_value("SELECT count(*) FROM payment_sessions",
	    NULL));
	ck_assert_int_eq(sh("psql -X -qAt -c \"ALTER SYSTEM SET default_transaction_read_only ="
	    " on\" -c 'SELECT pg_reload_conf()' >/dev/null"), 0);
	usleep(300000);
	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, NULL, &r), 0);
	assert_fail(&r, 503, "temporarily unavailable");
	http_free(&r);
	ck_assert_str_eq(db_value("SELECT count(*) FROM payment_sessions", NULL), before);
	ck_assert_int_eq(sh("psql -X -qAt -c 'ALTER SYSTEM RESET default_transaction_read_only'"
	    " -c 'SELECT pg_reload_conf()' >/dev/null"), 0);
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

	tcase_add_test(t, test_worker_killed);
	tcase_add_test(t, test_database_outage);
	tcase_add_test(t, test_read_only);
	tcase_add_test(t, test_graceful_stop);
	return fixture_main(s, NULL, NULL);
}
