#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "json.h"
#include "money.h"
#include "session.h"
#include "valid.h"

struct item_in {
	const char *id;
	const char *name;
	int64_t price;
};

#define S(f) offsetof(struct session_in, f)
#define I(f) offsetof(struct item_in, f)
#define URL_RULE "must be an absolute http or https URL"
#define HOST_RULE "must have a host of ASCII letters, digits, hyphens and dots, an IPv4 " \
	"address or a bracketed IPv6 address (no percent-encoding, no other characters)"

static const struct valid_field session_fields[] = {
	{ "email", VALID_STRING, false, false, 254, valid_email,
	  "must be a valid e-mail address", S(email), VALID_NO_PRESENT },
	{ "user_id", VALID_STRING, false, false, 50, NULL, NULL, S(user_id), VALID_NO_PRESENT },
	{ "items", VALID_ARRAY, true, false, 0, NULL, NULL, S(items), VALID_NO_PRESENT },
	{ "redirect_success_url", VALID_STRING, false, true, 2048, valid_http_url, URL_RULE,
	  S(success_url), VALID_NO_PRESENT },
	{ "redirect_failure_url", VALID_STRING, false, true, 2048, valid_http_url, URL_RULE,
	  S(failure_url), VALID_NO_PRESENT },
};

static const struct valid_field item_fields[] = {
	{ "id", VALID_STRING, true, true, 50, NULL, NULL, I(id), VALID_NO_PRESENT },
	{ "name", VALID_STRING, true, true, 500, NULL, NULL, I(name), VALID_NO_PRESENT },
	{ "price", VALID_MONEY, true, false, 0, NULL, NULL, I(price), VALID_NO_PRESENT },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The page's Content-Security-Policy names the redirect URLs' origins in form-action, and a
 * browser blocks a redirect to a host it writes differently (decoded, punycoded, a number
 * read as IPv4): refused here, before anything is stored, rather than after the payment.
 */
static bool
url_host_ok(const char *url, const char *name, char *msg, size_t msglen)
{
	if (url == NULL || valid_url_host(url))
		return true;
	snprintf(msg, msglen, "%s " HOST_RULE, name);
	return false;
}

static struct json_object *
db_item(const struct item_in *it)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL || json_add(o, "id", json_object_new_string(it->id)) != 0 ||
	    json_add(o, "name", json_object_new_string(it->name)) != 0 ||
	    json_add(o, "price", json_object_new_int64(it->price)) != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* The items array: each item's fields, their count and their total. */
static bool
check_items(const struct config *cfg, void *arg, char *msg, size_t msglen)
{
	struct session_in *in = arg;
	size_t i, n;
	char prefix[32];

	if (!url_host_ok(in->success_url, "redirect_success_url", msg, msglen) ||
	    !url_host_ok(in->failure_url, "redirect_failure_url", msg, msglen))
		return false;
	n = json_object_array_length(in->items);
	if (n == 0) {
		snprintf(msg, msglen, "items must not be empty");
		return false;
	}
	if (n > (size_t)cfg->max_items) {
		snprintf(msg, msglen, "items must have at most %ld entries", cfg->max_items);
		return false;
	}
	if ((in->db_items = json_object_new_array_ext((int)n)) == NULL) {
		snprintf(msg, msglen, "out of memory");
		return false;
	}
	for (i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(in->items, i);
		struct item_in it = { NULL, NULL, 0 };

		snprintf(prefix, sizeof(prefix), "items[%zu]", i);
		if (!json_object_is_type(v, json_type_object)) {
			snprintf(msg, msglen, "%s must be an object", prefix);
			goto fail;
		}
		strncat(prefix, ".", sizeof(prefix) - strlen(prefix) - 1);
		if (!valid_object(v, item_fields, NELEM(item_fields), prefix, cfg->max_amount, &it,
		    msg, msglen))
			goto fail;
		/* Both are at most max_amount, far below INT64_MAX: the sum cannot overflow. */
		in->amount += it.price;
		if (in->amount > cfg->max_amount) {
			snprintf(msg, msglen, "the total of items[].price is above the maximum "
			    "amount");
			goto fail;
		}
		if (json_object_array_add(in->db_items, db_item(&it)) != 0) {
			snprintf(msg, msglen, "out of memory");
			goto fail;
		}
	}
	return true;
fail:
	json_object_put(in->db_items);
	in->db_items = NULL;
	return false;
}

static void
release(void *arg)
{
	struct session_in *in = arg;

	json_object_put(in->db_items);
	in->db_items = NULL;
}

const struct body_spec session_body = {
	session_fields, NELEM(session_fields), sizeof(struct session_in), check_items, NULL,
	release,
};

bool
session_validate(struct json_object *root, long max_items, int64_t max_amount,
    struct session_in *in, char *msg, size_t msglen)
{
	struct config cfg = { .max_items = max_items, .max_amount = max_amount };

	return body_validate(&session_body, &cfg, root, in, msg, msglen);
}

static struct json_object *
created_body(const struct app *app, const char *id, const char *expires)
{
	struct json_object *o = json_success("Payment session created.");
	char url[2048];

	snprintf(url, sizeof(url), "%s/checkout/%s", app->cfg.checkout_base_url, id);
	if (o == NULL || json_add(o, "url", json_object_new_string(url)) != 0 ||
	    json_add(o, "expires_at", json_object_new_string(expires)) != 0 ||
	    json_add(o, "session_id", json_object_new_string(id)) != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

enum err
session_create(struct app *app, struct req *req, void *arg)
{
	const struct session_in *in = arg;
	struct json_object *body = NULL;
	char amount[24], lifetime[24];
	const char *p[9];
	PGresult *r;
	enum err e;

	snprintf(amount, sizeof(amount), "%lld", (long long)in->amount);
	snprintf(lifetime, sizeof(lifetime), "%ld", app->cfg.session_lifetime);
	p[0] = req->merchant;
	p[1] = amount;
	p[2] = req->merchant_currency;
	p[3] = in->user_id;
	p[4] = in->email;
	p[5] = in->success_url;
	p[6] = in->failure_url;
	p[7] = lifetime;
	p[8] = json_text(in->db_items);
	if ((r = db_run(app->db, DB_SESSION_CREATE, 9, p, &e)) == NULL)
		return e;
	if (PQntuples(r) != 1)
		e = ERR_DB;
	else if ((body = created_body(app, PQgetvalue(r, 0, SESSION_CREATE_ID),
	    PQgetvalue(r, 0, SESSION_CREATE_EXPIRES))) == NULL ||
	    req_reply_json(req, 200, body) != 0)
		e = ERR_NOMEM;
	PQclear(r);
	json_object_put(body);
	return e;
}

/* A column as a JSON string, or JSON null for SQL NULL. */
static struct json_object *
col(PGresult *r, int row, int c)
{
	return PQgetisnull(r, row, c) ? NULL : json_object_new_string(PQgetvalue(r, row, c));
}

static int
add_col(struct json_object *o, const char *key, PGresult *r, int row, int c)
{
	struct json_object *v = col(r, row, c);

	if (v == NULL && !PQgetisnull(r, row, c))
		return -1;
	return json_object_object_add(o, key, v);
}

/* A money column (minor units) as the API's decimal string. */
static struct json_object *
money_col(PGresult *r, int row, int c)
{
	return json_money_string(strtoll(PQgetvalue(r, row, c), NULL, 10));
}

static struct json_object *
items_json(PGresult *r)
{
	struct json_object *a = json_object_new_array(), *o;
	int i;

	for (i = 0; a != NULL && i < PQntuples(r); i++) {
		if ((o = json_object_new_object()) == NULL ||
		    json_object_array_add(a, o) != 0 ||
		    add_col(o, "id", r, i, SESSION_ITEMS_ID) != 0 ||
		    add_col(o, "name", r, i, SESSION_ITEMS_NAME) != 0 ||
		    json_add(o, "price", money_col(r, i, SESSION_ITEMS_PRICE)) != 0) {
			json_object_put(a);
			return NULL;
		}
	}
	return a;
}

static struct json_object *
session_json(const struct app *app, PGresult *s, PGresult *items, const char *message)
{
	struct json_object *o = json_success(message);
	char url[2048], msg[128];

	snprintf(url, sizeof(url), "%s/checkout/%s", app->cfg.checkout_base_url,
	    PQgetvalue(s, 0, SESSION_GET_ID));
	if (o == NULL || add_col(o, "session_id", s, 0, SESSION_GET_ID) != 0 ||
	    add_col(o, "status", s, 0, SESSION_GET_STATUS) != 0 ||
	    json_add(o, "amount", money_col(s, 0, SESSION_GET_AMOUNT)) != 0 ||
	    add_col(o, "currency", s, 0, SESSION_GET_CURRENCY) != 0 ||
	    add_col(o, "user_id", s, 0, SESSION_GET_USER) != 0 ||
	    add_col(o, "email", s, 0, SESSION_GET_EMAIL) != 0 ||
	    add_col(o, "redirect_success_url", s, 0, SESSION_GET_SUCCESS_URL) != 0 ||
	    add_col(o, "redirect_failure_url", s, 0, SESSION_GET_FAILURE_URL) != 0 ||
	    json_add(o, "items", items_json(items)) != 0 ||
	    add_col(o, "created_at", s, 0, SESSION_GET_CREATED) != 0 ||
	    add_col(o, "expires_at", s, 0, SESSION_GET_EXPIRES) != 0 ||
	    json_add(o, "url", json_object_new_string(url)) != 0 ||
	    json_add(o, "amount_refunded", money_col(s, 0, SESSION_GET_REFUNDED)) != 0 ||
	    json_add(o, "refunds", json_parse_strict(PQgetvalue(s, 0, SESSION_GET_REFUNDS),
	    (size_t)PQgetlength(s, 0, SESSION_GET_REFUNDS), msg, sizeof(msg))) != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

enum err
session_get(struct app *app, struct req *req, void *in)
{
	(void)in;
	return session_reply(app, req, "Payment session found.");
}

enum err
session_reply(struct app *app, struct req *req, const char *message)
{
	struct json_object *body = NULL;
	PGresult *s = NULL, *items = NULL;
	const char *p[2] = { req->param, req->merchant };
	enum err e;

	/* Another merchant's session is reported exactly like a missing one. */
	if (!valid_uuid(req->param) ||
	    ((s = db_run(app->db, DB_SESSION_GET, 2, p, &e)) != NULL && PQntuples(s) != 1)) {
		req_fail(req, 404, "payment session not found");
		e = ERR_OK;
	} else if (s != NULL && (items = db_run(app->db, DB_SESSION_ITEMS, 1, p, &e)) != NULL &&
	    ((body = session_json(app, s, items, message)) == NULL ||
	    req_reply_json(req, 200, body) != 0))
		e = ERR_NOMEM;
	json_object_put(body);
	PQclear(items);
	PQclear(s);
	return e;
}
