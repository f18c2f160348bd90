#ifndef MP_METRICS_WORKER_H
#define MP_METRICS_WORKER_H

#include "app.h"
#include "req.h"

/*
 * A worker's counters (metrics.h): requests by route and status, their latency by route,
 * database reconnects and PIN lockouts, in the pool's metrics file
 * (metrics_dir/ENV-fcgi.metrics). Without the file (metrics_dir "" or not writable) every
 * call is a no-op; attach says why in the log.
 */

/* Takes this worker's slot; app's database connection counts its reconnects there. */
void metrics_worker_attach(struct app *app);

/* A request was accepted: the worker is busy until metrics_worker_end. */
void metrics_worker_begin(void);

/* req was answered: counts it by route and status, its time since req->start; idle again. */
void metrics_worker_end(const struct req *req);

/* A wrong PIN locked a merchant's transfers. */
void metrics_worker_pin_lockout(void);

/*
 * GET /metrics: the whole pool's counters, the pool's busy and idle workers and its listen
 * queue, marketpay-webhookd's counters and the webhook backlog from the database, in
 * Prometheus's text format. 404 unless nginx's metrics location sent the request.
 */
enum err metrics_get(struct app *app, struct req *req, void *in);

#endif
