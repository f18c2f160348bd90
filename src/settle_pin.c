/* The transfer PIN: sent encrypted to our RSA key, kept only as a peppered HMAC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "json.h"
#include "pin.h"
#include "settle_pin.h"

#define LOCKED "transfers are locked after too many wrong PINs; try again later"

static void
unavailable(struct req *req, enum err e)
{
	if (e == ERR_UNAVAILABLE)
		req_fail(req, 503, "service temporarily unavailable; retry later");
	else
		req_fail(req, 500, "internal error");
}

/* The PIN in pin_b64 as digits in out[PIN_MAX + 1]; false when it is not one. */
static bool
decrypt(const struct app *app, const char *pin_b64, char out[PIN_MAX + 1])
{
	unsigned char *raw = NULL, plain[64];
	size_t rawlen = 0;
	long n = -1;

	if ((raw = crypto_unbase64(pin_b64, &rawlen)) != NULL)
		n = crypto_pkey_decrypt(app->pin_key, raw, rawlen, plain, sizeof(plain));
	free(raw);
	if (n < PIN_MIN || n > PIN_MAX) {
		crypto_wipe(plain, sizeof(plain));
		return false;
	}
	memcpy(out, plain, (size_t)n);
	out[n] = '\0';
	crypto_wipe(plain, sizeof(plain));
	return pin_format_ok(out);
}

bool
settle_pin_check(struct app *app, struct req *req, const char *pin_b64)
{
	char merchant[24], max[16], secs[16], pin[PIN_MAX + 1] = "", digest[67] = "";
	const char *p[3] = { merchant, max, secs };
	PGresult *r = NULL;
	enum err e;
	bool ok = false, right;

	if (app->pin_key == NULL) {
		req_fail(req, 503, "transfers are unavailable: the PIN key is not configured");
		return false;
	}
	/* The RSA work first, outside any lock; a PIN that does not decrypt is a wrong one. */
	if (decrypt(app, pin_b64, pin) && pin_digest(app->cfg.pepper_file, pin, digest) != 0)
		digest[0] = '\0';
	snprintf(merchant, sizeof(merchant), "%lld", (long long)req->merchant_id);
	snprintf(max, sizeof(max), "%ld", app->cfg.pin_max_attempts);
	snprintf(secs, sizeof(secs), "%ld", app->cfg.pin_lock_seconds);
	/* Read, compare and count under the merchant's row lock: guesses are counted in turn. */
	if ((e = db_begin(app->db)) != ERR_OK ||
	    (r = db_run(app->db, DB_MERCHANT_PIN_READ, 1, p, &e)) == NULL || PQntuples(r) != 1) {
		db_rollback(app->db);
		unavailable(req, e == ERR_OK ? ERR_DB : e);
		goto out;
	}
	if (strcmp(PQgetvalue(r, 0, 0), "t") != 0)
		req_fail(req, 400, "marketplace settlement is not enabled for this merchant");
	else if (strcmp(PQgetvalue(r, 0, 2), "t") == 0)
		req_fail(req, 400, LOCKED);
	else if (strlen(PQgetvalue(r, 0, 1)) != 64)
		req_fail(req, 400, "invalid PIN");     /* no PIN set yet: not counted */
	else {
		right = digest[0] != '\0' && crypto_equal(digest + 2, PQgetvalue(r, 0, 1), 64);
		PQclear(r);
		if ((r = db_run(app->db, right ? DB_MERCHANT_PIN_OK : DB_MERCHANT_PIN_FAILED,
		    right ? 1 : 3, p, &e)) == NULL || (e = db_commit(app->db)) != ERR_OK) {
			db_rollback(app->db);
			unavailable(req, e);
			goto out;
		}
		if (!right)
			req_fail(req, 400, "invalid PIN");
		ok = right;
		goto out;
	}
	db_rollback(app->db);
out:
	crypto_wipe(pin, sizeof(pin));
	crypto_wipe(digest, sizeof(digest));
	PQclear(r);
	return ok;
}

void
settle_pin_public_key(struct app *app, struct req *req)
{
	struct json_object *o = NULL;

	if (app->pin_public_pem == NULL) {
		req_fail(req, 503, "transfers are unavailable: the PIN key is not configured");
	} else if ((o = json_success("Encrypt the PIN to this key with RSA-OAEP (SHA-256) and "
	    "send it base64-encoded.")) == NULL ||
	    json_add(o, "public_key", json_object_new_string(app->pin_public_pem)) != 0 ||
	    req_reply_json(req, 200, o) != 0)
		req_fail(req, 500, "internal error");
	json_object_put(o);
}
