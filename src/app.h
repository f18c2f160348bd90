#ifndef MP_APP_H
#define MP_APP_H

#include "config.h"
#include "db.h"

/* What lives across requests in one worker: the config and the database connection. */
struct app {
	struct config cfg;
	struct db *db;
};

#endif
