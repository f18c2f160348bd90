#ifndef MP_EXPIRE_H
#define MP_EXPIRE_H

#include "route.h"

/*
 * POST /api/v1/payment/sessions/{id}/expire, in its Idempotency-Key transaction: the
 * merchant's open session becomes expired at once (mp_expire_session; its session.expired
 * event queued) and is answered as GET shows it; 400 when it is not open, 404 when it is
 * not the merchant's.
 */
route_handler session_expire;

#endif
