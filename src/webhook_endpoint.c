/* The merchant's webhook endpoint: rotating its signing secret. */
#include <string.h>

#include "crypto.h"
#include "intent.h"
#include "webhook_endpoint.h"
#include "webhook_sign.h"
#include "worker_sql.h"

enum err
webhook_endpoint_rotate_secret(struct app *app, struct req *req, void *in)
{
	char secret[WEBHOOK_SECRET_MAX], hex[WEBHOOK_SEALED_HEX_MAX];
	const char *p[2] = { req->merchant, hex };
	struct jtext t = { 0 };
	const char *until;
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
	until = PQgetisnull(r, 0, SECRET_ROTATE_PREVIOUS_UNTIL) ? NULL :
	    PQgetvalue(r, 0, SECRET_ROTATE_PREVIOUS_UNTIL);
	/* Set before the reply exists: from then on it is wiped and stored only sealed. */
	req->secret_reply = true;
	/* Room for all of it, escaped at worst: the text holding the secret never moves. */
	jtext_reserve(&t, 256 + 6 * (strlen(secret) + (until != NULL ? strlen(until) : 0)));
	jtext_success(&t, "Webhook signing secret rotated.");
	jtext_lit(&t, ",\"secret\":");
	jtext_string(&t, secret);
	jtext_lit(&t, ",\"previous_secret_expires_at\":");
	if (until == NULL)
		jtext_lit(&t, "null");
	else
		jtext_string(&t, until);
	jtext_lit(&t, "}");
	if (req_reply_text(req, &t) != 0)
		e = ERR_NOMEM;
out:
	crypto_wipe(secret, sizeof(secret));
	if (t.s != NULL)
		crypto_wipe(t.s, t.cap);
	jtext_free(&t);
	PQclear(r);
	return e;
}
