#ifndef MP_REFUND_H
#define MP_REFUND_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "body.h"
#include "intent.h"
#include "route.h"

/* A refund request after validation; strings point into the JSON. */
struct refund_in {
	struct intent_in refund; /* amount (absent: all still refundable) and reason */
	struct json_object *reverse_transfers; /* NULL = none */
	char *transfers;         /* "{tr_…,…}": PostgreSQL array text, or NULL; owned, free() */
	char *amounts;           /* "{300,NULL,…}" (NULL = all left), or NULL; owned, free() */
};

/* The refund body: its fields and the reverse_transfers rules, for its route row. */
extern const struct body_spec refund_body;

/* POST /api/v1/payment/sessions/{id}/refunds, in its Idempotency-Key transaction. */
route_handler refund_create;

/* GET /api/v1/payment/refunds/{id}. */
route_handler refund_get;

#endif
