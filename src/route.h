#ifndef MP_ROUTE_H
#define MP_ROUTE_H

#include "app.h"
#include "req.h"

/*
 * Answers req: finds the route (404, 405 with Allow), checks the database is reachable (503),
 * the API key (401), the content type (415) and the body length (411, 413), then runs the
 * handler. Always leaves a response in req.
 */
void route_dispatch(struct app *app, struct req *req);

#endif
