/* The events API: the list, one event, and a redelivery, each one statement. */
#include <string.h>

#include "event_type.h"
#include "events.h"
#include "intent.h"
#include "list.h"
#include "worker_sql.h"

#define NOT_FOUND "event not found"

static bool
event_id_ok(const char *s)
{
	return intent_id_ok(s, "evt_");
}

static bool
type_ok(const char *s)
{
	size_t i;

	for (i = 0; i < event_ntypes; i++)
		if (strcmp(s, event_types[i]) == 0)
			return true;
	return false;
}

static bool
delivery_status_ok(const char *s)
{
	return strcmp(s, "pending") == 0 || strcmp(s, "delivered") == 0 ||
	    strcmp(s, "dead") == 0 || strcmp(s, "skipped") == 0;
}

static const struct list_spec events = { "events", event_id_ok, "event",
	{ { "type", type_ok, "must be one of payment.succeeded, payment.failed, "
	    "session.canceled, session.expired, refund.succeeded, transfer.succeeded, "
	    "transfer.reversed" },
	  { "delivery_status", delivery_status_ok,
	    "must be one of pending, delivered, dead, skipped" } }, NULL };

enum err
events_list(struct app *app, struct req *req, void *in)
{
	(void)in;
	return list_run(app, req, &events);
}

enum err
event_get(struct app *app, struct req *req, void *in)
{
	static const struct intent_reply out = { "evt_", "Event found.", "event", NOT_FOUND,
	    NULL };

	(void)in;
	return intent_get(app, req, DB_EVENT_GET, DB_EVENT_GET_KEY, &out);
}

enum err
event_redeliver(struct app *app, struct req *req, void *in)
{
	static const struct intent_reply out = { "evt_", "Event queued for redelivery.", "event",
	    NOT_FOUND, NULL };
	const char *p[2] = { req->merchant, req->param };

	(void)in;
	return intent_run(app, req, DB_EVENT_REDELIVER, 2, p, &out);
}
