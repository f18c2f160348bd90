#ifndef MP_WEBHOOK_SQL_H
#define MP_WEBHOOK_SQL_H

#include "db.h"

/*
 * Every statement marketpay-webhookd runs, prepared once per connection (the table in
 * webhook_sql.c), and after each one that returns rows the enum of its result columns.
 */
enum webhook_stmt {
	WH_CLAIM,
	WH_RECORD,
	WH_NEXT_DUE,
	WH_EXPIRE,
	WH_STMT__MAX
};

/* WH_CLAIM: an event leased to this sender, its merchant's endpoint and sealed secrets */
enum wh_claim_col {
	WH_CLAIM_ID,
	WH_CLAIM_MERCHANT,
	WH_CLAIM_BODY,
	WH_CLAIM_ATTEMPTS,
	WH_CLAIM_URL,
	WH_CLAIM_SECRET,     /* bytea, or NULL */
	WH_CLAIM_PREVIOUS,   /* bytea: the previous secret within its rotation window, or NULL */
	WH_CLAIM_AGE_MS      /* the event's age at the claim, or NULL: not observed */
};

/* WH_RECORD: how many of the events changed state (the others' leases had run out) */
enum wh_record_col { WH_RECORD_CHANGED };

/* WH_NEXT_DUE: milliseconds until the next event or breaker falls due, NULL when none */
enum wh_next_due_col { WH_NEXT_DUE_MS };

/* WH_EXPIRE: how many sessions the sweep expired */
enum wh_expire_col { WH_EXPIRE_COUNT };

/* The daemon's statement table, indexed by enum webhook_stmt (for db_set_statements). */
extern const struct db_sql webhook_sql[WH_STMT__MAX];

#endif
