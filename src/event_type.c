/* The webhook event types, and the lists of them a merchant subscribes to. */
#include <stdio.h>
#include <string.h>

#include "event_type.h"

const char *const event_types[] = {
	"payment.succeeded", "payment.failed", "session.canceled", "session.expired",
	"refund.succeeded", "transfer.succeeded", "transfer.reversed",
};
const size_t event_ntypes = sizeof(event_types) / sizeof(event_types[0]);

/* The index of the n bytes at name in event_types, or -1. */
static int
type_index(const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < event_ntypes; i++)
		if (strlen(event_types[i]) == n && strncmp(event_types[i], name, n) == 0)
			return (int)i;
	return -1;
}

/* "unknown event type X; the types are a, b, ... and z" into err. */
static void
unknown(const char *name, size_t n, char *err, size_t errlen)
{
	size_t i, len;

	len = (size_t)snprintf(err, errlen, "unknown event type %.*s; the types are", (int)n, name);
	for (i = 0; i < event_ntypes && len < errlen; i++)
		len += (size_t)snprintf(err + len, errlen - len, "%s %s",
		    i == 0 ? "" : i + 1 == event_ntypes ? " and" : ",", event_types[i]);
}

int
event_types_parse(const char *list, char out[EVENT_TYPES_ARRAY_MAX], char *err, size_t errlen)
{
	unsigned char seen[sizeof(event_types) / sizeof(event_types[0])] = { 0 };
	const char *p = list;
	size_t n, len = 1;
	int i;

	out[0] = '\0';
	if (strcmp(list, "all") == 0)
		return 0;
	strcpy(out, "{");
	for (;;) {
		n = strcspn(p, ",");
		if (n == 0) {
			snprintf(err, errlen, "an empty event type in the list; name types such as "
			    "payment.failed,session.expired, or all");
			return -1;
		}
		if ((i = type_index(p, n)) < 0) {
			unknown(p, n, err, errlen);
			return -1;
		}
		if (seen[i]++) {
			snprintf(err, errlen, "event type %s is named twice", event_types[i]);
			return -1;
		}
		/* Every type at most once: the braces, the commas and the names always fit. */
		len += (size_t)snprintf(out + len, EVENT_TYPES_ARRAY_MAX - len, "%s%s",
		    len > 1 ? "," : "", event_types[i]);
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	strcat(out, "}");
	return 0;
}
