#ifndef MP_REVERSAL_H
#define MP_REVERSAL_H

#include "body.h"
#include "route.h"

/* The reversal body (a struct intent_in: amount, reason), for its route row. */
extern const struct body_spec reversal_body;

/* POST /api/v1/payment/transfers/{id}/reversals, in its Idempotency-Key transaction. */
route_handler reversal_create;

#endif
