#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "log.h"

#define SCHEME "API-KEY"

static const char key_chars[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

enum err
auth_parse(const char *header, const char **key, size_t *keylen)
{
	size_t n = strlen(SCHEME), len;

	if (header == NULL || strncasecmp(header, SCHEME, n) != 0 || header[n] != ' ')
		return ERR_AUTH;
	header += n + 1;
	len = strlen(header);
	if (len == 0 || len > APIKEY_MAX || strspn(header, key_chars) != len)
		return ERR_AUTH;
	*key = header;
	*keylen = len;
	return ERR_OK;
}

/* The key's form and environment prefix, then its digest into req; else a 401 (or 500). */
static bool
auth_local(const struct app *app, struct req *req, const char *detail)
{
	const char *prefix = config_key_prefix(&app->cfg), *key = NULL;
	size_t keylen = 0;

	if (auth_parse(req->authorization, &key, &keylen) != ERR_OK ||
	    strncmp(key, prefix, strlen(prefix)) != 0) {
		req_deny(req, detail);
		return false;
	}
	/* Only the digest reaches the database and the lookup is by index: no key text is compared. */
	if (apikey_digest(key, keylen, req->key_digest) != 0) {
		req_fail_err(req, ERR_INTERNAL);
		return false;
	}
	return true;
}

int
auth_take(struct req *req, const PGresult *r)
{
	req->merchant_id = strtoll(PQgetvalue(r, 0, AUTH_KEY_MERCHANT), NULL, 10);
	snprintf(req->merchant, sizeof(req->merchant), "%lld", (long long)req->merchant_id);
	free(req->merchant_currency);
	req->merchant_currency = strdup(PQgetvalue(r, 0, AUTH_KEY_CURRENCY));
	return req->merchant_currency != NULL ? 0 : -1;
}

/* The key's merchant, looked up by its digest (already in req). */
static bool
auth_lookup(struct app *app, struct req *req, const char *detail)
{
	const char *params[2];
	PGresult *r = NULL;
	enum err e;
	bool ok = false;

	params[0] = req->key_digest;
	params[1] = config_env_name(&app->cfg);
	if ((r = db_run(app->db, DB_AUTH_KEY, 2, params, &e)) == NULL) {
		req_fail_err(req, e);
		goto out;
	}
	if (PQntuples(r) != 1) {
		req_deny(req, detail);
		goto out;
	}
	if (auth_take(req, r) != 0) {
		req_fail_err(req, ERR_NOMEM);
		goto out;
	}
	ok = true;
out:
	PQclear(r);
	return ok;
}

bool
auth_request(struct app *app, struct req *req, const char *detail)
{
	return auth_local(app, req, detail) && auth_lookup(app, req, detail);
}

bool
auth_defer(struct app *app, struct req *req, const char *detail)
{
	if (!auth_local(app, req, detail))
		return false;
	req->auth_deferred = true;
	req->deny = detail;
	return true;
}

bool
auth_settle(struct app *app, struct req *req)
{
	if (!req->auth_deferred)
		return true;
	req->auth_deferred = false;
	return auth_lookup(app, req, req->deny);
}

bool
auth_found(struct req *req, PGresult *r, enum err *e)
{
	req->auth_deferred = false;
	*e = ERR_OK;
	if (PQntuples(r) == 0)
		req_deny(req, req->deny);
	else if (auth_take(req, r) != 0)
		*e = ERR_NOMEM;
	else
		return true;
	PQclear(r);
	return false;
}

void
auth_note_again(struct app *app, struct req *req)
{
	const char *params[2] = { req->key_digest, config_env_name(&app->cfg) };
	enum err e;

	PQclear(db_run(app->db, DB_AUTH_KEY, 2, params, &e));
}
