/* The merchant's webhook endpoint: rotating its signing secret. */
#include <string.h>

#include "crypto.h"
#include "intent.h"
#include "json.h"
#include "webhook_endpoint.h"
#include "webhook_sign.h"
#include "worker_sql.h"

enum err
webhook_endpoint_rotate_secret(struct app *app, struct req *req, void *in)
{
	char secret[WEBHOOK_SECRET_MAX], hex[WEBHOOK_SEALED_HEX_MAX];
	const char *p[2] = { req->merchant, hex };
	struct json_object *body = NULL, *until = NULL;
	PGresult *r = NULL;
	enum err e;

	(void)in;
	/* The secret is stored sealed under the secrets key: without it, nothing to store. */
	if (!app->have_secret) {
		req_fail(req, 503, "webhook secrets are unavailable: the secrets key is not "
		    "configured");
		return ERR_OK;
	}
	if (webhook_sign_secret_sealed(app->secret, secret, hex) != 0) {
		e = ERR_INTERNAL;
		goto out;
	}
	if ((e = intent_call(app, req, DB_SECRET_ROTATE, 2, p, "merchant not found", &r)) !=
	    ERR_OK || r == NULL)
		goto out;
	if (!PQgetisnull(r, 0, SECRET_ROTATE_PREVIOUS_UNTIL) && (until = json_object_new_string(
	    PQgetvalue(r, 0, SECRET_ROTATE_PREVIOUS_UNTIL))) == NULL) {
		e = ERR_NOMEM;
		goto out;
	}
	/* Set before the reply exists: from then on it is wiped and stored only sealed. */
	req->secret_reply = true;
	if ((body = json_success("Webhook signing secret rotated.")) == NULL ||
	    json_add(body, "secret", json_object_new_string(secret)) != 0 ||
	    json_object_object_add(body, "previous_secret_expires_at", until) != 0) {
		e = ERR_NOMEM;
		goto out;
	}
	until = NULL;
	if (req_reply_json(req, 200, body) != 0)
		e = ERR_NOMEM;
out:
	crypto_wipe(secret, sizeof(secret));
	json_object_put(until);
	json_object_put(body);
	PQclear(r);
	return e;
}
