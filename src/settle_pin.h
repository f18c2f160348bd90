#ifndef MP_SETTLE_PIN_H
#define MP_SETTLE_PIN_H

#include <stdbool.h>

#include "app.h"
#include "req.h"

/*
 * The gate of a multi-vendor transfer, in order: settlement enabled for req's merchant,
 * its PIN not locked, and pin_b64 = base64(RSA-OAEP-SHA256(PIN)) under pin_key_file
 * decrypting to the merchant's PIN. A wrong, undecryptable or malformed PIN counts as a
 * failure (committed at once) and answers 400 "invalid PIN" whatever went wrong. Returns
 * true when the transfer may go on; otherwise req holds the response (400, 500 or 503).
 */
bool settle_pin_check(struct app *app, struct req *req, const char *pin_b64);

/* GET /api/v1/payment/pin-public-key: the PEM merchants encrypt their PIN to. */
void settle_pin_public_key(struct app *app, struct req *req);

#endif
