#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "i18n.h"
#include "intent.h"
#include "jtext.h"
#include "json.h"
#include "money.h"
#include "pgarray.h"
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

/*
 * An extension of the spec: the hosted page's language, fixed by the merchant; one of the
 * catalogs the worker found, named in the refusal ("... languages: en, fa-AF or ps").
 */
#define LOCALE_RULE "must be one of the hosted page's languages: "
static char locale_rule[sizeof(LOCALE_RULE) + (I18N_MAX + 1) * 12] = LOCALE_RULE;

static bool
locale_ok(const char *s)
{
	/* The table holds the rule's address; its list is written here, before a refusal. */
	i18n_tags(locale_rule + sizeof(LOCALE_RULE) - 1, sizeof(locale_rule) -
	    sizeof(LOCALE_RULE) + 1);
	return i18n_find(s) != NULL;
}

static const struct valid_field session_fields[] = {
	{ "email", VALID_STRING, false, false, 254, valid_email,
	  "must be a valid e-mail address", S(email), VALID_NO_PRESENT },
	{ "user_id", VALID_STRING, false, false, 50, NULL, NULL, S(user_id), VALID_NO_PRESENT },
	{ "items", VALID_ARRAY, true, false, 0, NULL, NULL, S(items), VALID_NO_PRESENT },
	{ "redirect_success_url", VALID_STRING, false, true, 2048, valid_http_url, URL_RULE,
	  S(success_url), VALID_NO_PRESENT },
	{ "redirect_failure_url", VALID_STRING, false, true, 2048, valid_http_url, URL_RULE,
	  S(failure_url), VALID_NO_PRESENT },
	{ "locale", VALID_STRING, false, true, 16, locale_ok, locale_rule, S(locale),
	  VALID_NO_PRESENT },
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
	for (i = 0; i < 3; i++)
		pgarray_init(&in->db_items[i]);
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
		pgarray_add(&in->db_items[0], it.id);
		pgarray_add(&in->db_items[1], it.name);
		pgarray_add_int(&in->db_items[2], (long long)it.price);
	}
	for (i = 0; i < 3; i++)
		if (pgarray_end(&in->db_items[i]) == NULL) {
			snprintf(msg, msglen, "out of memory");
			goto fail;
		}
	return true;
fail:
	session_release(in);
	return false;
}

void
session_release(void *arg)
{
	struct session_in *in = arg;
	int i;

	for (i = 0; i < 3; i++)
		pgarray_free(&in->db_items[i]);
}

const struct body_spec session_body = {
	session_fields, NELEM(session_fields), sizeof(struct session_in), check_items, NULL,
	session_release,
};

bool
session_validate(struct json_object *root, long max_items, int64_t max_amount,
    struct session_in *in, char *msg, size_t msglen)
{
	struct config cfg = { .max_items = max_items, .max_amount = max_amount };

	return body_validate(&session_body, &cfg, root, in, msg, msglen);
}

/* ,"url": and the checkout page of session id (n bytes; it may point into t's text). */
static void
put_url(const struct app *app, struct jtext *t, const char *id, size_t n)
{
	char url[2048];

	/* Copied before t grows. */
	snprintf(url, sizeof(url), "%s/checkout/%.*s", app->cfg.checkout_base_url, (int)n, id);
	jtext_lit(t, ",\"url\":");
	jtext_string(t, url);
}

/* The reply: the session's checkout URL, its expiry and its id. */
static int
reply_created(const struct app *app, struct req *req, const char *id, const char *expires)
{
	struct jtext t = { 0 };

	jtext_success(&t, "Payment session created.");
	put_url(app, &t, id, strlen(id));
	jtext_lit(&t, ",\"expires_at\":");
	jtext_string(&t, expires);
	jtext_lit(&t, ",\"session_id\":");
	jtext_string(&t, id);
	jtext_lit(&t, "}");
	return req_reply_text(req, &t);
}

enum err
session_create(struct app *app, struct req *req, void *arg)
{
	const struct session_in *in = arg;
	char lifetime[24];
	const char *p[11];
	PGresult *r = NULL;
	enum err e = ERR_OK;

	snprintf(lifetime, sizeof(lifetime), "%ld", app->cfg.session_lifetime);
	/* The key is looked up again by the statement: with auth deferred, only there. */
	p[0] = req->key_digest;
	p[1] = config_env_name(&app->cfg);
	p[2] = in->user_id;
	p[3] = in->email;
	p[4] = in->success_url;
	p[5] = in->failure_url;
	p[6] = lifetime;
	p[7] = in->db_items[0].s;
	p[8] = in->db_items[1].s;
	p[9] = in->db_items[2].s;
	p[10] = in->locale != NULL ? i18n_find(in->locale)->code : NULL;
	/* The amount is the database's sum of the prices: it cannot differ from the items. */
	if ((r = db_run(app->db, DB_SESSION_CREATE, 11, p, &e)) == NULL)
		;
	else if (PQntuples(r) != 1) {
		/* No row: the key is refused (only now looked up, or revoked since). */
		req->auth_deferred = false;
		req_deny(req, req->deny != NULL ? req->deny : err_message(ERR_AUTH));
	} else {
		req->auth_deferred = false;
		req->merchant_id = strtoll(PQgetvalue(r, 0, SESSION_CREATE_MERCHANT), NULL, 10);
		if (reply_created(app, req, PQgetvalue(r, 0, SESSION_CREATE_ID),
		    PQgetvalue(r, 0, SESSION_CREATE_EXPIRES)) != 0)
			e = ERR_NOMEM;
	}
	PQclear(r);
	return e;
}

void
session_url(const struct app *app, struct jtext *t, size_t from, int depth)
{
	const char *id;
	size_t n;

	if ((id = jtext_member(t, from, depth, "session_id", &n)) == NULL)
		t->failed = true;
	else
		put_url(app, t, id, n);
}

/*
 * GET of a session: one statement looks the key up too when the route left it to the
 * handler (see intent_get); a malformed id answers 404.
 */
enum err
session_get(struct app *app, struct req *req, void *in)
{
	static const struct intent_reply found = { NULL, "Payment session found.", NULL,
	    SESSION_NOT_FOUND, session_url };

	(void)in;
	return intent_get(app, req, DB_SESSION_GET, DB_SESSION_GET_KEY, &found);
}
