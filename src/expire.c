/* The expire endpoint: an open session ended by its merchant, no money moved. */
#include "expire.h"
#include "intent.h"
#include "session.h"
#include "valid.h"
#include "worker_sql.h"

#define NOT_FOUND "payment session not found"

enum err
session_expire(struct app *app, struct req *req, void *in)
{
	const char *p[2] = { req->merchant, req->param };
	PGresult *r = NULL;
	enum err e;

	(void)in;
	/* Another merchant's session is reported exactly like a missing one (in SQL). */
	if (!valid_uuid(req->param)) {
		req_fail(req, 404, NOT_FOUND);
		return ERR_OK;
	}
	if ((e = intent_call(app, req, DB_SESSION_EXPIRE, 2, p, NOT_FOUND, &r)) != ERR_OK ||
	    r == NULL)
		return e;
	PQclear(r);
	return session_reply(app, req, "Payment session expired.");
}
