#ifndef MP_CHECKOUT_H
#define MP_CHECKOUT_H

#include "app.h"
#include "req.h"

/* GET /checkout/{session_id}: the hosted page (HTML), or a 404 page. */
void checkout_get(struct app *app, struct req *req);

/* POST /checkout/{session_id}: the page's form (pay or cancel), CSRF-checked. */
void checkout_post(struct app *app, struct req *req);

#endif
