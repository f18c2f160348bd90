/* The expiry sweep: open sessions past their time become expired, each with its event. */
#include <stdio.h>
#include <stdlib.h>

#include <libpq-fe.h>

#include "err.h"
#include "log.h"
#include "webhook_expire.h"
#include "webhook_sql.h"

long
webhook_expire(struct db *db, bool (*stop)(void))
{
	char batch[16];
	const char *p[1] = { batch };
	long total = 0, n;
	PGresult *r;
	enum err e;

	snprintf(batch, sizeof(batch), "%d", EXPIRE_BATCH);
	do {
		if ((r = db_run(db, WH_EXPIRE, 1, p, &e)) == NULL) {
			log_msg(LOG_LVL_ERROR, NULL, "expiry sweep failed after %ld sessions: %s",
			    total, err_message(e));
			return -1;
		}
		n = atol(PQgetvalue(r, 0, WH_EXPIRE_COUNT));
		PQclear(r);
		total += n;
	} while (n == EXPIRE_BATCH && (stop == NULL || !stop()));
	if (total > 0)
		log_msg(LOG_LVL_INFO, NULL, "expired %ld payment sessions past their time", total);
	return total;
}
