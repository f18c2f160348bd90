/* The endpoints after the sale: one statement, one API object or one refusal. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "intent.h"
#include "jtext.h"
#include "sqlstate.h"
#include "valid.h"
#include "worker_sql.h"

bool
intent_id_ok(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 && strlen(s + n) == 32 &&
	    strspn(s + n, "0123456789abcdef") == 32;
}

const char *
intent_amount(const struct intent_in *in, char buf[24])
{
	if (!in->has_amount)
		return NULL;
	snprintf(buf, 24, "%lld", (long long)in->amount);
	return buf;
}

void
intent_object_text(const struct app *app, struct jtext *t, const char *text, size_t len,
    bool members, intent_finish *finish)
{
	size_t from = t->len;

	jtext_pg(t, text, len, members);
	if (finish == NULL || t->failed)
		return;
	if (members)
		finish(app, t, from, 0);
	else {
		t->s[--t->len] = '\0';   /* the object's closing brace, after its last member */
		finish(app, t, from, 1);
		jtext_lit(t, "}");
	}
}

int
intent_reply_object(const struct app *app, struct req *req, const struct intent_reply *out,
    PGresult *r, int col)
{
	struct jtext t = { 0 };

	jtext_success(&t, out->message);
	if (out->key != NULL) {
		jtext_lit(&t, ",");
		jtext_string(&t, out->key);
		jtext_lit(&t, ":");
	}
	intent_object_text(app, &t, PQgetvalue(r, 0, col), (size_t)PQgetlength(r, 0, col),
	    out->key == NULL, out->finish);
	jtext_lit(&t, "}");
	return req_reply_text(req, &t);
}

enum err
intent_call(struct app *app, struct req *req, int stmt, int n, const char *const *params,
    const char *notfound, PGresult **res)
{
	const char *state, *wait;
	enum err e;

	if ((*res = db_run(app->db, stmt, n, params, &e)) != NULL)
		return ERR_OK;
	if (e != ERR_INVALID)
		return e;
	state = db_sqlstate(app->db);
	if (strcmp(state, SQLSTATE_NOT_FOUND) == 0)
		req_fail(req, 404, "%s", notfound);
	else if (strncmp(state, "MP03", 4) == 0 || strcmp(state, SQLSTATE_NO_ENDPOINT) == 0 ||
	    strcmp(state, SQLSTATE_NO_SECRET) == 0)
		req_fail(req, 400, "%s", db_message(app->db));
	else if (strcmp(state, SQLSTATE_IN_FLIGHT) == 0)
		req_fail(req, 409, "%s", db_message(app->db));
	else if (strcmp(state, SQLSTATE_RATE_LIMITED) == 0) {
		/* The detail is the seconds to wait, by the database's clock. */
		wait = db_detail(app->db);
		if (*wait == '\0' || strlen(wait) > 5 || strspn(wait, "0123456789") != strlen(wait))
			wait = "60";
		req_fail(req, 429, "%s; retry after %s seconds", db_message(app->db), wait);
		req_add_header(req, "Retry-After", wait);
	} else
		return ERR_INTERNAL;
	return ERR_OK;
}

/* The answer from row 0's column col of r (none, or NULL: the 404); PQclears r. */
static enum err
reply_object(const struct app *app, struct req *req, const struct intent_reply *out,
    PGresult *r, int col)
{
	enum err e = ERR_OK;

	if (PQntuples(r) == 0 || PQgetisnull(r, 0, col))
		req_fail(req, 404, "%s", out->notfound);
	else if (intent_reply_object(app, req, out, r, col) != 0)
		e = ERR_NOMEM;
	PQclear(r);
	return e;
}

/* Another merchant's object is reported exactly like a missing one (in SQL). */
static bool
id_refused(struct req *req, const struct intent_reply *out)
{
	if (out->id == NULL ? valid_uuid(req->param) : intent_id_ok(req->param, out->id))
		return false;
	req_fail(req, 404, "%s", out->notfound);
	return true;
}

enum err
intent_run(struct app *app, struct req *req, int stmt, int n, const char *const *params,
    const struct intent_reply *out)
{
	PGresult *r;
	enum err e;

	if (id_refused(req, out))
		return ERR_OK;
	if ((e = intent_call(app, req, stmt, n, params, out->notfound, &r)) != ERR_OK || r == NULL)
		return e;
	return reply_object(app, req, out, r, INTENT_OBJECT);
}

enum err
intent_get(struct app *app, struct req *req, int stmt, int stmt_key,
    const struct intent_reply *out)
{
	const char *p[3] = { req->param, req->merchant, NULL };
	PGresult *r;
	enum err e;

	if (!req->auth_deferred)
		return intent_run(app, req, stmt, 2, p, out);
	if (id_refused(req, out))
		return ERR_OK;
	p[0] = req->key_digest;
	p[1] = config_env_name(&app->cfg);
	p[2] = req->param;
	/* A failure leaves the key deferred: the route looks it up before answering. */
	if ((r = db_run(app->db, stmt_key, 3, p, &e)) == NULL)
		return e == ERR_INVALID ? ERR_INTERNAL : e;
	if (!auth_found(req, r, &e))
		return e;
	return reply_object(app, req, out, r, INTENT_KEY_OBJECT);
}
