#ifndef MP_EVENTS_H
#define MP_EVENTS_H

#include "route.h"

/*
 * The events API (marketpay-api(7), EVENTS): every event of the merchant, with its payload
 * as sent and its delivery (state, attempts), and self-service redelivery.
 */

/* GET events: the list convention of list.h, filters type and delivery_status. */
route_handler events_list;

/* GET events/{id}: the merchant's own event, else 404. */
route_handler event_get;

/*
 * POST events/{id}/redeliver, in its Idempotency-Key transaction: the event is sent again
 * now (mp_redeliver_event), with the same webhook-id; 400 without a webhook endpoint, 409
 * while it is being sent, 429 with Retry-After past the merchant's rate, 404 when it is not
 * the merchant's.
 */
route_handler event_redeliver;

#endif
