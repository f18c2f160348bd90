#ifndef MP_WEBHOOK_EXPIRE_H
#define MP_WEBHOOK_EXPIRE_H

#include <stdbool.h>

#include "db.h"

/* Sessions one sweep transaction expires at the most. */
#define EXPIRE_BATCH 500

/*
 * The expiry sweep of marketpay-webhookd: mp_expire_sessions (sql/010_events.sql) in
 * transactions of at most EXPIRE_BATCH sessions, until one expires fewer or stop() says
 * to stop (NULL: never). db must be ready and outside a transaction. Returns how many
 * sessions it expired, or -1 on a database failure (what committed before stays).
 */
long webhook_expire(struct db *db, bool (*stop)(void));

#endif
