#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idem.h"
#include "json.h"
#include "log.h"
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

bool
session_validate(struct json_object *root, long max_items, int64_t max_amount,
    struct session_in *in, char *msg, size_t msglen)
{
	size_t i, n;
	char prefix[32];

	memset(in, 0, sizeof(*in));
	if (!json_object_is_type(root, json_type_object)) {
		snprintf(msg, msglen, "request body must be a JSON object");
		return false;
	}
	if (!valid_object(root, session_fields, NELEM(session_fields), "", max_amount, in,
	    msg, msglen) ||
	    !url_host_ok(in->success_url, "redirect_success_url", msg, msglen) ||
	    !url_host_ok(in->failure_url, "redirect_failure_url", msg, msglen))
		return false;
	n = json_object_array_length(in->items);
	if (n == 0) {
		snprintf(msg, msglen, "items must not be empty");
		return false;
	}
	if (n > (size_t)max_items) {
		snprintf(msg, msglen, "items must have at most %ld entries", max_items);
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
		if (!valid_object(v, item_fields, NELEM(item_fields), prefix, max_amount, &it,
		    msg, msglen))
			goto fail;
		/* Both are at most max_amount, far below INT64_MAX: the sum cannot overflow. */
		in->amount += it.price;
		if (in->amount > max_amount) {
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

void
session_create(struct app *app, struct req *req)
{
	struct json_object *root = NULL, *body = NULL;
	struct session_in in = { 0 };
	char msg[512], merchant[24], amount[24], lifetime[24];
	const char *p[9];
	PGresult *r = NULL;
	enum err e;

	if ((root = json_parse_strict(req->body, req->body_len, msg, sizeof(msg))) == NULL ||
	    !session_validate(root, app->cfg.max_items, app->cfg.max_amount, &in, msg,
	    sizeof(msg))) {
		req_fail(req, 400, "%s", msg);
		goto out;
	}
	if (!idem_begin(app, req))
		goto out;
	snprintf(merchant, sizeof(merchant), "%lld", (long long)req->merchant_id);
	snprintf(amount, sizeof(amount), "%lld", (long long)in.amount);
	snprintf(lifetime, sizeof(lifetime), "%ld", app->cfg.session_lifetime);
	p[0] = merchant;
	p[1] = amount;
	p[2] = req->merchant_currency;
	p[3] = in.user_id;
	p[4] = in.email;
	p[5] = in.success_url;
	p[6] = in.failure_url;
	p[7] = lifetime;
	p[8] = json_text(in.db_items);
	if ((r = db_run(app->db, DB_SESSION_CREATE, 9, p, &e)) == NULL || PQntuples(r) != 1) {
		req_fail_err(req, r == NULL ? e : ERR_DB);
	} else if ((body = created_body(app, PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1))) == NULL ||
	    req_reply_json(req, 200, body) != 0)
		req_fail(req, 500, "internal error");
	idem_end(app, req);
out:
	PQclear(r);
	json_object_put(body);
	json_object_put(in.db_items);
	json_object_put(root);
}

bool
session_id_ok(const char *s)
{
	size_t i;

	if (strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (strchr("0123456789abcdefABCDEF", s[i]) == NULL || s[i] == '\0')
			return false;
	}
	return true;
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

static struct json_object *
items_json(PGresult *r)
{
	struct json_object *a = json_object_new_array(), *o;
	int i;

	for (i = 0; a != NULL && i < PQntuples(r); i++) {
		if ((o = json_object_new_object()) == NULL ||
		    json_object_array_add(a, o) != 0 ||
		    add_col(o, "id", r, i, 0) != 0 || add_col(o, "name", r, i, 1) != 0 ||
		    json_add(o, "price", json_money_string(strtoll(PQgetvalue(r, i, 2), NULL, 10)))) {
			json_object_put(a);
			return NULL;
		}
	}
	return a;
}

static struct json_object *
session_body(const struct app *app, PGresult *s, PGresult *items)
{
	struct json_object *o = json_success("Payment session found.");
	char url[2048];

	snprintf(url, sizeof(url), "%s/checkout/%s", app->cfg.checkout_base_url,
	    PQgetvalue(s, 0, 0));
	if (o == NULL || add_col(o, "session_id", s, 0, 0) != 0 || add_col(o, "status", s, 0, 1) != 0 ||
	    json_add(o, "amount", json_money_string(strtoll(PQgetvalue(s, 0, 2), NULL, 10))) ||
	    add_col(o, "currency", s, 0, 3) != 0 || add_col(o, "user_id", s, 0, 4) != 0 ||
	    add_col(o, "email", s, 0, 5) != 0 ||
	    add_col(o, "redirect_success_url", s, 0, 6) != 0 ||
	    add_col(o, "redirect_failure_url", s, 0, 7) != 0 ||
	    json_add(o, "items", items_json(items)) != 0 ||
	    add_col(o, "created_at", s, 0, 8) != 0 || add_col(o, "expires_at", s, 0, 9) != 0 ||
	    json_add(o, "url", json_object_new_string(url)) != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

void
session_get(struct app *app, struct req *req)
{
	struct json_object *body = NULL;
	PGresult *s = NULL, *items = NULL;
	char merchant[24];
	const char *p[2];
	enum err e;

	if (!session_id_ok(req->param)) {
		req_fail(req, 404, "payment session not found");
		return;
	}
	snprintf(merchant, sizeof(merchant), "%lld", (long long)req->merchant_id);
	p[0] = req->param;
	p[1] = merchant;
	if ((s = db_run(app->db, DB_SESSION_GET, 2, p, &e)) == NULL) {
		req_fail_err(req, e);
		goto out;
	}
	/* Another merchant's session is reported exactly like a missing one. */
	if (PQntuples(s) != 1) {
		req_fail(req, 404, "payment session not found");
		goto out;
	}
	if ((items = db_run(app->db, DB_SESSION_ITEMS, 1, p, &e)) == NULL) {
		req_fail_err(req, e);
		goto out;
	}
	if ((body = session_body(app, s, items)) == NULL || req_reply_json(req, 200, body) != 0)
		req_fail(req, 500, "internal error");
out:
	json_object_put(body);
	PQclear(items);
	PQclear(s);
}
