#ifndef MP_ROUTE_H
#define MP_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"
#include "req.h"

/*
 * Answers req: finds the route (404, 405 with Allow), checks the database is reachable (503),
 * the API key (401), the content type (415) and the body length (411, 413), then runs the
 * handler. Always leaves a response in req.
 */
void route_dispatch(struct app *app, struct req *req);

/*
 * Route i of the table: its method, path (a prefix ending in '/' when param), whether the
 * path takes a parameter, and its 401 text (NULL: no key). Static strings; false past the
 * last route. For the tests that keep the docs in step with the table.
 */
bool route_at(size_t i, const char **method, const char **path, bool *param,
    const char **deny);

#endif
