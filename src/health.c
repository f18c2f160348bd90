#include <string.h>

#include "health.h"

enum err
health_get(struct app *app, struct req *req, void *in)
{
	static const char ok[] = "{\"status\":\"ok\",\"database\":\"ok\"}";
	static const char down[] = "{\"status\":\"unavailable\",\"database\":\"unreachable\"}";
	PGresult *r = NULL;
	enum err e = ERR_UNAVAILABLE;

	if (db_ready(app->db))
		r = db_run(app->db, DB_HEALTH, 0, NULL, &e);
	PQclear(r);
	if (e == ERR_OK)
		req_reply(req, 200, "application/json", ok, strlen(ok));
	else
		req_reply(req, 503, "application/json", down, strlen(down));
	(void)in;
	return ERR_OK;
}
