#ifndef MP_SESSION_H
#define MP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "app.h"
#include "body.h"
#include "jtext.h"
#include "pgarray.h"
#include "req.h"
#include "route.h"

/* A create-session request after validation; strings point into the parsed JSON. */
struct session_in {
	const char *email;
	const char *user_id;
	const char *success_url;
	const char *failure_url;
	struct json_object *items;
	const char *locale;        /* the page's language, as given (fa-AF); NULL: none */
	int64_t amount;            /* sum of item prices, minor units */
	/*
	 * The items as mp_create_session takes them, in request order: three array literals
	 * (ids, names, prices in minor units). Owned: session_release.
	 */
	struct pgarray db_items[3];
};

/*
 * Validates a create-session body (marketpay-api(7), create-session) held in root, as the
 * route does under these limits. Returns true with in filled (session_release frees it),
 * or false with the field and rule in msg and nothing to free.
 */
bool session_validate(struct json_object *root, long max_items, int64_t max_amount,
    struct session_in *in, char *msg, size_t msglen);
/* Frees what a valid session_in holds. */
void session_release(void *in);

/* The create-session body: its field table and checks, for its route row. */
extern const struct body_spec session_body;

/* POST /api/v1/payment/create-session, in its Idempotency-Key transaction. */
route_handler session_create;

/* GET /api/v1/payment/sessions/{id}: the merchant's own session, else 404. */
route_handler session_get;

/* The 404's message for a session id the merchant has no session by. */
#define SESSION_NOT_FOUND "payment session not found"

/*
 * Appends ,"url": and the checkout page's address of the session in t's text from offset
 * from (its members at depth; see jtext_member); t fails when it has no session_id.
 */
void session_url(const struct app *app, struct jtext *t, size_t from, int depth);

#endif
