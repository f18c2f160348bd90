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

bool
auth_request(struct app *app, struct req *req, const char *detail)
{
	const char *prefix = config_key_prefix(&app->cfg), *key = NULL, *currency;
	const struct keycache_entry *hit;
	const char *params[2];
	char digest[APIKEY_DIGEST_LEN + 1];
	PGresult *r = NULL;
	size_t keylen = 0;
	enum err e;
	bool ok = false;

	if (auth_parse(req->authorization, &key, &keylen) != ERR_OK ||
	    strncmp(key, prefix, strlen(prefix)) != 0) {
		req_deny(req, detail);
		goto out;
	}
	/* Only the digest reaches the database and the lookup is by index: no key text is compared. */
	if (apikey_digest(key, keylen, digest) != 0) {
		req_fail_err(req, ERR_INTERNAL);
		goto out;
	}
	/* A key seen before costs no round trip, unless the database said keys changed. */
	keycache_sync(&app->keys, app->db);
	if ((hit = keycache_get(&app->keys, digest)) != NULL) {
		req->merchant_id = hit->merchant_id;
		currency = hit->currency;
	} else {
		params[0] = digest;
		params[1] = config_env_name(&app->cfg);
		if ((r = db_run(app->db, DB_AUTH_KEY, 2, params, &e)) == NULL) {
			req_fail_err(req, e);
			goto out;
		}
		if (PQntuples(r) != 1) {
			req_deny(req, detail);
			goto out;
		}
		req->merchant_id = strtoll(PQgetvalue(r, 0, AUTH_KEY_MERCHANT), NULL, 10);
		currency = PQgetvalue(r, 0, AUTH_KEY_CURRENCY);
		keycache_put(&app->keys, digest, req->merchant_id, currency);
	}
	snprintf(req->merchant, sizeof(req->merchant), "%lld", (long long)req->merchant_id);
	if ((req->merchant_currency = strdup(currency)) == NULL) {
		req_fail_err(req, ERR_NOMEM);
		goto out;
	}
	ok = true;
out:
	PQclear(r);
	return ok;
}
