/* The workers' counters: what a request adds, and the scrape of the whole pool. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "listenq.h"
#include "log.h"
#include "metrics.h"
#include "metrics_delivery.h"
#include "metrics_text.h"
#include "metrics_worker.h"
#include "route.h"

/* Status codes counted by themselves; any other is counted as code="other". */
static const int statuses[] = {
	200, 201, 204, 301, 302, 303, 304, 400, 401, 403, 404, 405, 406, 409, 410, 411, 413,
	415, 422, 429, 431, 500, 502, 503, 504,
};
#define NSTATUS (sizeof(statuses) / sizeof(statuses[0]) + 1)
/* Per route (the first: no route matched): a counter per status, then the histogram. */
#define PER_ROUTE (NSTATUS + METRICS_HIST_LEN)

enum {
	MW_DB_RECONNECTS,   /* database connections made again after one was lost */
	MW_PIN_LOCKOUTS,    /* wrong PINs that locked a merchant's transfers */
	MW_ROUTES           /* PER_ROUTE counters for each route, no route first */
};

static size_t
nroutes(void)
{
	const char *m, *p, *s, *d;
	bool param;
	size_t n = 0;

	while (route_at(n, &m, &p, &param, &s, &d))
		n++;
	return n;
}

static size_t
nvalues(void)
{
	return MW_ROUTES + (nroutes() + 1) * PER_ROUTE;
}

static size_t
status_index(int status)
{
	size_t i;

	for (i = 0; i < NSTATUS - 1; i++)
		if (statuses[i] == status)
			return i;
	return NSTATUS - 1;
}

void
metrics_worker_attach(struct app *app)
{
	char path[512];

	db_set_reconnect_metric(app->db, MW_DB_RECONNECTS);
	if (metrics_path(app->cfg.metrics_dir, config_env_name(&app->cfg), "fcgi", path,
	    sizeof(path)) == NULL)
		return;
	/* Counted with the workers of its socket: group 1 for the reads socket's. */
	if (metrics_attach(path, nvalues(), app->reads ? 1 : 0) != 0)
		log_msg(LOG_LVL_WARN, NULL, "metrics file %s: %s; this worker's requests are not "
		    "counted", path, strerror(errno));
}

void
metrics_worker_begin(void)
{
	metrics_set_busy(true);
}

void
metrics_worker_end(const struct req *req)
{
	struct timespec now;
	uint64_t us;
	size_t base = MW_ROUTES + req->route * PER_ROUTE;

	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (uint64_t)(now.tv_sec - req->start.tv_sec) * 1000000u +
	    (uint64_t)((now.tv_nsec - req->start.tv_nsec) / 1000);
	metrics_add(base + status_index(req->status ? req->status : 500), 1);
	metrics_observe(base + NSTATUS, us);
	metrics_set_busy(false);
}

void
metrics_worker_pin_lockout(void)
{
	metrics_add(MW_PIN_LOCKOUTS, 1);
}

/* method="...",route="..." of route r (0: none matched) into out. */
static void
route_labels(size_t r, char *out, size_t outlen)
{
	const char *m = "", *p = "", *s = "", *d;
	char shown[160];
	bool param = false;

	out[0] = '\0';
	if (r == 0 || !route_at(r - 1, &m, &p, &param, &s, &d)) {
		metrics_text_label(out, outlen, "method", "");
		metrics_text_label(out, outlen, "route", "unmatched");
		return;
	}
	snprintf(shown, sizeof(shown), "%s%s%s", p, param ? "{id}" : "", s);
	metrics_text_label(out, outlen, "method", m);
	metrics_text_label(out, outlen, "route", shown);
}

static void
requests_text(struct metrics_text *t, const uint64_t *v, size_t nr)
{
	static const char req_name[] = "marketpay_http_requests_total";
	static const char dur_name[] = "marketpay_http_request_duration_seconds";
	char labels[256], code[8];
	const uint64_t *rv;
	size_t r, k, used;

	metrics_text_family(t, req_name, "counter",
	    "Requests the pool's workers answered, by route and status code.");
	for (r = 0; r <= nr; r++) {
		rv = v + MW_ROUTES + r * PER_ROUTE;
		for (k = 0; k < NSTATUS; k++) {
			if (rv[k] == 0)
				continue;
			route_labels(r, labels, sizeof(labels));
			if (k < NSTATUS - 1)
				snprintf(code, sizeof(code), "%d", statuses[k]);
			else
				snprintf(code, sizeof(code), "other");
			metrics_text_label(labels, sizeof(labels), "code", code);
			metrics_text_value(t, req_name, labels, rv[k]);
		}
	}
	metrics_text_family(t, dur_name, "histogram",
	    "Time from reading a request to its answer's end, by route.");
	for (r = 0; r <= nr; r++) {
		rv = v + MW_ROUTES + r * PER_ROUTE;
		for (used = 0, k = 0; k <= METRICS_BUCKETS; k++)
			used += rv[NSTATUS + k] != 0;
		if (used == 0)
			continue;
		route_labels(r, labels, sizeof(labels));
		metrics_text_histogram(t, dur_name, labels, rv + NSTATUS);
	}
}

/*
 * The listen queue of socket fd (-1: none) as NAME and NAME_limit; what is the socket's
 * name in their help ("FastCGI socket", "reads socket").
 */
static void
queue_text(struct metrics_text *t, int fd, const char *name, const char *what)
{
	char limit[96], help[160];
	unsigned queued, backlog;

	if (fd < 0 || listenq_depth(fd, &queued, &backlog) != 0)
		return;
	snprintf(limit, sizeof(limit), "%s_limit", name);
	snprintf(help, sizeof(help), "Connections waiting on the pool's %s for a worker.", what);
	metrics_text_family(t, name, "gauge", help);
	metrics_text_value(t, name, "", queued);
	snprintf(help, sizeof(help), "The most connections the %s's queue holds (its backlog).",
	    what);
	metrics_text_family(t, limit, "gauge", help);
	metrics_text_value(t, limit, "", backlog);
}

/* The workers of one socket, busy and idle, as NAME{state}; what is that socket's name. */
static void
workers_text(struct metrics_text *t, const char *name, const char *what, unsigned live,
    unsigned busy)
{
	char help[160];

	snprintf(help, sizeof(help), "The workers alive on the pool's %s, busy with a request "
	    "(this scrape's own among them) or idle.", what);
	metrics_text_family(t, name, "gauge", help);
	metrics_text_value(t, name, "state=\"busy\"", busy);
	metrics_text_value(t, name, "state=\"idle\"", live - busy);
}

static void
pool_text(struct metrics_text *t, const struct metrics_sum *s, const struct app *app)
{
	/* This worker's socket is fd 0; the pool's other one, if any, app->other_sock (> 0). */
	int other = app->other_sock > 0 ? app->other_sock : -1;

	workers_text(t, "marketpay_pool_workers", "FastCGI socket", s->live[0], s->busy[0]);
	/* Only a pool with a reads socket: a worker of either socket then knows the other. */
	if (app->reads || other >= 0)
		workers_text(t, "marketpay_pool_reads_workers", "reads socket", s->live[1],
		    s->busy[1]);
	queue_text(t, app->reads ? other : 0, "marketpay_pool_listen_queue", "FastCGI socket");
	queue_text(t, app->reads ? 0 : other, "marketpay_pool_reads_listen_queue",
	    "reads socket");
	metrics_text_family(t, "marketpay_db_reconnects_total", "counter",
	    "Database connections the pool's workers made again after losing one.");
	metrics_text_value(t, "marketpay_db_reconnects_total", "", s->values[MW_DB_RECONNECTS]);
	metrics_text_family(t, "marketpay_pin_lockouts_total", "counter",
	    "Wrong transfer PINs that locked a merchant's transfers.");
	metrics_text_value(t, "marketpay_pin_lockouts_total", "", s->values[MW_PIN_LOCKOUTS]);
}

/* The webhook backlog from the database; database_up 0 when it cannot be read. */
static void
backlog_text(struct metrics_text *t, struct app *app)
{
	PGresult *r = NULL;
	enum err e = ERR_UNAVAILABLE;
	bool up;

	if (db_ready(app->db))
		r = db_run(app->db, DB_WEBHOOK_BACKLOG, 0, NULL, &e);
	up = r != NULL && PQntuples(r) == 1;
	metrics_text_family(t, "marketpay_database_up", "gauge",
	    "1 when the scraped worker read the webhook figures from the database, else 0.");
	metrics_text_value(t, "marketpay_database_up", "", up ? 1 : 0);
	if (up) {
		metrics_text_family(t, "marketpay_webhook_backlog_events", "gauge",
		    "Webhook events not delivered yet and not dead.");
		metrics_text_value(t, "marketpay_webhook_backlog_events", "",
		    strtoull(PQgetvalue(r, 0, WEBHOOK_BACKLOG_PENDING), NULL, 10));
		metrics_text_family(t, "marketpay_webhook_oldest_pending_age_seconds", "gauge",
		    "How long the oldest webhook event not delivered yet has waited (0: none).");
		metrics_text_seconds(t, "marketpay_webhook_oldest_pending_age_seconds", "",
		    strtoull(PQgetvalue(r, 0, WEBHOOK_BACKLOG_OLDEST_MS), NULL, 10) * 1000);
		metrics_text_family(t, "marketpay_webhook_dead_events", "gauge",
		    "Dead webhook events kept (retention_events_days): every attempt failed.");
		metrics_text_value(t, "marketpay_webhook_dead_events", "",
		    strtoull(PQgetvalue(r, 0, WEBHOOK_BACKLOG_DEAD), NULL, 10));
	}
	PQclear(r);
}

enum err
metrics_get(struct app *app, struct req *req, void *in)
{
	struct metrics_text t = { 0 };
	struct metrics_sum s = { 0 };
	const char *env = config_env_name(&app->cfg);
	size_t n = nvalues(), nr = nroutes();
	char path[512];
	enum err e = ERR_NOMEM;

	(void)in;
	if (!req->metrics_allowed) {
		req_fail(req, 404, "no such endpoint");
		return ERR_OK;
	}
	if ((s.values = calloc(n > MD__MAX ? n : MD__MAX, sizeof(uint64_t))) == NULL)
		goto out;
	/* Missing (metrics off, no worker could write it): the pool's figures are zero. */
	if (metrics_path(app->cfg.metrics_dir, env, "fcgi", path, sizeof(path)) != NULL)
		metrics_read(path, n, &s);
	requests_text(&t, s.values, nr);
	pool_text(&t, &s, app);
	if (metrics_path(app->cfg.metrics_dir, env, "webhookd", path, sizeof(path)) == NULL ||
	    metrics_read(path, MD__MAX, &s) != 0)
		memset(s.values, 0, MD__MAX * sizeof(uint64_t));
	metrics_delivery_text(&t, s.values, s.live[0]);
	backlog_text(&t, app);
	if (t.failed)
		goto out;
	req_reply(req, 200, "text/plain; version=0.0.4; charset=utf-8", t.buf, t.len);
	e = ERR_OK;
out:
	free(t.buf);
	free(s.values);
	return e;
}
