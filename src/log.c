#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static FILE *out;                 /* NULL: stderr */
static char path[4096];           /* out's, to reopen it once it was moved away */
static time_t checked;            /* when path was last compared with out */
static int use_syslog;
static enum log_level threshold = LOG_LVL_INFO;
static int atfork_set;            /* forked() is registered: it runs in every child of a fork */
static pid_t my_pid;              /* 0: not known yet, or forked since */
static char pid_text[24];         /* my_pid in decimal */
static size_t pid_len;
static time_t stamp_sec = -1;     /* the second stamp holds */
static char stamp[32];            /* "YYYY-MM-DDTHH:MM:SS" of stamp_sec */

static const char *const level_name[LOG_LVL__MAX] = {
	"error", /* LOG_LVL_ERROR */
	"warn",  /* LOG_LVL_WARN */
	"info",  /* LOG_LVL_INFO */
	"debug", /* LOG_LVL_DEBUG */
};

static const int syslog_prio[LOG_LVL__MAX] = {
	LOG_ERR,     /* LOG_LVL_ERROR */
	LOG_WARNING, /* LOG_LVL_WARN */
	LOG_INFO,    /* LOG_LVL_INFO */
	LOG_DEBUG,   /* LOG_LVL_DEBUG */
};

static void
forked(void)
{
	my_pid = 0;
}

int
log_open(const char *ident, const char *target, const char *level)
{
	int i;

	/* A line names its process: looked up once, and again in a child after a fork. */
	if (!atfork_set && pthread_atfork(NULL, NULL, forked) == 0)
		atfork_set = 1;
	for (i = 0; i < LOG_LVL__MAX; i++)
		if (level != NULL && strcmp(level, level_name[i]) == 0)
			threshold = (enum log_level)i;
	if (target == NULL || target[0] == '\0' || strcmp(target, "stderr") == 0)
		return 0;
	if (strcmp(target, "syslog") == 0) {
		openlog(ident, LOG_PID, LOG_DAEMON);
		use_syslog = 1;
		return 0;
	}
	if ((out = fopen(target, "a")) == NULL)
		return -1;
	setvbuf(out, NULL, _IOLBF, 0);
	snprintf(path, sizeof(path), "%s", target);
	checked = time(NULL);
	return 0;
}

/*
 * At most once a second: when the file at path is no longer the one written to (logrotate
 * moved it away, or deleted it), a new one is opened there; every process of a program does
 * so by itself, so no signal has to reach them all. If it cannot be opened, writing goes
 * on to the old one.
 */
static void
follow_path(void)
{
	struct stat now, open_;
	time_t t = time(NULL);
	FILE *f;

	if (out == NULL || t == checked)
		return;
	checked = t;
	if (stat(path, &now) == 0 && fstat(fileno(out), &open_) == 0 &&
	    now.st_dev == open_.st_dev && now.st_ino == open_.st_ino)
		return;
	if ((f = fopen(path, "a")) == NULL)
		return;
	setvbuf(f, NULL, _IOLBF, 0);
	fclose(out);
	out = f;
}

int
log_enabled(enum log_level level)
{
	return level <= threshold;
}

void
log_more(void)
{
	if (threshold < LOG_LVL_DEBUG)
		threshold++;
}

const char *
log_escape(const char *s, char *buf, size_t buflen)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0;

	if (buflen == 0)
		return "";
	for (; s != NULL && *s != '\0' && i + 5 < buflen; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			buf[i++] = '\\';
			buf[i++] = 'x';
			buf[i++] = hex[c >> 4];
			buf[i++] = hex[c & 0xf];
		} else
			buf[i++] = (char)c;
	}
	buf[i] = '\0';
	return buf;
}

/* The longest request id a line shows (the worker's are at most 64 characters). */
#define REQID_MAX 128

static void
put(char *line, size_t *n, const char *p, size_t len)
{
	memcpy(line + *n, p, len);
	*n += len;
}

void
log_msg(enum log_level level, const char *reqid, const char *fmt, ...)
{
	char text[2048], line[sizeof(text) + 128 + REQID_MAX], *p;
	size_t n = 0;
	int ms;
	struct timespec ts;
	struct tm tm;
	va_list ap;

	if (level > threshold)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* One event, one line: database messages arrive with newlines and tabs in them. */
	for (p = text; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	while (p > text && p[-1] == ' ')
		*--p = '\0';
	if (use_syslog) {
		syslog(syslog_prio[level], "%s req=%s %s", level_name[level],
		    reqid ? reqid : "-", text);
		return;
	}
	follow_path();
	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != stamp_sec) {
		gmtime_r(&ts.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
		stamp_sec = ts.tv_sec;
	}
	if (my_pid == 0 || !atfork_set) {
		my_pid = getpid();
		pid_len = (size_t)snprintf(pid_text, sizeof(pid_text), "%ld", (long)my_pid);
	}
	/*
	 * "STAMP.mmmZ LEVEL pid=PID req=REQID TEXT\n", put together without a format: line has
	 * room for the text and the rest (at most 74 bytes and the request id).
	 */
	ms = (int)(ts.tv_nsec / 1000000);
	put(line, &n, stamp, strlen(stamp));
	put(line, &n, ".", 1);
	line[n++] = (char)('0' + ms / 100);
	line[n++] = (char)('0' + ms / 10 % 10);
	line[n++] = (char)('0' + ms % 10);
	put(line, &n, "Z ", 2);
	put(line, &n, level_name[level], strlen(level_name[level]));
	put(line, &n, " pid=", 5);
	put(line, &n, pid_text, pid_len);
	put(line, &n, " req=", 5);
	put(line, &n, reqid ? reqid : "-", reqid ? strnlen(reqid, REQID_MAX) : 1);
	put(line, &n, " ", 1);
	put(line, &n, text, (size_t)(p - text));
	put(line, &n, "\n", 1);
	fwrite(line, 1, n, out ? out : stderr);
}

void
log_close(void)
{
	if (out != NULL)
		fclose(out);
	out = NULL;
	if (use_syslog)
		closelog();
	use_syslog = 0;
}
