#ifndef MP_IDEM_H
#define MP_IDEM_H

#include <stdbool.h>

#include "app.h"
#include "req.h"

#define IDEM_KEY_MAX 255

/*
 * Idempotency-Key handling (marketpay-api(7), IDEMPOTENCY) around one write.
 *
 * idem_begin: without the header returns true and does nothing. With it, opens a
 * transaction, waits (up to idempotency_wait_ms) for any request in flight with the same
 * key, and looks the key up: a stored reply for the same request is replayed (200 as first
 * sent, Idempotent-Replayed: true; a sealed one opened first: 503 without the secrets key),
 * another body gets 422, a wait that times out 409, a bad key 400. Returns true when the caller should do the write inside the open transaction;
 * false when req already holds the response (transaction closed).
 */
bool idem_begin(struct app *app, struct req *req);

/*
 * After the write: with a key and a 200 response, stores the response with the key (sealed
 * under the secrets key when req->secret_reply) and commits; with a key and any other response, rolls back (commits, storing nothing, when
 * req->keep_on_refusal says the refusal recorded something that must stay). Without a key does nothing.
 * Returns false (and sets a 500/503 response) when storing or committing failed.
 */
bool idem_end(struct app *app, struct req *req);

#endif
