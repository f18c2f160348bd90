/* The webhook daemon's statement table, prepared at each connect. */
#include "webhook_sql.h"

/*
 * The only SQL the daemon sends, apart from LISTEN. Indexed by enum webhook_stmt; each
 * comment names the enum of the statement's result columns. Each runs in a transaction of
 * its own: no transaction stays open while deliveries are in flight.
 */
const struct db_sql webhook_sql[WH_STMT__MAX] = {
	/*
	 * WH_CLAIM: $1 this sender, $2 the most events, $3 webhook_endpoint_in_flight, $4 the
	 * lease in seconds. Fair across merchants, within each merchant's in-flight limit and
	 * breaker (mp_webhook_claim, sql/014). enum wh_claim_col.
	 */
	/*
	 * Also each event's age in ms by the database's clock (now() - created_at), for the
	 * delivery latency metric; NULL when the event was redelivered at the merchant's request
	 * (more attempts recorded than its count since queued), which the metric leaves out.
	 * Both are subqueries by key, one index probe each per claimed event: a join would let
	 * the planner, which guesses 1000 rows from the function, scan every event per claim.
	 */
	{ "wh_claim",
	  "SELECT c.*, CASE WHEN coalesce((SELECT max(a.attempt) FROM webhook_attempts a"
	  " WHERE a.event_id = c.id), 0) = c.attempts"
	  " THEN (SELECT floor(extract(epoch FROM now() - e.created_at) * 1000)::bigint"
	  " FROM webhook_events e WHERE e.id = c.id) END"
	  " FROM mp_webhook_claim($1, $2::int, $3::int, $4::int) c" },
	/*
	 * WH_RECORD: $1 this sender; then one array element per attempt: $2 event, $3 outcome
	 * (delivered, retry, dead), $4 seconds to the retry, $5 url, $6 HTTP status, $7 error,
	 * $8 duration in ms, $9 the endpoint itself failed; $10 webhook_breaker_failures, $11
	 * webhook_breaker_cooldown. enum wh_record_col.
	 */
	{ "wh_record",
	  "SELECT mp_webhook_record($1, $2::text[], $3::text[], $4::int[], $5::text[], $6::int[],"
	  " $7::text[], $8::int[], $9::boolean[], $10::int, $11::int)" },
	/*
	 * WH_NEXT_DUE: milliseconds until the next event falls due (a retry, or a lease that
	 * runs out) or an open breaker closes, after a claim found nothing. enum
	 * wh_next_due_col.
	 */
	{ "wh_next_due",
	  "SELECT ceil(extract(epoch FROM least("
	  "(SELECT min(next_attempt_at) FROM webhook_events"
	  " WHERE status = 'pending' AND next_attempt_at > now()),"
	  "(SELECT min(open_until) FROM webhook_endpoints WHERE open_until > now()))"
	  " - clock_timestamp()) * 1000)::bigint" },
	/*
	 * WH_EXPIRE: $1 the most sessions to expire. The expiry sweep (webhook_expire.c): open
	 * sessions past expires_at stored as expired with their session.expired events, in one
	 * transaction; rows a payment holds are skipped. enum wh_expire_col.
	 */
	{ "wh_expire", "SELECT mp_expire_sessions($1::int)" },
};
