#ifndef MP_WEBHOOK_SQL_H
#define MP_WEBHOOK_SQL_H

#include "db.h"

/*
 * Every statement marketpay-webhookd runs, prepared once per connection (the table in
 * webhook_sql.c), and after each one that returns rows the enum of its result columns.
 */
enum webhook_stmt {
	WH_CLAIM,
	WH_SLOT,
	WH_ATTEMPT,
	WH_DELIVERED,   /* no rows */
	WH_RETRY,       /* no rows */
	WH_DEAD,        /* no rows */
	WH_NEXT_DUE,
	WH_DEFER,       /* no rows; PQcmdTuples counts the events deferred */
	WH_EXPIRE,
	WH_STMT__MAX
};

/* WH_CLAIM: the event, its merchant's endpoint and sealed secret (bytea, or NULL) */
enum wh_claim_col {
	WH_CLAIM_ID,
	WH_CLAIM_MERCHANT,
	WH_CLAIM_BODY,
	WH_CLAIM_ATTEMPTS,
	WH_CLAIM_URL,
	WH_CLAIM_SECRET
};

/* WH_SLOT: "t" when the slot was free and is now held */
enum wh_slot_col { WH_SLOT_TAKEN };

/* WH_ATTEMPT: the attempt's number */
enum wh_attempt_col { WH_ATTEMPT_NUMBER };

/* WH_NEXT_DUE: milliseconds until the next pending event falls due, NULL when none */
enum wh_next_due_col { WH_NEXT_DUE_MS };

/* WH_EXPIRE: how many sessions the sweep expired */
enum wh_expire_col { WH_EXPIRE_COUNT };

/* The daemon's statement table, indexed by enum webhook_stmt (for db_set_statements). */
extern const struct db_sql webhook_sql[WH_STMT__MAX];

#endif
