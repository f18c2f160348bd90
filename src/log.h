#ifndef MP_LOG_H
#define MP_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LVL_ERROR = 0,
	LOG_LVL_WARN,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
	LOG_LVL__MAX
};

/*
 * Sends log lines to target: "stderr" (or ""), "syslog", or a file path opened for append
 * (and opened again, within a second, once the file there is moved or deleted: logrotate's
 * default rotation works without a signal). level is a name from log_level ("info").
 * Returns 0, or -1 when the file cannot be opened (logging then stays on stderr).
 */
int log_open(const char *ident, const char *target, const char *level);

/* Raises the level by one step (-v). */
void log_more(void);

/* True when a message of this level would be written (to skip costly debug work). */
int log_enabled(enum log_level level);

/*
 * One line at level: time, level, request id ("-" when NULL), then the formatted text.
 * The text must hold no secret; untrusted parts go through log_escape first.
 */
void log_msg(enum log_level level, const char *reqid, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Copies s into out (size outlen) with spaces, quotes, backslashes and controls as \xHH. */
const char *log_escape(const char *s, char *out, size_t outlen);

/* Closes the log file or syslog. */
void log_close(void);

#endif
