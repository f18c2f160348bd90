#ifndef MP_LIST_H
#define MP_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "app.h"
#include "err.h"
#include "intent.h"
#include "jtext.h"
#include "req.h"

/*
 * The list convention of every collection (marketpay-api(7), LISTS): the query parameters
 * limit, starting_after, ending_before, created_gte, created_lt and up to two filters of the
 * collection's own; anything else, a repeated parameter or a bad value is a 400 naming it.
 * The page comes from mp_list (sql/011_lists.sql): newest first, keyset paging.
 */

#define LIST_LIMIT_DEFAULT 20
#define LIST_LIMIT_MAX 100
#define LIST_VALUE_MAX 256      /* a decoded value; longer is a 400 */

/* One filter of a collection: its parameter's name, and its rule (NULL message: any text). */
struct list_filter {
	const char *name;
	bool (*ok)(const char *value);   /* NULL: any value up to LIST_VALUE_MAX bytes */
	const char *rule;                /* the 400's words after the name */
};

struct list_spec {
	const char *collection;          /* mp_list's name of it */
	bool (*id_ok)(const char *id);   /* the form of a cursor: else "no such <thing>" */
	const char *thing;               /* "refund" */
	struct list_filter filter[2];    /* name NULL: none */
	/* Appends the members the database does not know to each item; NULL: none. */
	intent_finish *finish;
};

/* The parameters of one list request, decoded; NULL = not given. */
struct list_query {
	char limit[24];
	bool limit_given;
	const char *after, *before, *gte, *lt;
	const char *filter[2];
	char buf[2048];                  /* the decoded values point in here */
};

/*
 * Parses query (a URL's query string) against spec into q. Returns true, or false with the
 * 400's message in msg (naming the parameter).
 */
bool list_parse(const struct list_spec *spec, const char *query, struct list_query *q,
    char *msg, size_t msglen);

/* True when s is an ISO 8601 time with seconds and an offset (Z, +HH:MM or -HH:MM). */
bool list_time_ok(const char *s);

/*
 * mp_list's parameters for the page q of req's merchant, as DB_LIST and DB_LIST_CSV take
 * them, into p[LIST_PARAMS] (ask[24] holds the limit: one more than the page shows).
 */
enum list_param_pos { LP_COLLECTION, LP_MERCHANT, LP_LIMIT, LP_AFTER, LP_BEFORE, LP_GTE,
	LP_LT, LP_FILTER1, LP_FILTER2, LP_DESC, LIST_PARAMS };
void list_params(const struct list_spec *spec, const struct req *req,
    const struct list_query *q, char ask[24], const char *p[LIST_PARAMS]);

/*
 * After mp_list failed with e before anything was answered: a cursor not the merchant's is
 * answered (400 naming it; ERR_OK), anything else is returned for the pipeline to answer.
 */
enum err list_failed(struct app *app, struct req *req, enum err e);

/* Whether req asks for CSV (Accept names text/csv). */
bool list_wants_csv(const struct req *req);

/*
 * The rows of the list as CSV, streamed: a header of cols (ncols names, stmt's columns, the
 * first the item's id), then every item of the range newest first (with limit: the newest
 * that many), fetched in batches by keyset and written as they come, so that no size of
 * result is held in memory. 400 as list_run before the first byte; a failure after it is
 * logged and cuts the connection after the rows written (req_stream_cut), so the client
 * never takes a short CSV for the whole list. ERR_OK when it answered.
 */
enum err list_csv(struct app *app, struct req *req, const struct list_spec *spec, int stmt,
    const char *const *cols, int ncols);

/*
 * The handler's whole work: parses req->query against spec (400), asks mp_list for the
 * page (400 for a cursor that is not the merchant's), answers 200 with {status_code,
 * success, data, has_more}. ERR_OK when it answered, else the error to answer.
 */
enum err list_run(struct app *app, struct req *req, const struct list_spec *spec);

#endif
