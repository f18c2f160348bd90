/* The expire endpoint: an open session ended by its merchant, no money moved. */
#include "expire.h"
#include "intent.h"
#include "session.h"
#include "worker_sql.h"

enum err
session_expire(struct app *app, struct req *req, void *in)
{
	static const struct intent_reply expired = { NULL, "Payment session expired.", NULL,
	    SESSION_NOT_FOUND, session_url };
	const char *p[2] = { req->merchant, req->param };

	(void)in;
	/*
	 * One statement expires the session and returns it as GET shows it. A malformed id, or
	 * another merchant's session (in SQL), is reported exactly like a missing one.
	 */
	return intent_run(app, req, DB_SESSION_EXPIRE, 2, p, &expired);
}
