#ifndef MP_ROUTE_H
#define MP_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"
#include "req.h"

/*
 * An endpoint's own logic. in is its body's input struct after validation (NULL for a route
 * without a body spec). Returns ERR_OK when it set req's response (any status), else the
 * error the pipeline answers with (err.h: its status and default message).
 */
typedef enum err route_handler(struct app *app, struct req *req, void *in);

/*
 * The request pipeline: finds the route (404, 405 with Allow), checks the database is
 * reachable (503) and the API key (401), the content type (415) and the body length (411,
 * 413); parses and validates the JSON body against the route's body spec (400), opens it;
 * begins the Idempotency-Key transaction where the route has one (replays, 409, 422); runs
 * the handler, answers its error, and ends the transaction. Always leaves a response in req.
 */
void route_dispatch(struct app *app, struct req *req);

/*
 * Route i of the table: its method, path (a prefix ending in '/' when param), whether the
 * path takes a parameter, what follows it ("" = nothing), and its 401 text (NULL: no key).
 * Static strings; false past the last route. For the tests that keep the docs in step.
 */
bool route_at(size_t i, const char **method, const char **path, bool *param,
    const char **suffix, const char **deny);

#endif
