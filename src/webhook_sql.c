/* The webhook daemon's statement table, prepared at each connect. */
#include "webhook_sql.h"

/*
 * The only SQL the daemon sends, apart from BEGIN/COMMIT/ROLLBACK and LISTEN. Indexed by enum
 * webhook_stmt; each comment names the enum of the statement's result columns.
 */
const struct db_sql webhook_sql[WH_STMT__MAX] = {
	/*
	 * WH_CLAIM: the oldest due event that no other sender holds, of a merchant not in $1
	 * (those whose delivery slots are all taken). Only the event row is locked (OF e): the
	 * merchant row stays free for marketpayctl. enum wh_claim_col.
	 */
	{ "wh_claim",
	  "SELECT e.id, e.merchant_id, e.body, e.attempts, m.webhook_url, m.webhook_secret_sealed"
	  " FROM webhook_events e JOIN merchants m ON m.id = e.merchant_id"
	  " WHERE e.status = 'pending' AND e.next_attempt_at <= now()"
	  " AND NOT e.merchant_id = ANY($1::bigint[])"
	  " ORDER BY e.next_attempt_at LIMIT 1 FOR UPDATE OF e SKIP LOCKED" },
	/*
	 * WH_SLOT: $1 merchant, $2 slot. At most MERCHANT_SLOTS (webhook.c) deliveries of one
	 * merchant are in flight across all senders and daemons, so a merchant whose endpoint
	 * hangs holds that many senders, never all of them. The lock ends with the transaction.
	 * enum wh_slot_col.
	 */
	{ "wh_slot",
	  "SELECT pg_try_advisory_xact_lock(7301 + $2::int, ($1::bigint % 2147483647)::int)" },
	/*
	 * WH_ATTEMPT: $1 event, $2 url, $3 HTTP status, $4 error, $5 duration. Numbers go on
	 * from the event's earlier attempts, also across a redelivery; the row lock we hold
	 * makes max() + 1 safe. enum wh_attempt_col.
	 */
	{ "wh_attempt",
	  "INSERT INTO webhook_attempts (event_id, attempt, url, http_status, error, duration_ms)"
	  " SELECT $1, coalesce(max(attempt), 0) + 1, $2, $3::int, $4, $5::int"
	  " FROM webhook_attempts WHERE event_id = $1 RETURNING attempt" },
	/* WH_DELIVERED: $1 event */
	{ "wh_delivered",
	  "UPDATE webhook_events SET status = 'delivered', attempts = attempts + 1,"
	  " delivered_at = clock_timestamp(), last_error = NULL WHERE id = $1" },
	/* WH_RETRY: $1 event, $2 error, $3 seconds from the end of this attempt */
	{ "wh_retry",
	  "UPDATE webhook_events SET attempts = attempts + 1, last_error = $2,"
	  " next_attempt_at = clock_timestamp() + make_interval(secs => $3::int) WHERE id = $1" },
	/* WH_DEAD: $1 event, $2 error */
	{ "wh_dead",
	  "UPDATE webhook_events SET status = 'dead', attempts = attempts + 1, last_error = $2"
	  " WHERE id = $1" },
	/*
	 * WH_NEXT_DUE: milliseconds until the next event falls due, after a scan found none.
	 * Events already due then are held by other daemons: theirs to finish. enum
	 * wh_next_due_col.
	 */
	{ "wh_next_due",
	  "SELECT ceil(extract(epoch FROM min(next_attempt_at) - clock_timestamp()) * 1000)::bigint"
	  " FROM webhook_events WHERE status = 'pending' AND next_attempt_at > now()" },
	/*
	 * WH_DEFER: $1 merchant, $2 seconds, $3 the event just tried. When an endpoint does not
	 * answer (or answers 408, 429, 5xx), the merchant's other due events wait for the
	 * failed one's next attempt instead of each holding a sender for webhook_timeout: the
	 * one event probes the endpoint, everyone else's events keep going out. Their attempt
	 * counts do not move; events other daemons hold are skipped, not waited for.
	 */
	{ "wh_defer",
	  "UPDATE webhook_events SET next_attempt_at = clock_timestamp() + make_interval(secs =>"
	  " $2::int) WHERE id IN (SELECT id FROM webhook_events WHERE merchant_id = $1::bigint"
	  " AND status = 'pending' AND id <> $3 AND next_attempt_at < clock_timestamp() +"
	  " make_interval(secs => $2::int) FOR UPDATE SKIP LOCKED)" },
	/*
	 * WH_EXPIRE: $1 the most sessions to expire. The expiry sweep (webhook_expire.c): open
	 * sessions past expires_at stored as expired with their session.expired events, in one
	 * transaction; rows a payment holds are skipped. enum wh_expire_col.
	 */
	{ "wh_expire", "SELECT mp_expire_sessions($1::int)" },
};
