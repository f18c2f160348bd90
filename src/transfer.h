#ifndef MP_TRANSFER_H
#define MP_TRANSFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "app.h"
#include "body.h"
#include "req.h"
#include "route.h"

/* A send-money-MultiVendor request after validation; strings point into the JSON. */
struct transfer_in {
	const char *pin;
	struct json_object *vendors;
	int64_t total;           /* minor units */
	char *accounts;          /* "{VE…,VE…}": PostgreSQL array text; owned, free() */
	char *amounts;           /* "{1200,…}"; owned, free() */
};

/*
 * Validates a transfer body (marketpay-api(7), send-money-MultiVendor) held in root, as the
 * route does under these limits. Returns true with in filled (free in->accounts and
 * in->amounts), or false with the field and rule in msg.
 */
bool transfer_validate(struct json_object *root, long max_vendors, int64_t max_amount,
    struct transfer_in *in, char *msg, size_t msglen);

/* The transfer body: its field table, checks and the PIN's opening, for its route row. */
extern const struct body_spec transfer_body;

/* POST /api/v1/payment/send-money-MultiVendor, in its Idempotency-Key transaction. */
route_handler transfer_send;

#endif
