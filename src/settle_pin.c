/* The transfer PIN: sent encrypted to our RSA key, kept only as a peppered HMAC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "log.h"
#include "metrics_worker.h"
#include "settle_pin.h"

#define HOW "encrypt \"PIN:UNIX_TIME:NONCE\" with RSA-OAEP (SHA-256, MGF1 SHA-256) to the " \
	"key of GET /api/v1/payment/pin-public-key and send it base64-encoded"
#define LOCKED "transfers are locked after too many wrong PINs"

bool
settle_pin_open(struct app *app, struct req *req, const char *pin_b64, struct settle_pin *out)
{
	unsigned char *raw = NULL, plain[512];
	struct pin_sealed s;
	size_t rawlen = 0;
	long n = -1;
	char owner[48];
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (app->pin_key == NULL) {
		req_fail(req, 503, "transfers are unavailable: the PIN key is not configured");
		return false;
	}
	if ((raw = crypto_unbase64(pin_b64, &rawlen)) != NULL)
		n = crypto_pkey_decrypt(app->pin_key, raw, rawlen, plain, sizeof(plain));
	free(raw);
	if (n < 0) {
		req_fail(req, 400, "pin cannot be decrypted: " HOW);
		goto out;
	}
	if (!pin_parse_sealed(plain, (size_t)n, &s)) {
		req_fail(req, 400, "pin must decrypt to PIN:UNIX_TIME:NONCE (4 to 12 digits, the "
		    "time in seconds, a nonce of 16 to 64 letters, digits, - or _), nothing else");
		goto out;
	}
	snprintf(owner, sizeof(owner), "merchant:%lld", (long long)req->merchant_id);
	if (pin_digest(app->cfg.pepper_file, owner, s.pin, out->digest, out->legacy) != 0) {
		log_msg(LOG_LVL_ERROR, req->request_id, "pepper_file %s cannot be read",
		    app->cfg.pepper_file);
		req_fail_err(req, ERR_UNAVAILABLE);
		goto out;
	}
	snprintf(out->issued_at, sizeof(out->issued_at), "%lld", s.issued_at);
	memcpy(out->nonce, s.nonce, sizeof(out->nonce));
	ok = true;
out:
	crypto_wipe(&s, sizeof(s));
	crypto_wipe(plain, sizeof(plain));
	return ok;
}

/* 400 for a locked PIN: until when (ISO 8601; "" = until the operator), with Retry-After. */
static void
locked(struct req *req, const char *prefix, const char *until, const char *seconds)
{
	if (until[0] == '\0') {
		req_fail(req, 400, "%s" LOCKED " until the operator unlocks them", prefix);
		return;
	}
	req_fail(req, 400, "%s" LOCKED " until %s", prefix, until);
	req_add_header(req, "Retry-After", seconds);
}

bool
settle_pin_refused(struct req *req, PGresult *r)
{
	const char *outcome = PQgetvalue(r, 0, TRANSFER_SEND_OUTCOME);
	const char *until = PQgetvalue(r, 0, TRANSFER_SEND_LOCKED_UNTIL);
	const char *seconds = PQgetvalue(r, 0, TRANSFER_SEND_LOCKED_SECONDS);

	if (strcmp(outcome, "not_enabled") == 0)
		req_fail(req, 400, "marketplace settlement is not enabled for this merchant");
	else if (strcmp(outcome, "locked") == 0)
		locked(req, "", until, seconds);
	else if (strcmp(outcome, "pin_stale") == 0)
		req_fail(req, 400, "pin was encrypted more than %s seconds from now: encrypt it "
		    "afresh for each request", PQgetvalue(r, 0, TRANSFER_SEND_DETAIL));
	else if (strcmp(outcome, "pin_reused") == 0)
		req_fail(req, 400, "pin was already used: encrypt it afresh, with a new nonce, for "
		    "each request");
	else if (strcmp(outcome, "wrong_pin") == 0 && PQgetisnull(r, 0, TRANSFER_SEND_LOCKED_UNTIL))
		req_fail(req, 400, "invalid PIN");
	else if (strcmp(outcome, "wrong_pin") == 0) {
		metrics_worker_pin_lockout();
		locked(req, "invalid PIN; ", until, seconds);
		if (until[0] == '\0')
			log_msg(LOG_LVL_WARN, req->request_id, "the transfer PIN of merchant %lld is "
			    "now locked until the operator unlocks it (marketpayctl merchant unlock)",
			    (long long)req->merchant_id);
	} else
		return false;
	return true;
}

enum err
settle_pin_public_key(struct app *app, struct req *req, void *in)
{
	struct jtext t = { 0 };

	(void)in;
	if (app->pin_public_pem == NULL) {
		req_fail(req, 503, "transfers are unavailable: the PIN key is not configured");
		return ERR_OK;
	}
	jtext_success(&t, "Encrypt \"PIN:UNIX_TIME:NONCE\" to this key with RSA-OAEP (SHA-256) "
	    "and send it base64-encoded.");
	jtext_lit(&t, ",\"public_key\":");
	jtext_string(&t, app->pin_public_pem);
	jtext_lit(&t, "}");
	return req_reply_text(req, &t) == 0 ? ERR_OK : ERR_NOMEM;
}
