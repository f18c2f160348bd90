#ifndef MP_SETTLE_PIN_H
#define MP_SETTLE_PIN_H

#include <stdbool.h>

#include <libpq-fe.h>

#include "app.h"
#include "pin.h"
#include "req.h"
#include "route.h"

/* What the database needs of a transfer PIN: its digests, when it was made, its nonce. */
struct settle_pin {
	char digest[PIN_DIGEST_LEN];
	char legacy[PIN_DIGEST_LEN];
	char issued_at[24];
	char nonce[PIN_NONCE_MAX + 1];
};

/*
 * Opens pin_b64 = base64(RSA-OAEP-SHA256("PIN:UNIX_TIME:NONCE")) under pin_key_file for
 * req's merchant into out. A PIN that cannot be decoded, decrypted or parsed is the
 * merchant's coding mistake, not a guess: 400 saying how to encrypt it, not counted. Returns
 * true, or false with req's response set (400, or 503 without a key). Wipe out afterwards.
 */
bool settle_pin_open(struct app *app, struct req *req, const char *pin_b64,
    struct settle_pin *out);

/*
 * The response for mp_transfer_send's PIN outcomes (column 0 of r's first row: not_enabled,
 * locked, pin_stale, pin_reused, wrong_pin, with the lock in columns 3 and 4). Returns true
 * when it set one; false when the outcome is not about the PIN.
 */
bool settle_pin_refused(struct req *req, PGresult *r);

/* GET /api/v1/payment/pin-public-key: the PEM merchants encrypt their PIN to. */
route_handler settle_pin_public_key;

#endif
