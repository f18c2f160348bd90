#ifndef MP_CHECKOUT_H
#define MP_CHECKOUT_H

#include "app.h"
#include "req.h"
#include "route.h"

/* GET /checkout/{session_id}: the hosted page (HTML), or a 404 page. */
route_handler checkout_get;

/* POST /checkout/{session_id}: the page's form (pay or cancel), CSRF-checked. */
route_handler checkout_post;

#endif
