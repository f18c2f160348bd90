/* The retry schedule of webhook deliveries: webhook_retry_schedule parsed, and looked up. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook_schedule.h"

int
webhook_schedule_parse(const char *text, struct webhook_schedule *s, char *err, size_t errlen)
{
	const char *p = text;
	char *end = NULL;
	long v;

	memset(s, 0, sizeof(*s));
	for (;;) {
		p += strspn(p, " \t");
		/* A digit first: no sign, no empty entry. */
		if (*p < '0' || *p > '9' || s->n == WEBHOOK_SCHEDULE_MAX)
			break;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno != 0 || v < 1 || v > WEBHOOK_DELAY_MAX)
			break;
		s->delay[s->n++] = v;
		p = end + strspn(end, " \t");
		if (*p == '\0')
			return 0;
		if (*p++ != ',')
			break;
	}
	memset(s, 0, sizeof(*s));
	snprintf(err, errlen, "webhook_retry_schedule must be 1 to %d whole numbers of seconds "
	    "from 1 to %ld, separated by commas", WEBHOOK_SCHEDULE_MAX, WEBHOOK_DELAY_MAX);
	return -1;
}

long
webhook_schedule_next(const struct webhook_schedule *s, int attempts)
{
	if (attempts < 1 || (size_t)attempts > s->n)
		return -1;
	return s->delay[attempts - 1];
}
