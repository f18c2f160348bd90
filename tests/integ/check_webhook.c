/*
 * Integration tests of marketpay-webhookd against the real stack (tests/integration.sh):
 * events inserted into the outbox as the payment code inserts them, delivered to the stack's
 * webhook receiver, which logs each request it gets (headers and exact body) as a JSON line.
 * The stack runs one daemon with webhook_retry_schedule = 1,1,1; some cases start a second.
 * What marketpayctl says and refuses about webhooks: check_webhook_ctl.c.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "crypto.h"
#include "fixture.h"
#include "outbox.h"
#include "receiver.h"

#define RETRIES 3            /* webhook_retry_schedule = 1,1,1 in tests/integration.sh */
#define BODY "{\"type\":\"payment.succeeded\",\"data\":{\"amount\":\"12.50\"," \
    "\"name\":\"Caf\xc3\xa9 \\\"\xe2\x98\x95\\\" \\\\ \\u00e9\"}}"

static char merchant[32];          /* its webhook goes to the receiver */
static char secret[128];           /* ... signed with this */
static char receiver[256];

/* Pids of the daemons the cases start, so that a failed case's daemon is stopped later. */
static void
note_pid(pid_t pid)
{
	FILE *f = fopen(stack_file("test-webhookd.pids"), "a");

	ck_assert_ptr_nonnull(f);
	fprintf(f, "%ld\n", (long)pid);
	fclose(f);
}

static pid_t
stack_daemon(void)
{
	FILE *f = fopen(stack_file("webhookd.pid"), "r");
	long pid = 0;

	ck_assert_msg(f != NULL, "the stack runs no marketpay-webhookd (webhookd.pid)");
	ck_assert_int_eq(fscanf(f, "%ld", &pid), 1);
	fclose(f);
	ck_assert_msg(kill((pid_t)pid, 0) == 0, "the stack's marketpay-webhookd is not running");
	return (pid_t)pid;
}

/* Starts another marketpay-webhookd with config conf, its log to log. */
static pid_t
start_daemon(const char *conf, const char *log)
{
	pid_t pid = fork();
	int fd;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* A process group of its own, with its senders: kill(-pid) reaches them all. */
		setsid();
		if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644)) < 0 ||
		    dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execl(env("MARKETPAY_WEBHOOKD"), "marketpay-webhookd", "-c", conf, (char *)NULL);
		_exit(127);
	}
	note_pid(pid);
	return pid;
}

/* SIGTERMs a daemon the case started and returns its exit status (-1: did not exit). */
static int
stop_daemon(pid_t pid)
{
	long long end = now_ms() + 15000;
	int status;

	kill(pid, SIGTERM);
	while (now_ms() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		usleep(20000);
	}
	kill(-pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/*
 * Puts the stack back as the cases expect it, whatever a failed case left behind: the
 * receiver up, the stack's daemon running, no daemon of ours.
 */
static void
restore(void)
{
	FILE *f = fopen(stack_file("test-webhookd.pids"), "r");
	long pid;

	unlink(stack_file("receiver-down"));
	while (f != NULL && fscanf(f, "%ld", &pid) == 1)
		kill(-(pid_t)pid, SIGKILL);
	if (f != NULL)
		fclose(f);
	unlink(stack_file("test-webhookd.pids"));
	if ((f = fopen(stack_file("webhookd.pid"), "r")) != NULL) {
		if (fscanf(f, "%ld", &pid) == 1)
			kill(-(pid_t)pid, SIGCONT);   /* its senders are in its process group */
		fclose(f);
	}
}


/* One event: delivered once, signed, with the exact body and the Standard Webhooks headers. */
START_TEST(test_delivered)
{
	struct json_object **r;
	char evt[64], want[512];
	long long t0 = now_ms();
	int n;

	snprintf(evt, sizeof(evt), "%s", insert_event(merchant, BODY));
	wait_status(evt, "delivered");
	/* The NOTIFY wakes the daemon: not timed tightly, only well short of a long wait. */
	ck_assert_int_lt(now_ms() - t0, 5000);
	ck_assert_str_eq(db_value("SELECT attempts || ' ' || (delivered_at IS NOT NULL) || ' ' ||"
	    " (last_error IS NULL) FROM webhook_events WHERE id = $1", evt), "1 true true");
	snprintf(want, sizeof(want), "1 204 %s - true", receiver);
	ck_assert_str_eq(db_value("SELECT string_agg(attempt || ' ' || http_status || ' ' || url ||"
	    " ' ' || coalesce(error, '-') || ' ' || (duration_ms >= 0), ',') FROM webhook_attempts"
	    " WHERE event_id = $1", evt), want);
	ck_assert_int_eq(receiver_wait(evt, 1, 5000), 1);
	r = receiver_requests(evt, &n);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(receiver_field(r[0], "body"), BODY);
	ck_assert_str_eq(receiver_field(r[0], "content_type"), "application/json");
	ck_assert_str_eq(receiver_field(r[0], "uri"), "/hook");
	ck_assert_str_eq(receiver_field(r[0], "status"), "204");
	ck_assert_msg(receiver_signature_ok(secret, r[0]), "signature %s does not verify",
	    receiver_field(r[0], "signature"));
	ck_assert_int_lt(labs(atol(receiver_field(r[0], "timestamp")) - (long)time(NULL)), 60);
	receiver_free(r);
}
END_TEST

/* A daemon that would poll only once a minute still delivers at once: LISTEN/NOTIFY. */
START_TEST(test_notify_wakes)
{
	pid_t a = stack_daemon(), b;
	char conf[1024], log[1024], evt[64];
	long long t0;

	snprintf(conf, sizeof(conf), "%s", stack_file("slow-poll.conf"));
	snprintf(log, sizeof(log), "%s", stack_file("slow-poll.log"));
	quiet();
	/* At debug, so that its delivery is logged (a delivered attempt is logged at debug). */
	ck_assert_int_eq(sh("cp \"$MARKETPAY_CONFIG\" '%s' && printf 'webhook_poll_interval = 60\\n"
	    "log_level = debug\\n' >> '%s'", conf, conf), 0);
	ck_assert_int_eq(kill(-a, SIGSTOP), 0);
	b = start_daemon(conf, log);
	ck_assert(file_has(log, "listening on marketpay_webhooks", 10000));
	usleep(300000);   /* past its first scan, into its wait */
	t0 = now_ms();
	snprintf(evt, sizeof(evt), "%s", insert_event(merchant, "{\"n\":1}"));
	wait_value("SELECT status FROM webhook_events WHERE id = $1", evt, "delivered", 5000);
	ck_assert_int_lt(now_ms() - t0, 5000);
	ck_assert_msg(file_has(log, evt, 2000), "the attempt is not in %s", log);
	ck_assert_int_eq(stop_daemon(b), 0);
	ck_assert_int_eq(kill(-a, SIGCONT), 0);
}
END_TEST

/* The receiver answers 503 for a while: attempts are recorded, then it is delivered. */
START_TEST(test_receiver_down)
{
	struct json_object **r;
	char evt[64];
	int n, i, attempts;
	FILE *f = fopen(stack_file("receiver-down"), "w");

	ck_assert_ptr_nonnull(f);
	fclose(f);
	snprintf(evt, sizeof(evt), "%s", insert_event(merchant, BODY));
	wait_value("SELECT count(*) >= 2 FROM webhook_attempts WHERE event_id = $1 AND"
	    " http_status = 503", evt, "t", WAIT_MS);
	unlink(stack_file("receiver-down"));
	ck_assert_str_eq(db_value("SELECT status || ' ' || (last_error = 'HTTP 503') FROM"
	    " webhook_events WHERE id = $1", evt), "pending true");
	wait_status(evt, "delivered");
	attempts = atoi(db_value("SELECT attempts FROM webhook_events WHERE id = $1", evt));
	ck_assert_int_ge(attempts, 3);
	ck_assert_int_le(attempts, RETRIES + 1);
	/* Every attempt recorded: 503s, then the one 204, numbered from 1 without a gap. */
	ck_assert_str_eq(db_value("SELECT bool_and(http_status = CASE WHEN attempt = max_a THEN 204"
	    " ELSE 503 END) AND count(*) = max(max_a) AND min(attempt) = 1 FROM (SELECT *,"
	    " max(attempt) OVER () AS max_a FROM webhook_attempts WHERE event_id = $1) x", evt),
	    "t");
	/* And the receiver saw exactly one request per recorded attempt. */
	ck_assert_int_eq(receiver_wait(evt, attempts, 5000), attempts);
	r = receiver_requests(evt, &n);
	ck_assert_int_eq(n, attempts);
	for (i = 0; i < n; i++)
		ck_assert_str_eq(receiver_field(r[i], "status"), i == n - 1 ? "204" : "503");
	ck_assert_str_eq(receiver_field(r[n - 1], "body"), BODY);
	ck_assert(receiver_signature_ok(secret, r[n - 1]));
	receiver_free(r);
}
END_TEST

/*
 * Waits until event ev is dead, then checks that each attempt of the schedule was made and
 * recorded without an HTTP answer, with an error LIKE reason, the event's last_error too.
 */
static void
assert_dead(const char *ev, const char *reason)
{
	const char *p[2] = { ev, reason };
	char want[64];

	wait_status(ev, "dead");
	snprintf(want, sizeof(want), "dead %d true", RETRIES + 1);
	ck_assert_str_eq(db_valuev("SELECT status || ' ' || attempts || ' ' ||"
	    " (last_error LIKE $2) FROM webhook_events WHERE id = $1", 2, p), want);
	snprintf(want, sizeof(want), "%d true", RETRIES + 1);
	ck_assert_str_eq(db_valuev("SELECT count(*) || ' ' || bool_and(http_status IS NULL"
	    " AND error LIKE $2) FROM webhook_attempts WHERE event_id = $1", 2, p), want);
}

/* Events that can never go out: every attempt recorded with its reason, then dead. */
START_TEST(test_dead)
{
	char closed[32], nosecret[32], nourl[32], ev[3][64];
	const char *reason[3] = { "%onnect%", "merchant has no webhook secret%",
	    "merchant has no webhook_url" };
	int i;

	snprintf(closed, sizeof(closed), "%s", ctl("merchant create --name 'Closed port'"));
	ck_assert_ptr_nonnull(ctl("merchant webhook %s --url http://127.0.0.1:1/hook", closed));
	snprintf(nosecret, sizeof(nosecret), "%s", ctl("merchant create --name 'No secret'"
	    " --webhook-url %s", receiver));
	snprintf(nourl, sizeof(nourl), "%s", ctl("merchant create --name 'No URL'"));
	snprintf(ev[0], sizeof(ev[0]), "%s", insert_event(closed, "{}"));
	snprintf(ev[1], sizeof(ev[1]), "%s", insert_event(nosecret, "{}"));
	snprintf(ev[2], sizeof(ev[2]), "%s", insert_event(nourl, "{}"));
	for (i = 0; i < 3; i++) {
		assert_dead(ev[i], reason[i]);
		ck_assert_int_eq(sh(CTL "webhook list"
		    " --status dead | awk -F'\\t' '$1 == \"%s\" && $3 == \"payment.succeeded\" &&"
		    " $4 == \"dead\" && $5 == \"%d\" && $6 ~ /^[0-9-]+T[0-9:]+[+]00:00$/ && NF == 6"
		    " { n++ } END { exit n != 1 }'", ev[i], RETRIES + 1), 0);
	}
	/* Nothing unsigned ever left: the merchant without a secret got no request. */
	ck_assert_int_eq(receiver_wait(ev[1], 1, 500), 0);
	ck_assert_int_ne(sh(CTL "webhook list --status"
	    " pending | grep -q %s", ev[0]), 0);
}
END_TEST

/* webhook redeliver: a dead event goes out once the endpoint works; a delivered one again. */
START_TEST(test_redeliver)
{
	struct json_object **r;
	char m[32], sec[128], ev[64], ev2[64];
	int n;

	snprintf(m, sizeof(m), "%s", ctl("merchant create --name 'Fixed later'"));
	ck_assert_ptr_nonnull(ctl("merchant webhook %s --url http://127.0.0.1:1/hook", m));
	snprintf(ev, sizeof(ev), "%s", insert_event(m, BODY));
	wait_status(ev, "dead");
	snprintf(sec, sizeof(sec), "%s", ctl("merchant webhook %s --url %s", m, receiver));
	ck_assert_str_eq(ctl("webhook redeliver %s", ev), ev);
	wait_status(ev, "delivered");
	/* A fresh schedule; the earlier attempts kept, the numbers going on. */
	ck_assert_str_eq(db_value("SELECT attempts FROM webhook_events WHERE id = $1", ev), "1");
	ck_assert_str_eq(db_value("SELECT string_agg(attempt || ':' || coalesce(http_status::text,"
	    " '-'), ',' ORDER BY attempt) FROM webhook_attempts WHERE event_id = $1", ev),
	    "1:-,2:-,3:-,4:-,5:204");
	ck_assert_int_eq(receiver_wait(ev, 1, 5000), 1);
	r = receiver_requests(ev, &n);
	ck_assert_msg(receiver_signature_ok(sec, r[0]), "not signed with the new secret");
	ck_assert_str_eq(receiver_field(r[0], "body"), BODY);
	receiver_free(r);

	snprintf(ev2, sizeof(ev2), "%s", insert_event(merchant, "{\"again\":true}"));
	wait_status(ev2, "delivered");
	ck_assert_str_eq(ctl("webhook redeliver %s", ev2), ev2);
	ck_assert_int_eq(receiver_wait(ev2, 2, WAIT_MS), 2);
	wait_status(ev2, "delivered");
	ck_assert_str_eq(db_value("SELECT string_agg(attempt || ':' || http_status, ','"
	    " ORDER BY attempt) FROM webhook_attempts WHERE event_id = $1", ev2), "1:204,2:204");
	r = receiver_requests(ev2, &n);
	ck_assert(receiver_signature_ok(secret, r[0]) && receiver_signature_ok(secret, r[1]));
	receiver_free(r);

	ck_assert_ptr_null(ctl("webhook redeliver evt_%032d 2>/dev/null", 0));
	ck_assert_ptr_null(ctl("webhook redeliver nope 2>/dev/null"));
	ck_assert_ptr_null(ctl("webhook redeliver 2>/dev/null"));
}
END_TEST

/*
 * Two daemons at once, 50 events, the receiver down for the first round: every event
 * delivered, and the receiver saw each event exactly once per attempt recorded.
 */
START_TEST(test_two_daemons)
{
	char log[1024], ids[4096], *save = NULL, *id;
	const char *p[1] = { merchant };
	struct json_object **r;
	int n, total = 0;
	pid_t b;
	FILE *f;

	snprintf(log, sizeof(log), "%s", stack_file("second-webhookd.log"));
	quiet();
	b = start_daemon(env("MARKETPAY_CONFIG"), log);
	ck_assert(file_has(log, "listening on marketpay_webhooks", 10000));
	f = fopen(stack_file("receiver-down"), "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	snprintf(ids, sizeof(ids), "%s", db_valuev("WITH e AS (INSERT INTO webhook_events"
	    " (id, merchant_id, type, body) SELECT 'evt_' || md5(random()::text || g), $1,"
	    " 'payment.succeeded', '{\"n\":' || g || '}' FROM generate_series(1, 50) g"
	    " RETURNING id) SELECT string_agg(id, ' ') FROM e", 1, p));
/*
	 * The receiver fails: the first failures make the merchant's other events wait for the
	 * retry (webhookd's breaker), so a few attempts fail, not all fifty.
	 */
	wait_value("SELECT sum(attempts) >= 4 FROM webhook_events WHERE id ="
	    " ANY(string_to_array($1, ' '))", ids, "t", WAIT_MS);
	unlink(stack_file("receiver-down"));
	wait_value("SELECT count(*) FROM webhook_events WHERE id = ANY(string_to_array($1, ' '))"
	    " AND status = 'delivered'", ids, "50", WAIT_MS);
	ck_assert_str_eq(db_value("SELECT count(*) FILTER (WHERE http_status = 204) || ' ' ||"
	    " count(DISTINCT event_id) FROM webhook_attempts WHERE event_id ="
	    " ANY(string_to_array($1, ' '))", ids), "50 50");
	for (id = strtok_r(ids, " ", &save); id != NULL; id = strtok_r(NULL, " ", &save)) {
		int want = atoi(db_value("SELECT count(*) FROM webhook_attempts WHERE"
		    " event_id = $1", id));

		ck_assert_int_ge(want, 1);
		ck_assert_int_eq(receiver_wait(id, want, 5000), want);
		r = receiver_requests(id, &n);
		ck_assert_msg(n == want, "%s: %d requests for %d attempts", id, n, want);
		receiver_free(r);
		total += n;
	}
	ck_assert_int_ge(total, 54);
	ck_assert_int_eq(stop_daemon(b), 0);
}
END_TEST

/* A webhook endpoint that takes 1 s to answer 204, one request at a time; writes a byte to
 * ready per request. */
static pid_t
slow_server(int *port, int ready)
{
	char buf[4096];
	int s = loopback_listener(port, 8), c;
	pid_t pid;

	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0) {
		static const char reply[] = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";

		while ((c = accept(s, NULL, NULL)) >= 0) {
			if (recv(c, buf, sizeof(buf), 0) < 0 || write(ready, "x", 1) != 1)
				_exit(1);
			usleep(1000000);
			/* All of the request read first: unread data would make close() reset. */
			while (recv(c, buf, sizeof(buf), MSG_DONTWAIT) > 0)
				;
			if (write(c, reply, sizeof(reply) - 1) < 0)
				_exit(1);
			shutdown(c, SHUT_WR);
			while (recv(c, buf, sizeof(buf), 0) > 0)
				;
			close(c);
		}
		_exit(0);
	}
	close(s);
	return pid;
}

/*
 * SIGTERM while deliveries are in flight: they are finished and recorded, nothing more is
 * taken.
 */
START_TEST(test_sigterm_finishes)
{
	char log[1024], m[32], sec[128], e1[64], e2[64], e3[64], both[130], x;
	struct json_object **r;
	struct pollfd pfd;
	int fd[2], port, n;
	pid_t a = stack_daemon(), b, srv;

	snprintf(log, sizeof(log), "%s", stack_file("sigterm-webhookd.log"));
	quiet();
	ck_assert_int_eq(pipe(fd), 0);
	srv = slow_server(&port, fd[1]);
	note_pid(srv);
	snprintf(m, sizeof(m), "%s", ctl("merchant create --name 'Slow shop'"));
	snprintf(sec, sizeof(sec), "%s", ctl("merchant webhook %s --url http://127.0.0.1:%d/slow",
	    m, port));
	/* The stack's daemon and its senders (setsid: one process group) pause. */
	ck_assert_int_eq(kill(-a, SIGSTOP), 0);
	b = start_daemon(config_plus("one-sender.conf", "webhook_senders = 1"), log);
	ck_assert(file_has(log, "listening on marketpay_webhooks", 10000));
	snprintf(e1, sizeof(e1), "%s", insert_event(m, "{\"n\":1}"));
	snprintf(e2, sizeof(e2), "%s", insert_event(m, "{\"n\":2}"));
	snprintf(both, sizeof(both), "%s %s", e1, e2);
	pfd.fd = fd[0];
	pfd.events = POLLIN;
	ck_assert_msg(poll(&pfd, 1, 10000) == 1, "the daemon sent nothing to the slow endpoint");
	ck_assert_int_eq(read(fd[0], &x, 1), 1);
	/* Both in flight (the server answers one at a time, each 1 s after reading it). */
	wait_value("SELECT count(*) FROM webhook_events WHERE id = ANY(string_to_array($1, ' '))"
	    " AND lease_until IS NOT NULL", both, "2", 5000);
	ck_assert_int_eq(kill(b, SIGTERM), 0);
	usleep(100000);
	snprintf(e3, sizeof(e3), "%s", insert_event(m, "{\"n\":3}"));
	ck_assert_int_eq(stop_daemon(b), 0);
	ck_assert_str_eq(db_value("SELECT string_agg(status || ' ' || attempts, ',') FROM"
	    " webhook_events WHERE id = ANY(string_to_array($1, ' '))", both),
	    "delivered 1,delivered 1");
	ck_assert_str_eq(db_value("SELECT string_agg(http_status || ' ' || (duration_ms >= 1000),"
	    " ',') FROM webhook_attempts WHERE event_id = ANY(string_to_array($1, ' '))", both),
	    "204 true,204 true");
	ck_assert_str_eq(db_value("SELECT status || ' ' || attempts || ' ' || (SELECT count(*) FROM"
	    " webhook_attempts WHERE event_id = $1) FROM webhook_events WHERE id = $1", e3),
	    "pending 0 0");
	ck_assert(file_has(log, "stopping on signal", 0));
	/* No event lost: the stack's daemon, woken again, delivers the other one. */
	ck_assert_int_eq(sh(CTL "merchant webhook %s --url"
	    " %s --keep-secret", m, receiver), 0);
	ck_assert_int_eq(kill(-a, SIGCONT), 0);
	wait_status(e3, "delivered");
	ck_assert_int_eq(receiver_wait(e3, 1, 5000), 1);
	r = receiver_requests(e3, &n);
	ck_assert(receiver_signature_ok(sec, r[0]));
	receiver_free(r);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	close(fd[0]);
	close(fd[1]);
}
END_TEST

/*
 * webhook_allow_private off: the receiver, on loopback, gets nothing. Each attempt is
 * refused when the address is connected, recorded with the reason, and the event dies on
 * the schedule like any other; the name localhost is judged by what it resolves to. With
 * the switch on (the stack's daemon) the same events go out once redelivered.
 */
START_TEST(test_private_refused)
{
	const char *want[2] = { "refused: 127.0.0.1 is a loopback address"
	    " (webhook_allow_private is off)", "refused: % is a loopback address"
	    " (webhook_allow_private is off)" };
	char log[1024], m[32], url[300], ev[2][64];
	pid_t a = stack_daemon(), b;
	int i;

	snprintf(log, sizeof(log), "%s", stack_file("no-private.log"));
	ck_assert_int_eq(strncmp(receiver, "http://127.0.0.1:", 17), 0);
	snprintf(url, sizeof(url), "http://localhost%s", receiver + 16);
	snprintf(m, sizeof(m), "%s", ctl("merchant create --name 'Loopback by name'"));
	ck_assert_ptr_nonnull(ctl("merchant webhook %s --url %s", m, url));
	quiet();
	ck_assert_int_eq(kill(-a, SIGSTOP), 0);
	b = start_daemon(config_plus("no-private.conf", "webhook_allow_private = 0"), log);
	ck_assert(file_has(log, "listening on marketpay_webhooks", 10000));
	ck_assert(!file_has(log, "webhook_allow_private is on", 0));
	snprintf(ev[0], sizeof(ev[0]), "%s", insert_event(merchant, BODY));
	snprintf(ev[1], sizeof(ev[1]), "%s", insert_event(m, BODY));
	for (i = 0; i < 2; i++) {
		assert_dead(ev[i], want[i]);
		ck_assert_int_eq(receiver_wait(ev[i], 1, 500), 0);
	}
	ck_assert(file_has(log, "error=refused:", 0));
	ck_assert_int_eq(stop_daemon(b), 0);
	ck_assert_int_eq(kill(-a, SIGCONT), 0);
	for (i = 0; i < 2; i++) {
		ck_assert_str_eq(ctl("webhook redeliver %s", ev[i]), ev[i]);
		wait_status(ev[i], "delivered");
		ck_assert_int_eq(receiver_wait(ev[i], 1, 5000), 1);
	}
}
END_TEST

/* PostgreSQL restarts: the daemon reconnects, listens again and delivers what comes. */
START_TEST(test_reconnect)
{
	char evt[64];

	quiet();
	ck_assert_int_eq(sh("\"$MP_STACK\" pg-stop \"$MARKETPAY_STACK_DIR\""), 0);
	usleep(1500000);
	ck_assert_int_eq(sh("\"$MP_STACK\" pg-start \"$MARKETPAY_STACK_DIR\""), 0);
	snprintf(evt, sizeof(evt), "%s", insert_event(merchant, "{\"after\":\"restart\"}"));
	wait_value("SELECT status FROM webhook_events WHERE id = $1", evt, "delivered", 20000);
	ck_assert(file_has(stack_file("webhookd.log"), "database connection lost", 0));
	ck_assert_int_eq(receiver_wait(evt, 1, 5000), 1);
}
END_TEST

static Suite *
webhook_suite(void)
{
	TCase *t;
	Suite *s = suite_one("webhook", "delivery", 90, &t);

	tcase_add_checked_fixture(t, restore, NULL);
	tcase_add_test(t, test_delivered);
	tcase_add_test(t, test_notify_wakes);
	tcase_add_test(t, test_receiver_down);
	tcase_add_test(t, test_dead);
	tcase_add_test(t, test_redeliver);
	tcase_add_test(t, test_two_daemons);
	tcase_add_test(t, test_sigterm_finishes);
	tcase_add_test(t, test_private_refused);
	/* Last: it restarts PostgreSQL. */
	tcase_add_test(t, test_reconnect);
	return s;
}

int
main(void)
{
	const char *v;
	int rc;

	env("MARKETPAY_CONFIG");
	env("MARKETPAYCTL");
	env("MARKETPAY_WEBHOOKD");
	env("MP_STACK");
	snprintf(receiver, sizeof(receiver), "%s", env("MARKETPAY_WEBHOOK_RECEIVER"));
	need(access(stack_file("webhookd.pid"), R_OK) == 0, "finding the stack's webhookd.pid");
	need((v = ctl("merchant create --name 'Webhook shop'")) != NULL, "merchant create");
	snprintf(merchant, sizeof(merchant), "%s", v);
	need((v = ctl("merchant webhook %s --url %s", merchant, receiver)) != NULL,
	    "merchant webhook");
	snprintf(secret, sizeof(secret), "%s", v);
	rc = run_suite(webhook_suite());
	restore();
	return rc;
}
