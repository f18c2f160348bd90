/* The list convention: the query's parameters, one page from mp_list, the reply. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "form.h"
#include "list.h"
#include "sqlstate.h"
#include "valid.h"
#include "worker_sql.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define TIME_RULE "must be an ISO 8601 time with an offset, such as 2026-11-23T10:00:00+00:00"

/* The parameters every list has, in mp_list's order after the filters. */
enum list_param { P_LIMIT, P_AFTER, P_BEFORE, P_GTE, P_LT, P_FILTER1, P_FILTER2, P__MAX };

static const char *const common[] = { "limit", "starting_after", "ending_before",
	"created_gte", "created_lt" };

static const char *
param_name(const struct list_spec *spec, int p)
{
	return p < P_FILTER1 ? common[p] : spec->filter[p - P_FILTER1].name;
}

static bool
digits(const char *s, size_t n)
{
	return strspn(s, "0123456789") >= n;
}

static int
num(const char *s, size_t n)
{
	int v = 0;

	while (n-- > 0)
		v = v * 10 + *s++ - '0';
	return v;
}

bool
list_time_ok(const char *s)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, m, d;
	size_t i = 19;

	if (strlen(s) < 20 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
	    !digits(s + 8, 2) || s[10] != 'T' || !digits(s + 11, 2) || s[13] != ':' ||
	    !digits(s + 14, 2) || s[16] != ':' || !digits(s + 17, 2))
		return false;
	y = num(s, 4);
	m = num(s + 5, 2);
	d = num(s + 8, 2);
	if (y < 1 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1] ||
	    (m == 2 && d == 29 && (y % 4 != 0 || (y % 100 == 0 && y % 400 != 0))) ||
	    num(s + 11, 2) > 23 || num(s + 14, 2) > 59 || num(s + 17, 2) > 59)
		return false;
	if (s[i] == '.') {
		size_t f = strspn(s + i + 1, "0123456789");

		if (f < 1 || f > 6)
			return false;
		i += 1 + f;
	}
	if (strcmp(s + i, "Z") == 0)
		return true;
	/* A '+' left unencoded in a query string arrives as a space: it can only be the sign. */
	return (s[i] == '+' || s[i] == '-' || s[i] == ' ') && strlen(s + i) == 6 &&
	    digits(s + i + 1, 2) && s[i + 3] == ':' && digits(s + i + 4, 2) &&
	    num(s + i + 1, 2) <= 23 && num(s + i + 4, 2) <= 59;
}

/* A parameter's name as the 400 may quote it: printable ASCII, not too long. */
static const char *
quotable(const char *name, size_t len, char *buf, size_t buflen)
{
	size_t i;

	if (len == 0 || len >= buflen || len > 40)
		return "(a parameter)";
	for (i = 0; i < len; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			return "(a parameter)";
	memcpy(buf, name, len);
	buf[len] = '\0';
	return buf;
}

/* Which of the list's parameters name[len] is: its enum list_param, or -1. */
static int
param_of(const struct list_spec *spec, const char *name, size_t len)
{
	int p;

	for (p = 0; p < P__MAX; p++) {
		const char *n = param_name(spec, p);

		if (n != NULL && strlen(n) == len && strncmp(n, name, len) == 0)
			return p;
	}
	return -1;
}

/* Each parameter's value decoded into q->buf; unknown and repeated ones refused. */
static bool
decode(const struct list_spec *spec, const char *query, const char *v[P__MAX],
    struct list_query *q, char *msg, size_t msglen)
{
	size_t len = strlen(query), i = 0, used = 0;
	char shown[48];

	while (i < len) {
		size_t end = i + strcspn(query + i, "&"), nlen = strcspn(query + i, "=&");
		int p = param_of(spec, query + i, nlen);
		long n;

		if (end == i) {
			i++;
			continue;
		}
		if (p < 0) {
			snprintf(msg, msglen, "%s is not a parameter of this list",
			    quotable(query + i, nlen, shown, sizeof(shown)));
			return false;
		}
		if (v[p] != NULL) {
			snprintf(msg, msglen, "%s is given more than once", param_name(spec, p));
			return false;
		}
		n = form_get(query + i, end - i, param_name(spec, p), q->buf + used,
		    LIST_VALUE_MAX + 1 < sizeof(q->buf) - used ? LIST_VALUE_MAX + 1 :
		    sizeof(q->buf) - used);
		if (n < 0 || !valid_utf8(q->buf + used, (size_t)n)) {
			snprintf(msg, msglen, "%s must be text of at most %d bytes, "
			    "percent-encoded correctly", param_name(spec, p), LIST_VALUE_MAX);
			return false;
		}
		v[p] = q->buf + used;
		used += (size_t)n + 1;
		i = end + 1;
	}
	return true;
}

bool
list_parse(const struct list_spec *spec, const char *query, struct list_query *q,
    char *msg, size_t msglen)
{
	const char *v[P__MAX] = { NULL };
	char *end;
	long limit = LIST_LIMIT_DEFAULT;
	int p, f;

	memset(q, 0, sizeof(*q));
	if (!decode(spec, query, v, q, msg, msglen))
		return false;
	if (v[P_LIMIT] != NULL && (v[P_LIMIT][0] < '0' || v[P_LIMIT][0] > '9' ||
	    (limit = strtol(v[P_LIMIT], &end, 10)) < 1 || limit > LIST_LIMIT_MAX || *end != '\0')) {
		snprintf(msg, msglen, "limit must be a whole number from 1 to %d", LIST_LIMIT_MAX);
		return false;
	}
	snprintf(q->limit, sizeof(q->limit), "%ld", limit);
	q->limit_given = v[P_LIMIT] != NULL;
	if (v[P_AFTER] != NULL && v[P_BEFORE] != NULL) {
		snprintf(msg, msglen, "starting_after and ending_before cannot be given together");
		return false;
	}
	for (p = P_AFTER; p <= P_BEFORE; p++)
		if (v[p] != NULL && !spec->id_ok(v[p])) {
			snprintf(msg, msglen, "%s: no such %s", common[p], spec->thing);
			return false;
		}
	for (p = P_GTE; p <= P_LT; p++) {
		char *sign;

		if (v[p] == NULL)
			continue;
		if (!list_time_ok(v[p])) {
			snprintf(msg, msglen, "%s " TIME_RULE, common[p]);
			return false;
		}
		/* The space an unencoded '+' became is the offset's sign: PostgreSQL wants '+'. */
		if ((sign = strchr(q->buf + (v[p] - q->buf), ' ')) != NULL)
			*sign = '+';
	}
	for (f = 0; f < 2; f++) {
		const struct list_filter *lf = &spec->filter[f];
		const char *val = v[P_FILTER1 + f];

		if (val != NULL && lf->ok != NULL && !lf->ok(val)) {
			snprintf(msg, msglen, "%s %s", lf->name, lf->rule);
			return false;
		}
		q->filter[f] = val;
	}
	q->after = v[P_AFTER];
	q->before = v[P_BEFORE];
	q->gte = v[P_GTE];
	q->lt = v[P_LT];
	return true;
}

/*
 * Answers req 200 with {"status_code": 10, "success": true, "data": [column col of rows
 * first .. first + shown - 1 of r], "has_more": whether r's rows are more than shown}; -1
 * (nothing answered) on ENOMEM or an item that is not a JSON object.
 */
static int
page_reply(const struct app *app, const struct list_spec *spec, struct req *req, PGresult *r,
    int col, int first, int shown, int rows)
{
	struct jtext t = { 0 };
	int i;

	jtext_success(&t, NULL);
	jtext_lit(&t, ",\"data\":[");
	for (i = first; i < first + shown; i++) {
		if (i > first)
			jtext_lit(&t, ",");
		intent_object_text(app, &t, PQgetvalue(r, i, col), (size_t)PQgetlength(r, i, col),
		    false, spec->finish);
	}
	jtext_lit(&t, rows > shown ? "],\"has_more\":true}" : "],\"has_more\":false}");
	return req_reply_text(req, &t);
}

void
list_params(const struct list_spec *spec, const struct req *req, const struct list_query *q,
    char ask[24], const char *p[LIST_PARAMS])
{
	/* One more than the page shows: whether there are more. */
	snprintf(ask, 24, "%ld", strtol(q->limit, NULL, 10) + 1);
	p[LP_COLLECTION] = spec->collection;
	p[LP_MERCHANT] = req->merchant;
	p[LP_LIMIT] = ask;
	p[LP_AFTER] = q->after;
	p[LP_BEFORE] = q->before;
	p[LP_GTE] = q->gte;
	p[LP_LT] = q->lt;
	p[LP_FILTER1] = q->filter[0];
	p[LP_FILTER2] = q->filter[1];
	p[LP_DESC] = "false";
}

bool
list_wants_csv(const struct req *req)
{
	return req->accept != NULL && strstr(req->accept, "text/csv") != NULL;
}

/*
 * A failed mp_list before anything was answered: a cursor that is not the merchant's is the
 * 400 naming it (ERR_OK: answered), anything else the error to answer.
 */
enum err
list_failed(struct app *app, struct req *req, enum err e)
{
	if (e != ERR_INVALID || strcmp(db_sqlstate(app->db), SQLSTATE_NO_CURSOR) != 0)
		return e == ERR_INVALID ? ERR_INTERNAL : e;
	req_fail(req, 400, "%s", db_message(app->db));
	return ERR_OK;
}

enum err
list_run(struct app *app, struct req *req, const struct list_spec *spec)
{
	struct list_query q;
	char msg[256], ask[24];
	const char *p[LIST_PARAMS], *pk[LIST_PARAMS + 1];
	PGresult *r;
	enum err e;
	long limit;
	int col = LIST_OBJECT, rows;
	bool more;

	if (!list_parse(spec, req->query, &q, msg, sizeof(msg))) {
		req_fail(req, 400, "%s", msg);
		return ERR_OK;
	}
	list_params(spec, req, &q, ask, p);
	if (!req->auth_deferred)
		r = db_run(app->db, DB_LIST, LIST_PARAMS, p, &e);
	else {
		/* The key not looked up yet (the route's own_auth): the page's statement does it. */
		pk[0] = req->key_digest;
		pk[1] = config_env_name(&app->cfg);
		pk[2] = p[LP_COLLECTION];
		memcpy(pk + 3, p + LP_MERCHANT + 1, (LIST_PARAMS - 2) * sizeof(*p));
		r = db_run(app->db, DB_LIST_KEY, LIST_PARAMS + 1, pk, &e);
	}
	/* A failure leaves a deferred key deferred: the route looks it up before answering. */
	if (r == NULL)
		return list_failed(app, req, e);
	if (req->auth_deferred) {
		if (!auth_found(req, r, &e))
			return e;
		col = LIST_KEY_OBJECT;
	}
	rows = PQntuples(r) == 1 && PQgetisnull(r, 0, col) ? 0 : PQntuples(r);
	/*
	 * The row more than the page is the oldest of it, or before a cursor (the page nearest
	 * it, newest first) the newest.
	 */
	limit = strtol(q.limit, NULL, 10);
	more = rows > limit;
	if (page_reply(app, spec, req, r, col, more && q.before != NULL ? 1 : 0,
	    more ? (int)limit : rows, rows) != 0)
		e = ERR_NOMEM;
	PQclear(r);
	return e;
}
