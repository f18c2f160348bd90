#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static FILE *out;                 /* NULL: stderr */
static int use_syslog;
static enum log_level threshold = LOG_LVL_INFO;

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

int
log_open(const char *ident, const char *target, const char *level)
{
	int i;

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
	return 0;
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

void
log_msg(enum log_level level, const char *reqid, const char *fmt, ...)
{
	char text[2048], stamp[32], *p;
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
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(out ? out : stderr, "%s.%03ldZ %s pid=%ld req=%s %s\n", stamp,
	    ts.tv_nsec / 1000000, level_name[level], (long)getpid(), reqid ? reqid : "-", text);
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
