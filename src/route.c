#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "body.h"
#include "checkout.h"
#include "events.h"
#include "expire.h"
#include "health.h"
#include "idem.h"
#include "json.h"
#include "lists.h"
#include "metrics_worker.h"
#include "refund.h"
#include "reversal.h"
#include "route.h"
#include "session.h"
#include "settle_pin.h"
#include "transfer.h"
#include "webhook_endpoint.h"

/* One endpoint: everything the pipeline does before and after its handler is declared here. */
struct route {
	const char *method;
	const char *path;     /* exact path, or a prefix ending in '/' when param is set */
	bool param;           /* one path segment after path is the handler's parameter */
	const char *suffix;   /* what follows the parameter ("" = nothing) */
	const char *deny;     /* 401 detail text; NULL = no API key needed */
	const char *body;     /* the body's content type; NULL = no body */
	const struct body_spec *spec; /* JSON bodies: the field table and checks; NULL = none */
	bool idem;            /* Idempotency-Key applies: the handler runs in its transaction */
	route_handler *handler;
	bool own_auth;        /* without an Idempotency-Key, the handler's first statement
	                       * looks the key up (auth_defer): one round trip less; with one,
	                       * see auth_deferred_to */
};

/* The 401 text differs between endpoints, as the merchant API has it (marketpay-api(7)). */
#define DENY_SESSION "Invalid or missing API key."
#define DENY_TRANSFER "Authentication credentials were not provided or are invalid."

#define JSON "application/json"
#define FORM "application/x-www-form-urlencoded"

#define IDEM true

static const struct route routes[] = {
	{ "POST", "/api/v1/payment/create-session", false, "", DENY_SESSION, JSON,
	  &session_body, IDEM, session_create, true },
	{ "GET",  "/api/v1/payment/sessions/", true, "", DENY_SESSION, NULL, NULL, false,
	  session_get, true },
	{ "GET",  "/api/v1/payment/sessions", false, "", DENY_SESSION, NULL, NULL, false,
	  sessions_list, true },
	{ "POST", "/api/v1/payment/sessions/", true, "/refunds", DENY_SESSION, JSON,
	  &refund_body, IDEM, refund_create, false },
	{ "POST", "/api/v1/payment/sessions/", true, "/expire", DENY_SESSION, NULL, NULL, IDEM,
	  session_expire, false },
	{ "GET",  "/api/v1/payment/refunds/", true, "", DENY_SESSION, NULL, NULL, false,
	  refund_get, true },
	{ "GET",  "/api/v1/payment/refunds", false, "", DENY_SESSION, NULL, NULL, false,
	  refunds_list, true },
	{ "GET",  "/api/v1/payment/balance", false, "", DENY_SESSION, NULL, NULL, false,
	  balance_get, true },
	{ "GET",  "/api/v1/payment/balance-transactions", false, "", DENY_SESSION, NULL, NULL,
	  false, balance_transactions_list, true },
	{ "GET",  "/api/v1/payment/events/", true, "", DENY_SESSION, NULL, NULL, false,
	  event_get, true },
	{ "GET",  "/api/v1/payment/events", false, "", DENY_SESSION, NULL, NULL, false,
	  events_list, true },
	{ "POST", "/api/v1/payment/events/", true, "/redeliver", DENY_SESSION, NULL, NULL, IDEM,
	  event_redeliver, false },
	{ "POST", "/api/v1/payment/webhook-endpoint/rotate-secret", false, "", DENY_SESSION, NULL,
	  NULL, IDEM, webhook_endpoint_rotate_secret, false },
	{ "POST", "/api/v1/payment/send-money-MultiVendor", false, "", DENY_TRANSFER, JSON,
	  &transfer_body, IDEM, transfer_send, false },
	{ "POST", "/api/v1/payment/transfers/", true, "/reversals", DENY_TRANSFER, JSON,
	  &reversal_body, IDEM, reversal_create, false },
	{ "GET",  "/api/v1/payment/transfers/", true, "", DENY_TRANSFER, NULL, NULL, false,
	  transfer_get, true },
	{ "GET",  "/api/v1/payment/transfers", false, "", DENY_TRANSFER, NULL, NULL, false,
	  transfers_list, true },
	{ "GET",  "/api/v1/payment/pin-public-key", false, "", DENY_TRANSFER, NULL, NULL, false,
	  settle_pin_public_key, false },
	{ "GET",  "/api/v1/health", false, "", NULL, NULL, NULL, false, health_get, false },
	/* Only where nginx's metrics location passes it (marketpay-fcgi(8), METRICS). */
	{ "GET",  "/metrics", false, "", NULL, NULL, NULL, false, metrics_get, false },
	{ "GET",  "/checkout/", true, "", NULL, NULL, NULL, false, checkout_get, false },
	{ "POST", "/checkout/", true, "", NULL, FORM, NULL, false, checkout_post, false },
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

bool
route_at(size_t i, const char **method, const char **path, bool *param, const char **suffix,
    const char **deny)
{
	if (i >= NROUTES)
		return false;
	*method = routes[i].method;
	*path = routes[i].path;
	*param = routes[i].param;
	*suffix = routes[i].suffix;
	*deny = routes[i].deny;
	return true;
}

/*
 * Whether path is r's; the parameter (one non-empty segment) goes into param[paramlen],
 * which is empty when it does not fit (the handler then finds nothing by it).
 */
static bool
path_matches(const struct route *r, const char *path, char *param, size_t paramlen)
{
	size_t n = strlen(r->path), seg;

	if (!r->param)
		return strcmp(path, r->path) == 0;
	if (strncmp(path, r->path, n) != 0)
		return false;
	seg = strcspn(path + n, "/");
	if (seg == 0 || strcmp(path + n + seg, r->suffix) != 0)
		return false;
	param[0] = '\0';
	if (seg < paramlen) {
		memcpy(param, path + n, seg);
		param[seg] = '\0';
	}
	return true;
}

/* want, optionally followed by parameters such as "; charset=utf-8". */
static bool
content_type_is(const char *ct, const char *want)
{
	size_t n = strlen(want);

	return ct != NULL && strncasecmp(ct, want, n) == 0 &&
	    (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

static bool
check_body(struct app *app, struct req *req, const char *type)
{
	if (!content_type_is(req->content_type, type)) {
		req_fail(req, 415, "Content-Type must be %s", type);
		return false;
	}
	switch (req->length) {
	case REQ_LENGTH_OK:
		return true;
	case REQ_LENGTH_NONE:
		req_fail(req, 411, "Content-Length is required");
		return false;
	case REQ_LENGTH_TOOBIG:
		req_fail(req, 413, "request body must be at most %ld bytes",
		    app->cfg.max_body_bytes);
		return false;
	case REQ_LENGTH_BAD:
		req_fail(req, 400, "Content-Length must be a decimal number");
		return false;
	default:
		req_fail(req, 400, "request body is shorter than its Content-Length");
		return false;
	}
}

/* The stages after the request's checks: body, idempotency, handler, its error. */
static void
run(struct app *app, struct req *req, const struct route *r)
{
	const struct body_spec *spec = r->spec;
	struct json_object *root = NULL;
	void *in = NULL;
	char msg[512];
	enum err e;

	if (spec != NULL) {
		if ((in = calloc(1, spec->size)) == NULL) {
			req_fail_err(req, ERR_NOMEM);
			return;
		}
		if ((root = json_parse_strict(req->body, req->body_len, msg, sizeof(msg))) == NULL ||
		    !body_validate(spec, &app->cfg, root, in, msg, sizeof(msg))) {
			req_fail(req, 400, "%s", msg);
			goto out;
		}
		/* The slow work (RSA) before the key's lock; then a stored reply replays as it was. */
		if (spec->open != NULL && !spec->open(app, req, in))
			goto out;
	}
	if (r->idem && !idem_begin(app, req))
		goto out;
	if ((e = r->handler(app, req, in)) != ERR_OK)
		req_fail_err(req, e);
	if (r->idem)
		idem_end(app, req);
out:
	/* A refusal before the handler looked the key up: a bad key answers 401 first. */
	auth_settle(app, req);
	if (in != NULL && spec->release != NULL)
		spec->release(in);
	free(in);
	json_object_put(root);
}

/*
 * Whether the API key is looked up by the request's first statement rather than on its
 * own: with an Idempotency-Key on an idem route, by the key's lock and read (idem_begin),
 * unless the body's slow work (a PIN's RSA) comes first, which only a known merchant may
 * ask for; without one, by an own_auth route's handler.
 */
static bool
auth_deferred_to(const struct route *r, const struct req *req)
{
	if (req->idempotency_key == NULL)
		return r->own_auth;
	return r->idem && (r->spec == NULL || r->spec->open == NULL);
}

void
route_dispatch(struct app *app, struct req *req)
{
	const struct route *found = NULL;
	char allow[64] = "", param[sizeof(req->param)] = "";
	size_t i;
	bool path_known = false;

	for (i = 0; i < NROUTES && found == NULL; i++) {
		if (!path_matches(&routes[i], req->path, param, sizeof(param)))
			continue;
		path_known = true;
		if (strcmp(routes[i].method, req->method) == 0)
			found = &routes[i];
		else {
			if (allow[0] != '\0')
				strncat(allow, ", ", sizeof(allow) - strlen(allow) - 1);
			strncat(allow, routes[i].method, sizeof(allow) - strlen(allow) - 1);
		}
	}
	if (found == NULL && !path_known) {
		req_fail(req, 404, "no such endpoint");
		return;
	}
	if (found == NULL) {
		req_add_header(req, "Allow", allow);
		req_fail(req, 405, "method not allowed here; use %s", allow);
		return;
	}
	memcpy(req->param, param, sizeof(req->param));
	req->route = (size_t)(found - routes) + 1;
	if (found->deny != NULL) {
		if (!db_ready(app->db)) {
			req_fail_err(req, ERR_UNAVAILABLE);
			return;
		}
		if (auth_deferred_to(found, req) ? !auth_defer(app, req, found->deny) :
		    !auth_request(app, req, found->deny))
			return;
	}
	if (found->body != NULL && !check_body(app, req, found->body)) {
		auth_settle(app, req);
		return;
	}
	run(app, req, found);
}
