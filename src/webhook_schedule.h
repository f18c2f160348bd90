#ifndef MP_WEBHOOK_SCHEDULE_H
#define MP_WEBHOOK_SCHEDULE_H

#include <stddef.h>

#define WEBHOOK_SCHEDULE_MAX 32          /* retries at most */
#define WEBHOOK_DELAY_MAX (30L * 86400)  /* seconds; one retry waits at most this long */

/* The seconds to wait before each retry of an undelivered event, from webhook_retry_schedule. */
struct webhook_schedule {
	long delay[WEBHOOK_SCHEDULE_MAX];
	size_t n;
};

/*
 * Parses text, whole numbers of seconds from 1 to WEBHOOK_DELAY_MAX separated by commas
 * (blanks around them allowed), into s. Returns 0, or -1 with the rule written to err and
 * s emptied.
 */
int webhook_schedule_parse(const char *text, struct webhook_schedule *s, char *err,
    size_t errlen);

/*
 * After the attempt numbered attempts (1 = the first) failed: the seconds until the next
 * one, or -1 when the schedule is used up and the event is dead.
 */
long webhook_schedule_next(const struct webhook_schedule *s, int attempts);

#endif
