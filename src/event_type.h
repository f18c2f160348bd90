#ifndef MP_EVENT_TYPE_H
#define MP_EVENT_TYPE_H

#include <stddef.h>

/*
 * The webhook event types (marketpay-api(7), WEBHOOKS): the C side of the one list that
 * sql/010_events.sql's mp_event_types() holds; the check_events suite compares the two.
 */
extern const char *const event_types[];
extern const size_t event_ntypes;

/* The longest "{a,b,...}" event_types_parse writes: every type once, and the braces. */
#define EVENT_TYPES_ARRAY_MAX 256

/*
 * A comma-separated list of event types, as marketpayctl merchant webhook --events takes it,
 * into a PostgreSQL array text in out ("{payment.failed,session.expired}"); "all" alone
 * gives "" (every type: the column NULL). Every name must be a known type, once; no empty
 * names, no spaces. Returns 0, or -1 with the rule broken in err.
 */
int event_types_parse(const char *list, char out[EVENT_TYPES_ARRAY_MAX], char *err,
    size_t errlen);

#endif
