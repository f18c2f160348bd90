/* The expire endpoint: an open session ended by its merchant, no money moved. */
#include "expire.h"
#include "intent.h"
#include "session.h"
#include "valid.h"
#include "worker_sql.h"

enum err
session_expire(struct app *app, struct req *req, void *in)
{
	static const struct intent_reply expired = { NULL, "Payment session expired.", NULL,
	    SESSION_NOT_FOUND, session_url };
	const char *p[2] = { req->merchant, req->param };
	PGresult *r = NULL;
	enum err e;

	(void)in;
	/* Another merchant's session is reported exactly like a missing one (in SQL). */
	if (!valid_uuid(req->param)) {
		req_fail(req, 404, SESSION_NOT_FOUND);
		return ERR_OK;
	}
	if ((e = intent_call(app, req, DB_SESSION_EXPIRE, 2, p, SESSION_NOT_FOUND, &r)) != ERR_OK ||
	    r == NULL)
		return e;
	PQclear(r);
	/* The session as GET shows it: $1 its id, $2 the merchant. */
	p[0] = req->param;
	p[1] = req->merchant;
	return intent_run(app, req, DB_SESSION_GET, 2, p, &expired);
}
