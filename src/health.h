#ifndef MP_HEALTH_H
#define MP_HEALTH_H

#include "app.h"
#include "req.h"

/* GET /api/v1/health: 200 {"status":"ok"} when the database answers, else 503. */
void health_get(struct app *app, struct req *req);

#endif
