/*
 * Unit tests of the pool (src/pool.c): the sockets systemd passes are taken (the first onto
 * fd 0), and the supervisor respawns, reloads (or refuses to) and stops its workers, each on
 * its socket. The workers here are stand-ins that report their pid, their fd 0 and their
 * socket on a pipe and wait for a signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "pool.h"
#include "runner.h"

static int report[2];		/* each stand-in worker writes a struct seen here */

/* What a stand-in worker reports. */
struct seen {
	pid_t pid;
	ino_t ino;		/* its fd 0's */
	int reads;		/* as the pool told it */
	int other;		/* the other socket's fd, as the pool told it */
	ino_t other_ino;	/* that fd's */
};
static char refuse_flag[64];	/* while this file exists, the load hook fails */

/* A listening unix socket, non-blocking as a socket manager may pass it. */
static int
listener(char *dir, size_t dirlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(dir, dirlen, "/tmp/check_pool.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s", dir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	return fd;
}

/* Removes what listener made (the socket stays open). */
static void
drop(const char *dir)
{
	char path[80];

	snprintf(path, sizeof(path), "%s/s", dir);
	unlink(path);
	rmdir(dir);
}

static void
set_listen_env(long pid, const char *fds)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", pid);
	setenv("LISTEN_PID", buf, 1);
	setenv("LISTEN_FDS", fds, 1);
}

/*
 * systemd's protocol: fd 3, LISTEN_PID ours. It ends on fd 0, non-blocking as passed (each
 * worker makes it so in any case), env cleared.
 */
START_TEST(test_adopt_systemd)
{
	char dir[64];
	int fd = listener(dir, sizeof(dir)), accepting = 0, reads = 0;
	socklen_t len = sizeof(accepting);

	ck_assert_int_eq(dup2(fd, 3), 3);
	if (fd != 3)
		close(fd);
	close(0);
	set_listen_env((long)getpid(), "1");
	setenv("LISTEN_FDNAMES", "marketpay-fcgi@test.socket", 1);
	ck_assert_int_eq(pool_adopt_socket(&reads), 0);
	ck_assert_int_eq(reads, -1);
	ck_assert_int_eq(getsockopt(0, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len), 0);
	ck_assert_int_eq(accepting, 1);
	ck_assert_int_eq(fcntl(0, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	ck_assert_int_eq(fcntl(3, F_GETFD), -1);
	ck_assert_ptr_null(getenv("LISTEN_PID"));
	ck_assert_ptr_null(getenv("LISTEN_FDS"));
	ck_assert_ptr_null(getenv("LISTEN_FDNAMES"));
	drop(dir);
}
END_TEST

/* Two sockets (the unit's second ListenStream=, for reads): fd 3 onto fd 0, fd 4 stays. */
START_TEST(test_adopt_two)
{
	char dir[64], dir2[64];
	int a = listener(dir, sizeof(dir)), b = listener(dir2, sizeof(dir2)), reads = 0;
	struct stat sa, sb, s0, s4;

	ck_assert_int_eq(fstat(a, &sa), 0);
	ck_assert_int_eq(fstat(b, &sb), 0);
	ck_assert_int_eq(dup2(a, 3), 3);
	ck_assert_int_eq(dup2(b, 4), 4);
	if (a != 3 && a != 4)
		close(a);
	if (b != 3 && b != 4)
		close(b);
	close(0);
	set_listen_env((long)getpid(), "2");
	ck_assert_int_eq(pool_adopt_socket(&reads), 0);
	ck_assert_int_eq(reads, 4);
	ck_assert_int_eq(fstat(0, &s0), 0);
	ck_assert_int_eq(fstat(4, &s4), 0);
	ck_assert(s0.st_ino == sa.st_ino && s4.st_ino == sb.st_ino);
	ck_assert_int_eq(fcntl(3, F_GETFD), -1);
	ck_assert_ptr_null(getenv("LISTEN_FDS"));
	close(4);
	drop(dir);
	drop(dir2);
}
END_TEST

/* spawn-fcgi's way: the socket is fd 0; LISTEN_* meant for another process are left be. */
START_TEST(test_adopt_stdin)
{
	char dir[64];
	int fd = listener(dir, sizeof(dir)), reads = 0;

	ck_assert_int_eq(dup2(fd, 0), 0);
	set_listen_env((long)getpid() + 1, "1");
	ck_assert_int_eq(pool_adopt_socket(&reads), 0);
	ck_assert_int_eq(reads, -1);
	ck_assert_str_eq(getenv("LISTEN_FDS"), "1");
	drop(dir);
}
END_TEST

/*
 * No socket to accept on: /dev/null, a connected socket; three sockets passed; two whose
 * second is no listening socket.
 */
START_TEST(test_adopt_refused)
{
	char dir[64];
	int fd = open("/dev/null", O_RDONLY), pair[2], reads;

	ck_assert_int_eq(dup2(fd, 0), 0);
	unsetenv("LISTEN_PID");
	ck_assert_int_eq(pool_adopt_socket(&reads), -1);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	ck_assert_int_eq(dup2(pair[0], 0), 0);
	ck_assert_int_eq(pool_adopt_socket(&reads), -1);
	fd = listener(dir, sizeof(dir));
	ck_assert_int_eq(dup2(fd, 3), 3);
	set_listen_env((long)getpid(), "3");
	ck_assert_int_eq(pool_adopt_socket(&reads), -1);
	ck_assert_int_eq(dup2(pair[1], 4), 4);
	set_listen_env((long)getpid(), "2");
	ck_assert_int_eq(pool_adopt_socket(&reads), -1);
	drop(dir);
}
END_TEST

static int
load(void *ctx)
{
	(void)ctx;
	return access(refuse_flag, F_OK) == 0 ? -1 : 0;
}

static int
stand_in(void *ctx, int reads, int other)
{
	struct seen me = { getpid(), 0, reads, other, 0 };
	struct stat st;

	(void)ctx;
	if (fstat(0, &st) == 0)
		me.ino = st.st_ino;
	if (other >= 0 && fstat(other, &st) == 0)
		me.other_ino = st.st_ino;
	if (write(report[1], &me, sizeof(me)) != (ssize_t)sizeof(me))
		return 1;
	for (;;)
		pause();
}

/* What the next worker reported within ms; pid 0 when none did. */
static struct seen
next_seen(int ms)
{
	struct pollfd p = { .fd = report[0], .events = POLLIN };
	struct seen s = { 0 };

	if (poll(&p, 1, ms) != 1 || read(report[0], &s, sizeof(s)) != (ssize_t)sizeof(s))
		s.pid = 0;
	return s;
}

/* The next pid a worker reported within ms, or 0. */
static pid_t
next_pid(int ms)
{
	return next_seen(ms).pid;
}

/* Whether pid has exited within ms (it is the caller's child: reaped here). */
static int
exited(pid_t pid, int ms, int *status)
{
	for (; ms > 0; ms -= 10) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 1;
		usleep(10000);
	}
	return 0;
}

START_TEST(test_run)
{
	static const struct pool_hooks hooks = { load, stand_in, NULL };
	static const struct pool_size two = { 2, 0, -1 };
	pid_t pool, a, b, c, d, e;
	int st;

	snprintf(refuse_flag, sizeof(refuse_flag), "/tmp/check_pool.refuse.%ld", (long)getpid());
	unlink(refuse_flag);
	ck_assert_int_eq(pipe(report), 0);
	if ((pool = fork()) == 0)
		exit(pool_run(&two, &hooks));
	ck_assert_int_gt(a = next_pid(5000), 0);
	ck_assert_int_gt(b = next_pid(5000), 0);
	ck_assert_int_eq(next_pid(300), 0);

	/* A worker killed: one more is started, no other. */
	ck_assert_int_eq(kill(a, SIGKILL), 0);
	ck_assert_int_gt(c = next_pid(5000), 0);
	ck_assert_int_eq(next_pid(300), 0);

	/* A reload: two new workers, the old ones asked to stop. */
	ck_assert_int_eq(kill(pool, SIGHUP), 0);
	ck_assert_int_gt(d = next_pid(5000), 0);
	ck_assert_int_gt(e = next_pid(5000), 0);
	ck_assert(d != b && d != c && e != b && e != c);
	usleep(300000);
	ck_assert_int_eq(kill(b, 0), -1);
	ck_assert_int_eq(kill(c, 0), -1);

	/* A reload whose configuration does not load: nothing changes. */
	ck_assert_int_eq(close(open(refuse_flag, O_CREAT | O_WRONLY, 0600)), 0);
	ck_assert_int_eq(kill(pool, SIGHUP), 0);
	ck_assert_int_eq(next_pid(500), 0);
	ck_assert_int_eq(kill(d, 0), 0);
	ck_assert_int_eq(kill(e, 0), 0);
	unlink(refuse_flag);

	/* SIGUSR1 is no stop; SIGTERM is, once the workers are gone: status 0. */
	ck_assert_int_eq(kill(pool, SIGUSR1), 0);
	ck_assert_int_eq(exited(pool, 300, &st), 0);
	ck_assert_int_eq(kill(pool, SIGTERM), 0);
	ck_assert_int_eq(exited(pool, 5000, &st), 1);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_int_eq(kill(d, 0), -1);
	ck_assert_int_eq(kill(e, 0), -1);
}
END_TEST

/* The first load failing: the pool starts no worker and returns 1. */
START_TEST(test_run_refused)
{
	static const struct pool_hooks hooks = { load, stand_in, NULL };
	static const struct pool_size two = { 2, 0, -1 };

	snprintf(refuse_flag, sizeof(refuse_flag), "/tmp/check_pool.refuse.%ld", (long)getpid());
	ck_assert_int_eq(close(open(refuse_flag, O_CREAT | O_WRONLY, 0600)), 0);
	ck_assert_int_eq(pipe(report), 0);
	ck_assert_int_eq(pool_run(&two, &hooks), 1);
	ck_assert_int_eq(next_pid(300), 0);
	unlink(refuse_flag);
}
END_TEST

/*
 * One worker on the socket of every request and two on the reads socket: each accepts on its
 * own as fd 0 and holds the other at fd 4 (for its queue's figures), and a reads worker that
 * dies comes back as one.
 */
START_TEST(test_run_reads)
{
	static const struct pool_hooks hooks = { load, stand_in, NULL };
	char dir[64], dir2[64];
	int a = listener(dir, sizeof(dir)), b = listener(dir2, sizeof(dir2)), i, st;
	struct pool_size size = { 1, 2, 4 };
	struct stat sa, sb;
	struct seen w[3], n;
	pid_t pool, reads_pid = 0;

	snprintf(refuse_flag, sizeof(refuse_flag), "/tmp/check_pool.refuse.%ld", (long)getpid());
	unlink(refuse_flag);
	ck_assert_int_eq(fstat(a, &sa), 0);
	ck_assert_int_eq(fstat(b, &sb), 0);
	ck_assert_int_eq(pipe(report), 0);
	if ((pool = fork()) == 0) {
		if (dup2(a, 0) < 0 || dup2(b, 4) < 0)
			_exit(3);
		exit(pool_run(&size, &hooks));
	}
	for (i = 0; i < 3; i++)
		ck_assert_int_gt((w[i] = next_seen(5000)).pid, 0);
	ck_assert_int_eq(next_pid(300), 0);
	for (i = 0, st = 0; i < 3; i++) {
		ck_assert(w[i].ino == (w[i].reads ? sb.st_ino : sa.st_ino));
		ck_assert_int_eq(w[i].other, 4);
		ck_assert(w[i].other_ino == (w[i].reads ? sa.st_ino : sb.st_ino));
		st += w[i].reads;
		if (w[i].reads)
			reads_pid = w[i].pid;
	}
	ck_assert_int_eq(st, 2);

	ck_assert_int_eq(kill(reads_pid, SIGKILL), 0);
	ck_assert_int_gt((n = next_seen(5000)).pid, 0);
	ck_assert(n.reads == 1 && n.ino == sb.st_ino && n.other_ino == sa.st_ino);
	ck_assert_int_eq(next_pid(300), 0);

	ck_assert_int_eq(kill(pool, SIGTERM), 0);
	ck_assert_int_eq(exited(pool, 5000, &st), 1);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	drop(dir);
	drop(dir2);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("pool", "pool", 30, &t);

	tcase_add_test(t, test_adopt_systemd);
	tcase_add_test(t, test_adopt_two);
	tcase_add_test(t, test_adopt_stdin);
	tcase_add_test(t, test_adopt_refused);
	tcase_add_test(t, test_run);
	tcase_add_test(t, test_run_refused);
	tcase_add_test(t, test_run_reads);
	return run_suite(s);
}
