/*
 * Unit tests of the metrics (src/metrics.c, src/metrics_text.c): processes' counters summed
 * truthfully (a process gone keeps its counts, once; a restart neither loses nor doubles
 * them), busy and idle processes, a file of another layout replaced, and the text format.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <netinet/in.h>

#include <check.h>

#include "listenq.h"
#include "metrics.h"
#include "metrics_text.h"
#include "runner.h"

#define NV (3 + METRICS_HIST_LEN)
#define HIST 3

static char dir[] = "/tmp/check_metrics.XXXXXX";
static char path[64];

static void
setup(void)
{
	strcpy(dir, "/tmp/check_metrics.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/test-fcgi.metrics", dir);
}

static void
teardown(void)
{
	unlink(path);
	rmdir(dir);
}

/*
 * A child process that attaches (in group 1 when in_group1), adds add to counter 0 and
 * observes us once, marks itself busy when busy, then tells the parent (the pipe) and
 * either exits at once or waits to be killed. Returns its pid once it has counted.
 */
static pid_t
child_in(uint64_t add, uint64_t us, bool busy, bool stay, bool in_group1)
{
	int p[2];
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		if (metrics_attach(path, NV, in_group1 ? 1 : 0) != 0)
			_exit(3);
		metrics_add(0, add);
		metrics_observe(HIST, us);
		metrics_set_busy(busy);
		if (write(p[1], "x", 1) != 1)
			_exit(4);
		if (stay)
			pause();
		_exit(0);
	}
	ck_assert_int_gt(pid, 0);
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static pid_t
child(uint64_t add, uint64_t us, bool busy, bool stay)
{
	return child_in(add, us, busy, stay, false);
}

static void
reap(pid_t pid, bool kill_it)
{
	int status;

	if (kill_it)
		kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (!kill_it)
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d",
		    status);
}

/*
 * Reads the file into v; returns the processes alive and busy of each group (live[0] the
 * FastCGI socket's, live[1] a pool's reads socket's).
 */
static struct metrics_sum
sum(uint64_t *v)
{
	struct metrics_sum s = { .values = v };

	ck_assert_int_eq(metrics_read(path, NV, &s), 0);
	return s;
}

START_TEST(test_processes_summed_once)
{
	uint64_t v[NV];
	struct metrics_sum s;
	pid_t a, b, c, d;

	/* Two live processes, one busy: their counts add up. */
	a = child(5, 2000, true, true);
	b = child(7, 20000, false, true);
	s = sum(v);
	ck_assert_uint_eq(v[0], 12);
	ck_assert_uint_eq(s.live[0], 2);
	ck_assert_uint_eq(s.busy[0], 1);
	/* The histogram: 2 ms in the 2.5 ms bucket, 20 ms in the 25 ms one, the sum in us. */
	ck_assert_uint_eq(v[HIST + metrics_bucket(2000)], 1);
	ck_assert_uint_eq(v[HIST + metrics_bucket(20000)], 1);
	ck_assert_uint_eq(v[HIST + METRICS_BUCKETS + 1], 22000);
	/* One killed: its counts stay, it is no longer alive. */
	reap(a, true);
	s = sum(v);
	ck_assert_uint_eq(v[0], 12);
	ck_assert_uint_eq(s.live[0], 1);
	ck_assert_uint_eq(s.busy[0], 0);
	/* Its replacement retires the dead slot into the totals: nothing lost, nothing twice. */
	c = child(1, 0, false, true);
	s = sum(v);
	ck_assert_uint_eq(v[0], 13);
	ck_assert_uint_eq(s.live[0], 2);
	/* A process of group 1 (a pool's reads socket) is counted there, and only there. */
	ck_assert_uint_eq(s.live[1], 0);
	d = child_in(2, 0, true, true, true);
	s = sum(v);
	ck_assert_uint_eq(v[0], 15);
	ck_assert_uint_eq(s.live[0], 2);
	ck_assert_uint_eq(s.busy[0], 0);
	ck_assert_uint_eq(s.live[1], 1);
	ck_assert_uint_eq(s.busy[1], 1);
	/* Its slot, retired and taken again, holds a process of group 0. */
	reap(d, true);
	reap(child(0, 0, true, false), false);
	d = child(0, 0, true, true);
	s = sum(v);
	ck_assert_uint_eq(s.live[0], 3);
	ck_assert_uint_eq(s.busy[0], 1);
	ck_assert_uint_eq(s.live[1], 0);
	reap(d, true);
	/* Many restarts over: still each count once. */
	reap(child(10, 0, false, false), false);
	reap(child(10, 0, false, false), false);
	reap(b, true);
	reap(c, true);
	reap(child(100, 0, false, false), false);
	s = sum(v);
	ck_assert_uint_eq(v[0], 135);
	ck_assert_uint_eq(v[HIST + METRICS_BUCKETS + 1], 22000);
	ck_assert_uint_eq(s.live[0], 0);
}
END_TEST

/* A new layout (an upgrade adding counters) replaces the file; the old layout reads none. */
START_TEST(test_layout_replaced)
{
	uint64_t v[NV + 1];
	struct metrics_sum s = { .values = v };

	reap(child(4, 0, false, false), false);
	ck_assert_int_eq(metrics_read(path, NV + 1, &s), -1);
	ck_assert_uint_eq(v[0], 0);
	ck_assert_int_eq(metrics_attach(path, NV + 1, 0), 0);
	metrics_add(NV, 9);
	ck_assert_int_eq(metrics_read(path, NV + 1, &s), 0);
	ck_assert_uint_eq(v[NV], 9);
	ck_assert_uint_eq(v[0], 0);
	ck_assert_int_eq(metrics_read(path, NV, &s), -1);
	metrics_detach();
	/* Not attached: counting is a no-op, not a crash. */
	metrics_add(0, 1);
	metrics_observe(HIST, 1);
	metrics_set_busy(true);
}
END_TEST

START_TEST(test_missing_and_off)
{
	uint64_t v[NV];
	struct metrics_sum s = { .values = v };
	char out[64];

	ck_assert_int_eq(metrics_read(path, NV, &s), -1);
	ck_assert_ptr_null(metrics_path("", "sandbox", "fcgi", out, sizeof(out)));
	ck_assert_str_eq(metrics_path("/run/m", "sandbox", "fcgi", out, sizeof(out)),
	    "/run/m/sandbox-fcgi.metrics");
	ck_assert_ptr_null(metrics_path("/a/very/long/directory/name/indeed/longer", "production",
	    "webhookd", out, sizeof(out)));
	ck_assert_int_eq(metrics_attach("/nonexistent/dir/x.metrics", NV, 0), -1);
}
END_TEST

/* Bucket bounds are inclusive (Prometheus's le): a value on a bound is in that bucket. */
START_TEST(test_buckets)
{
	static const struct { uint64_t us; size_t bucket; } cases[] = {
		{ 0, 0 }, { 1000, 0 }, { 1001, 1 }, { 2500, 1 }, { 10000000, METRICS_BUCKETS - 1 },
		{ 10000001, METRICS_BUCKETS }, { UINT64_MAX, METRICS_BUCKETS },
	};
	size_t i;

	for (i = 0; i < NELEM(cases); i++)
		ck_assert_msg(metrics_bucket(cases[i].us) == cases[i].bucket, "%llu us",
		    (unsigned long long)cases[i].us);
	for (i = 1; i < METRICS_BUCKETS; i++)
		ck_assert_uint_gt(metrics_bucket_us[i], metrics_bucket_us[i - 1]);
}
END_TEST

START_TEST(test_text)
{
	struct metrics_text t = { 0 };
	uint64_t h[METRICS_HIST_LEN] = { 0 };
	char labels[64] = "", tiny[16] = "";

	h[0] = 2;                       /* two at most 1 ms */
	h[3] = 1;                       /* one in the 10 ms bucket */
	h[METRICS_BUCKETS] = 1;         /* one over 10 s */
	h[METRICS_BUCKETS + 1] = 12000123; /* their sum: 12.000123 s */
	metrics_text_family(&t, "x_seconds", "histogram", "Some help.");
	metrics_text_label(labels, sizeof(labels), "route", "/a\"b\\c\nd");
	metrics_text_histogram(&t, "x_seconds", labels, h);
	metrics_text_value(&t, "y_total", "", 42);
	metrics_text_seconds(&t, "z_seconds", "", 1500);
	ck_assert(!t.failed);
	ck_assert_str_eq(labels, "route=\"/a\\\"b\\\\c\\nd\"");
	ck_assert_ptr_nonnull(strstr(t.buf, "# HELP x_seconds Some help.\n"
	    "# TYPE x_seconds histogram\n"
	    "x_seconds_bucket{route=\"/a\\\"b\\\\c\\nd\",le=\"0.001000\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(t.buf, ",le=\"0.005000\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(t.buf, ",le=\"0.010000\"} 3\n"));
	ck_assert_ptr_nonnull(strstr(t.buf, ",le=\"10.000000\"} 3\n"));
	ck_assert_ptr_nonnull(strstr(t.buf, ",le=\"+Inf\"} 4\n"));
	ck_assert_ptr_nonnull(strstr(t.buf, "x_seconds_sum{route=\"/a\\\"b\\\\c\\nd\"} 12.000123\n"
	    "x_seconds_count{route=\"/a\\\"b\\\\c\\nd\"} 4\n"));
	ck_assert_ptr_nonnull(strstr(t.buf, "\ny_total 42\nz_seconds 0.001500\n"));
	/* A label that does not fit is marked, never cut in the middle of its quotes. */
	metrics_text_label(tiny, sizeof(tiny), "code", "200");
	metrics_text_label(tiny, sizeof(tiny), "route", "/far/too/long");
	ck_assert_str_eq(tiny, "code=\"200\"!");
	free(t.buf);
}
END_TEST

/* Connects n clients to the listening socket at sa, none of them accepted. */
static void
connect_n(int family, const struct sockaddr *sa, socklen_t len, int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		ck_assert_int_ge(fds[i] = socket(family, SOCK_STREAM, 0), 0);
		ck_assert_int_eq(connect(fds[i], sa, len), 0);
	}
}

/* The queue the kernel holds: connections not accepted yet, and the backlog given. */
START_TEST(test_listen_queue)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t inlen = sizeof(in);
	unsigned queued = 99, backlog = 99;
	int ls, ts, c[5], i;

	snprintf(un.sun_path, sizeof(un.sun_path), "%s/sock", dir);
	ck_assert_int_ge(ls = socket(AF_UNIX, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(bind(ls, (struct sockaddr *)&un, sizeof(un)), 0);
	ck_assert_int_eq(listen(ls, 7), 0);
	ck_assert_int_eq(listenq_depth(ls, &queued, &backlog), 0);
	ck_assert_uint_eq(queued, 0);
	ck_assert_uint_eq(backlog, 7);
	connect_n(AF_UNIX, (struct sockaddr *)&un, sizeof(un), c, 3);
	ck_assert_int_eq(listenq_depth(ls, &queued, &backlog), 0);
	ck_assert_uint_eq(queued, 3);
	i = accept(ls, NULL, NULL);
	ck_assert_int_ge(i, 0);
	close(i);
	ck_assert_int_eq(listenq_depth(ls, &queued, &backlog), 0);
	ck_assert_uint_eq(queued, 2);
	for (i = 0; i < 3; i++)
		close(c[i]);
	/* A connected socket is no listening one. */
	ck_assert_int_eq(listenq_depth(c[0] = socket(AF_UNIX, SOCK_STREAM, 0), &queued, &backlog),
	    -1);
	close(c[0]);
	close(ls);
	unlink(un.sun_path);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(ts = socket(AF_INET, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(bind(ts, (struct sockaddr *)&in, sizeof(in)), 0);
	ck_assert_int_eq(getsockname(ts, (struct sockaddr *)&in, &inlen), 0);
	ck_assert_int_eq(listen(ts, 9), 0);
	connect_n(AF_INET, (struct sockaddr *)&in, sizeof(in), c, 5);
	ck_assert_int_eq(listenq_depth(ts, &queued, &backlog), 0);
	ck_assert_uint_eq(queued, 5);
	ck_assert_uint_eq(backlog, 9);
	for (i = 0; i < 5; i++)
		close(c[i]);
	close(ts);
}
END_TEST

int
main(void)
{
	TCase *tc;
	Suite *s = suite_one("metrics", "core", 30, &tc);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_processes_summed_once);
	tcase_add_test(tc, test_layout_replaced);
	tcase_add_test(tc, test_missing_and_off);
	tcase_add_test(tc, test_buckets);
	tcase_add_test(tc, test_text);
	tcase_add_test(tc, test_listen_queue);
	return run_suite(s);
}
