/*
 * Unit tests of the log (src/log.c): a log file moved away is followed by a new one; each
 * line names its process, also in a child forked after the parent logged, and its second.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "log.h"
#include "runner.h"

/* The whole of file path (static); "" when it cannot be read. */
static const char *
slurp(const char *path)
{
	static char buf[8192];
	size_t n = 0;
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/* logrotate's default: the file is renamed, the program goes on writing to the path. */
START_TEST(test_moved_away)
{
	char dir[] = "/tmp/check_log.XXXXXX", path[64], moved[64];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/marketpay.log", dir);
	snprintf(moved, sizeof(moved), "%s/marketpay.log.1", dir);
	ck_assert_int_eq(log_open("check_log", path, "info"), 0);
	log_msg(LOG_LVL_INFO, NULL, "before the rotation");
	ck_assert_int_eq(rename(path, moved), 0);
	log_msg(LOG_LVL_INFO, NULL, "within the second");
	sleep(1);
	usleep(100000);
	log_msg(LOG_LVL_INFO, NULL, "after the rotation");
	log_close();
	ck_assert_ptr_nonnull(strstr(slurp(moved), "before the rotation"));
	ck_assert_ptr_null(strstr(slurp(moved), "after the rotation"));
	ck_assert_ptr_nonnull(strstr(slurp(path), "after the rotation"));
	ck_assert_ptr_null(strstr(slurp(path), "before the rotation"));
	/* Deleted instead: a new file too. */
	ck_assert_int_eq(log_open("check_log", path, "info"), 0);
	ck_assert_int_eq(unlink(path), 0);
	sleep(1);
	usleep(100000);
	log_msg(LOG_LVL_INFO, NULL, "after the deletion");
	log_close();
	ck_assert_ptr_nonnull(strstr(slurp(path), "after the deletion"));
	unlink(path);
	unlink(moved);
	rmdir(dir);
}
END_TEST

/* The file where it was: no reopening, nothing lost, one line each. */
START_TEST(test_stays)
{
	char dir[] = "/tmp/check_log.XXXXXX", path[64];
	const char *s;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/marketpay.log", dir);
	ck_assert_int_eq(log_open("check_log", path, "info"), 0);
	log_msg(LOG_LVL_INFO, NULL, "one");
	sleep(1);
	log_msg(LOG_LVL_WARN, "r1", "two");
	log_close();
	s = slurp(path);
	ck_assert_ptr_nonnull(strstr(s, " info pid="));
	ck_assert_ptr_nonnull(strstr(s, " warn pid="));
	ck_assert_ptr_nonnull(strstr(s, "req=r1 two\n"));
	unlink(path);
	rmdir(dir);
}
END_TEST

/* The line of text in log s, with its stamp's second and pid; 0 when it is not there. */
static int
line_of(const char *s, const char *text, time_t *sec, long *pid)
{
	const char *p = strstr(s, text), *bol;
	struct tm tm = { 0 };

	if (p == NULL)
		return 0;
	for (bol = p; bol > s && bol[-1] != '\n'; bol--)
		;
	if (strptime(bol, "%Y-%m-%dT%H:%M:%S", &tm) == NULL ||
	    (p = strstr(bol, " pid=")) == NULL)
		return 0;
	*sec = timegm(&tm);
	*pid = strtol(p + 5, NULL, 10);
	return 1;
}

/* The pid and the second are looked up once and kept: a fork and a new second show. */
START_TEST(test_stamp_and_pid)
{
	char dir[] = "/tmp/check_log.XXXXXX", path[64];
	time_t before, after, sec;
	long pid;
	pid_t child;
	int status, i;
	const char *s;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/marketpay.log", dir);
	ck_assert_int_eq(log_open("check_log", path, "info"), 0);
	before = time(NULL);
	log_msg(LOG_LVL_INFO, NULL, "parent first");
	ck_assert_int_ge(child = fork(), 0);
	if (child == 0) {
		log_msg(LOG_LVL_INFO, NULL, "the child");
		_exit(0);
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (i = 0; i < 3; i++) {
		sleep(1);
		log_msg(LOG_LVL_INFO, NULL, i == 0 ? "parent 1" : i == 1 ? "parent 2" : "parent 3");
	}
	after = time(NULL);
	log_close();
	s = slurp(path);
	ck_assert(line_of(s, "parent first", &sec, &pid));
	ck_assert_int_eq(pid, getpid());
	ck_assert(sec >= before && sec <= after);
	ck_assert(line_of(s, "the child", &sec, &pid));
	ck_assert_int_eq(pid, child);
	ck_assert(line_of(s, "parent 3", &sec, &pid));
	ck_assert_int_eq(pid, getpid());
	/* Three seconds slept since the first line: its second cannot be the stamp's now. */
	ck_assert(sec >= before + 3 && sec <= after);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* A line's shape, whatever its parts' lengths: a long request id and text are cut. */
START_TEST(test_line_shape)
{
	char dir[] = "/tmp/check_log.XXXXXX", path[64], rid[201], text[3001], want[160];
	const char *s;
	regex_t re;

	memset(rid, 'a', 200);
	rid[200] = '\0';
	memset(text, 'x', 3000);
	text[3000] = '\0';
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/marketpay.log", dir);
	ck_assert_int_eq(log_open("check_log", path, "info"), 0);
	log_msg(LOG_LVL_WARN, "r-7", "tab\there\nnewline  ");
	log_msg(LOG_LVL_ERROR, rid, "%s", text);
	log_close();
	s = slurp(path);
	snprintf(want, sizeof(want), "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
	    "\\.[0-9]{3}Z warn pid=%ld req=r-7 tab here newline\n", (long)getpid());
	ck_assert_int_eq(regcomp(&re, want, REG_EXTENDED), 0);
	ck_assert_int_eq(regexec(&re, s, 0, NULL, 0), 0);
	regfree(&re);
	/* The second line: 128 characters of the id, 2047 of the text, then its end. */
	s = strchr(s, '\n') + 1;
	ck_assert_ptr_nonnull(strstr(s, " error pid="));
	s = strstr(s, " req=") + 5;
	ck_assert_int_eq(strspn(s, "a"), 128);
	ck_assert_int_eq(s[128], ' ');
	ck_assert_int_eq(strspn(s + 129, "x"), 2047);
	ck_assert_str_eq(s + 129 + 2047, "\n");
	unlink(path);
	rmdir(dir);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("log", "file", 10, &t);

	tcase_add_test(t, test_moved_away);
	tcase_add_test(t, test_stays);
	tcase_add_test(t, test_stamp_and_pid);
	tcase_add_test(t, test_line_shape);
	return run_suite(s);
}
