/* A list as CSV, streamed from the database to the client row by row. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "csv.h"
#include "list.h"
#include "log.h"
#include "worker_sql.h"

#define CSV_BUF 65536
#define CSV_BATCH 1000       /* rows asked of the database at a time */

/* The body on its way: rows are gathered into buf and written out a buffer at a time. */
struct csv_out {
	struct req *req;
	const char *const *cols;
	int ncols;
	char buf[CSV_BUF];
	size_t len;
	bool begun;   /* the head and the header line are out */
	long rows;    /* of this batch */
	char last[80]; /* the id of the batch's last row: the next batch's cursor */
	bool gone;    /* a write failed: the client left */
};

static int
flush(struct csv_out *o)
{
	if (o->len > 0 && !o->gone && req_stream_write(o->req, o->buf, o->len) != 0)
		o->gone = true;
	o->len = 0;
	return o->gone ? -1 : 0;
}

static int
put(struct csv_out *o, const char *s, size_t n)
{
	if (o->len + n > sizeof(o->buf) && flush(o) != 0)
		return -1;
	if (n > sizeof(o->buf))
		return req_stream_write(o->req, s, n) == 0 ? 0 : (o->gone = true, -1);
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	return 0;
}

static int
put_cb(void *arg, const char *s, size_t n)
{
	return put(arg, s, n);
}

static int
field(struct csv_out *o, const char *v, size_t n, bool last)
{
	return csv_field(put_cb, o, v, n, last);
}

static int
begin(struct csv_out *o)
{
	int i;

	o->begun = true;
	if (req_stream_begin(o->req, 200, "text/csv; charset=utf-8") != 0) {
		o->gone = true;
		return -1;
	}
	for (i = 0; i < o->ncols; i++)
		if (field(o, o->cols[i], strlen(o->cols[i]), i == o->ncols - 1) != 0)
			return -1;
	return 0;
}

static int
row(void *arg, const PGresult *r)
{
	struct csv_out *o = arg;
	int i;

	if (!o->begun && begin(o) != 0)
		return -1;
	for (i = 0; i < o->ncols; i++)
		if (field(o, PQgetisnull(r, 0, i) ? "" : PQgetvalue(r, 0, i),
		    (size_t)PQgetlength(r, 0, i), i == o->ncols - 1) != 0)
			return -1;
	o->rows++;
	snprintf(o->last, sizeof(o->last), "%s", PQgetvalue(r, 0, 0));
	return 0;
}

enum err
list_csv(struct app *app, struct req *req, const struct list_spec *spec, int stmt,
    const char *const *cols, int ncols)
{
	static struct csv_out o;   /* 64 KiB: not on the stack; one request at a time */
	struct list_query q;
	const char *p[LIST_PARAMS];
	char msg[256], ask[24], batch[24];
	long left;
	enum err e;

	if (!list_parse(spec, req->query, &q, msg, sizeof(msg))) {
		req_fail(req, 400, "%s", msg);
		return ERR_OK;
	}
	/* The export's batches need the merchant first: a deferred key is looked up on its own. */
	if (!auth_settle(app, req))
		return ERR_OK;
	o.req = req;
	o.cols = cols;
	o.ncols = ncols;
	o.len = 0;
	o.begun = o.gone = false;
	list_params(spec, req, &q, ask, p);
	/* Every item of the range, newest first, a batch at a time after the last one shown. */
	p[LP_DESC] = "true";
	p[LP_LIMIT] = batch;
	left = q.limit_given ? strtol(q.limit, NULL, 10) : -1;
	do {
		snprintf(batch, sizeof(batch), "%ld", left < 0 || left > CSV_BATCH ? CSV_BATCH :
		    left);
		o.rows = 0;
		e = db_each(app->db, stmt, LIST_PARAMS, p, row, &o);
		if (left > 0)
			left -= o.rows;
		p[LP_AFTER] = o.last;
	} while (e == ERR_OK && !o.gone && o.rows == strtol(batch, NULL, 10) && left != 0);
	if (!o.begun && e != ERR_OK)
		return list_failed(app, req, e);
	if (!o.begun)   /* no rows: the header alone */
		begin(&o);
	if (!req->streamed)
		return ERR_INTERNAL;
	flush(&o);
	/* Cut short: the client must not take what it got for the whole list. */
	if (e != ERR_OK || o.gone) {
		log_msg(LOG_LVL_ERROR, req->request_id, "the CSV of %s ended early: %s",
		    spec->collection, o.gone ? "the client is gone" : err_message(e));
		req_stream_cut(req);
	}
	return ERR_OK;
}
