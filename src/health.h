#ifndef MP_HEALTH_H
#define MP_HEALTH_H

#include "app.h"
#include "req.h"
#include "route.h"

/* GET /api/v1/health: 200 {"status":"ok"} when the database answers, else 503. */
route_handler health_get;

#endif
