#ifndef MP_WEBHOOK_ENDPOINT_H
#define MP_WEBHOOK_ENDPOINT_H

#include "route.h"

/*
 * The merchant's own webhook endpoint (marketpay-api(7), POST
 * /api/v1/payment/webhook-endpoint/rotate-secret).
 */

/*
 * POST webhook-endpoint/rotate-secret, in its Idempotency-Key transaction: a new signing
 * secret, shown in the 200 this once (stored sealed, the reply too when kept for its key);
 * the one it replaces still signs for the rotation window (mp_rotate_webhook_secret). 400
 * when the merchant has no secret yet, 503 when the worker has no secrets key.
 */
route_handler webhook_endpoint_rotate_secret;

#endif
