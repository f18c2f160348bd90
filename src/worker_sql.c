/* The workers' statement table: the SQL of marketpay-fcgi, prepared at each connect. */
#include "worker_sql.h"

/*
 * An API key looked up by its digest ($1) and environment ($2), live and of an active
 * merchant, as k and m; and its last use noted when the stored one is stale (sql/023).
 */
#define KEY_LOOKUP_FROM " FROM api_keys k JOIN merchants m ON m.id = k.merchant_id"
#define KEY_LOOKUP_WHERE \
	" WHERE k.digest = $1::bytea AND k.environment = $2" \
	" AND k.revoked_at IS NULL AND m.status = 'active'"
#define KEY_LOOKUP KEY_LOOKUP_FROM KEY_LOOKUP_WHERE
#define KEY_USED "CASE WHEN mp_key_use_stale(k.last_used_at) THEN mp_key_used(k.id) END"
/* auth_key's columns (enum auth_key_col), the start of every statement that looks a key up */
#define KEY_COLUMNS "SELECT k.merchant_id, m.name, m.currency, " KEY_USED

/*
 * A PIN lock as two columns: until when (ISO 8601; "" for the hard lock the operator lifts,
 * NULL for none) and the seconds left (NULL for none or hard).
 */
#define LOCKED_COLUMNS \
	" CASE WHEN locked_until = 'infinity' THEN '' ELSE mp_iso(locked_until) END," \
	" CASE WHEN isfinite(locked_until) THEN" \
	" greatest(ceil(extract(epoch FROM locked_until - now())), 1)::bigint END"

/*
 * The only SQL the workers send, apart from BEGIN/COMMIT/ROLLBACK. Indexed by enum
 * worker_stmt; each comment names the enum of the statement's result columns.
 */
const struct db_sql worker_sql[DB_STMT__MAX] = {
	/* DB_HEALTH */
	{ "health", "SELECT 1" },
	/*
	 * DB_AUTH_KEY: $1 digest (bytea hex), $2 environment; enum auth_key_col. The key's use
	 * is noted (a write) only when its last one is older than the granularity
	 * (sql/023_key_last_use.sql); otherwise the statement reads only.
	 */
	{ "auth_key", KEY_COLUMNS KEY_LOOKUP },
	/* DB_SESSION_CREATE: $1 the API key's digest, $2 environment, $3 user_id, $4 email,
	 * $5 and $6 the redirect URLs, $7 lifetime, $8-$10 the items' ids, names and prices
	 * (array literals), $11 the page's locale or NULL: see mp_create_session in
	 * sql/030_session_insert_flat.sql (no row: the key is refused); enum session_create_col */
	{ "session_create",
	  "SELECT id, mp_iso(expires_at), merchant_id FROM mp_create_session($1::bytea, $2, $3,"
	  " $4, $5, $6, $7::int, $8::text[], $9::text[], $10::bigint[], $11)" },
	/* DB_SESSION_GET: $1 session id, $2 merchant id; enum intent_col */
	{ "session_get",
	  "SELECT mp_session_json(s) FROM payment_sessions s"
	  " WHERE s.id = $1::uuid AND s.merchant_id = $2" },
	/*
	 * DB_SESSION_GET_KEY: GET of a session in one round trip, the key looked up as auth_key
	 * does: $1 key digest, $2 environment, $3 session id; enum intent_key_col
	 */
	{ "session_get_key", KEY_COLUMNS ", (SELECT mp_session_json(s) FROM payment_sessions s"
	  " WHERE s.id = $3::uuid AND s.merchant_id = k.merchant_id)" KEY_LOOKUP },
	/* DB_LOCK_TIMEOUT: $1 milliseconds, for this transaction only */
	{ "lock_timeout", "SELECT set_config('lock_timeout', $1 || 'ms', true)" },
	/*
	 * DB_IDEM_LOCK: $1 merchant id, $2 key; held until the transaction ends. Once it is
	 * held, lock_timeout goes back to none: the bound is for the key, and the handler's row
	 * locks (fifty refunds of one session) wait as they would without the header instead
	 * of failing with 409. OFFSET 0 keeps the lock first. The key goes into the setting
	 * marketpay.idempotency_key for the rest of the transaction: the transfers it makes
	 * keep it (sql/011_lists.sql).
	 */
	{ "idem_lock",
	  "SELECT set_config('lock_timeout', '0', true),"
	  " set_config('marketpay.idempotency_key', $2, true) FROM (SELECT"
	  " pg_advisory_xact_lock(hashtextextended($1 || ':' || $2, 7201)) OFFSET 0) l" },
	/* DB_IDEM_GET: $1 merchant id, $2 key, $3 ttl seconds; enum idem_get_col */
	{ "idem_get",
	  "SELECT encode(request_hash, 'hex'), status_code, body, body_sealed FROM idempotency_keys"
	  " WHERE merchant_id = $1 AND key = $2"
	  " AND created_at > now() - make_interval(secs => $3::int)" },
	/*
	 * DB_IDEM_PUT: $1 merchant, $2 key, $3 hash (bytea hex), $4 status, $5 body, $6 whether
	 * the body is sealed
	 */
	{ "idem_put",
	  "INSERT INTO idempotency_keys (merchant_id, key, request_hash, status_code, body,"
	  " body_sealed) VALUES ($1, $2, $3::bytea, $4, $5, $6::boolean)"
	  " ON CONFLICT (merchant_id, key) DO UPDATE"
	  " SET request_hash = EXCLUDED.request_hash, status_code = EXCLUDED.status_code,"
	  " body = EXCLUDED.body, body_sealed = EXCLUDED.body_sealed, created_at = now()" },
	/*
	 * DB_IDEM_LOCK_KEY: DB_IDEM_LOCK for a request whose API key is looked up in the same
	 * round trip (create-session): $1 key digest, $2 environment, $3 key; the merchant is
	 * the key's as auth_key finds it. A refused key takes no lock.
	 */
	{ "idem_lock_key",
	  "SELECT set_config('lock_timeout', '0', true),"
	  " set_config('marketpay.idempotency_key', $3, true) FROM (SELECT"
	  " pg_advisory_xact_lock(hashtextextended((SELECT k.merchant_id" KEY_LOOKUP ")"
	  " || ':' || $3, 7201)) OFFSET 0) l" },
	/*
	 * DB_IDEM_GET_KEY: auth_key and DB_IDEM_GET in one statement, after DB_IDEM_LOCK_KEY:
	 * $1 key digest, $2 environment, $3 key, $4 ttl seconds; enum idem_get_key_col
	 */
	{ "idem_get_key",
	  KEY_COLUMNS ", encode(i.request_hash, 'hex'), i.status_code, i.body, i.body_sealed"
	  KEY_LOOKUP_FROM
	  " LEFT JOIN idempotency_keys i ON i.merchant_id = k.merchant_id AND i.key = $3"
	  " AND i.created_at > now() - make_interval(secs => $4::int)" KEY_LOOKUP_WHERE },
	/*
	 * DB_CHECKOUT_GET: $1 session id; the page's view of a session, any merchant, and its
	 * items in the same round trip (one row each: bench/README.md, "bench/checkout-page").
	 * OFFSET 0 keeps the session's columns a subquery, computed once, not once per item.
	 * enum checkout_get_col
	 */
	{ "checkout_get",
	  "SELECT x.*, i.name, i.price FROM (SELECT s.id, mp_session_status(s.status,"
	  " s.expires_at), s.amount, s.currency, s.redirect_success_url, s.redirect_failure_url,"
	  " s.user_id, to_char(s.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), m.name,"
	  " s.failure_reason, s.locale FROM payment_sessions s"
	  " JOIN merchants m ON m.id = s.merchant_id WHERE s.id = $1::uuid OFFSET 0) x"
	  " LEFT JOIN session_items i ON i.session_id = x.id ORDER BY i.position" },
	/* DB_PAY_WALLET: $1 session, $2 account number, $3 digest, $4 legacy digest (bytea hex);
	 * enum pay_col */
	{ "pay_wallet",
	  "SELECT outcome, transaction_id," LOCKED_COLUMNS
	  " FROM mp_pay_wallet($1::uuid, $2, $3::bytea, $4::bytea)" },
	/* DB_PAY_TEST_CARD: $1 session, $2 brand, $3 last four digits, $4 decline reason or NULL;
	 * enum pay_col */
	{ "pay_test_card",
	  "SELECT outcome, transaction_id, NULL, NULL FROM mp_pay_test_card($1::uuid, $2, $3, $4)" },
	/* DB_CANCEL: $1 session; enum cancel_col */
	{ "cancel", "SELECT mp_cancel_session($1::uuid)" },
	/* DB_TRANSFER_SEND: $1 merchant, $2 digest, $3 legacy digest, $4 issued at, $5 nonce,
	 * $6 account numbers, $7 amounts, $8 time zone; enum transfer_send_col */
	{ "transfer_send",
	  "SELECT outcome, detail, message," LOCKED_COLUMNS ", transfer_id, amount,"
	  " transaction_date, group_id FROM mp_transfer_send($1::bigint, $2::bytea, $3::bytea,"
	  " $4::bigint, $5, $6::text[], $7::bigint[], $8)" },
	/* DB_REFUND_CREATE: $1 merchant, $2 session, $3 amount or NULL (all left), $4 reason,
	 * $5 transfers to reverse, $6 their amounts (NULL: all left); enum intent_col */
	{ "refund_create",
	  "SELECT mp_refund_session($1::bigint, $2::uuid, $3::bigint, $4, $5::text[],"
	  " $6::bigint[])" },
	/* DB_REFUND_GET: $1 refund id, $2 merchant; enum intent_col */
	{ "refund_get",
	  "SELECT mp_refund_json(r) FROM refunds r WHERE r.id = $1 AND r.merchant_id = $2" },
	/*
	 * DB_REFUND_GET_KEY, DB_TRANSFER_GET_KEY, DB_EVENT_GET_KEY: the same read with the key
	 * looked up as auth_key does: $1 key digest, $2 environment, $3 the object's id; enum
	 * intent_key_col. DB_BALANCE_KEY: $1 and $2 alone.
	 */
	{ "refund_get_key", KEY_COLUMNS ", (SELECT mp_refund_json(r) FROM refunds r"
	  " WHERE r.id = $3 AND r.merchant_id = k.merchant_id)" KEY_LOOKUP },
	{ "transfer_get_key", KEY_COLUMNS ", (SELECT mp_transfer_json(t) FROM transfers t"
	  " WHERE t.id = $3 AND t.merchant_id = k.merchant_id)" KEY_LOOKUP },
	{ "event_get_key", KEY_COLUMNS ", (SELECT object FROM mp_list_events"
	  " WHERE id = $3 AND owner = k.merchant_id)" KEY_LOOKUP },
	{ "balance_key", KEY_COLUMNS ", mp_balance_json(k.merchant_id)" KEY_LOOKUP },
	/* DB_REVERSAL_CREATE: $1 merchant, $2 transfer, $3 amount or NULL (all left), $4 reason;
	 * enum intent_col */
	{ "reversal_create",
	  "SELECT mp_reverse_transfer($1::bigint, $2, $3::bigint, $4)" },
	/* DB_SESSION_EXPIRE: $1 merchant, $2 session; enum intent_col; raises MP030, MP038 */
	{ "session_expire", "SELECT mp_expire_session($1::bigint, $2::uuid)" },
	/* DB_TRANSFER_GET: $1 transfer id, $2 merchant; enum intent_col */
	{ "transfer_get",
	  "SELECT mp_transfer_json(t) FROM transfers t WHERE t.id = $1 AND t.merchant_id = $2" },
	/* DB_LIST: $1 collection, $2 merchant, $3 limit, $4 starting_after, $5 ending_before,
	 * $6 created_gte, $7 created_lt, $8 and $9 the collection's filters, $10 newest of
	 * the range (not the page nearest ending_before); enum list_col */
	{ "list",
	  "SELECT mp_list($1, $2::bigint, $3::int, $4, $5, $6::timestamptz, $7::timestamptz, $8,"
	  " $9, $10::boolean)" },
	/*
	 * DB_LIST_KEY: $1 the API key's digest, $2 environment, then DB_LIST's parameters but
	 * the merchant, whom the key gives; enum list_key_col. OFFSET 0 keeps the key's lookup
	 * (and its note) a subquery, done once, not once per item.
	 */
	{ "list_key",
	  "SELECT a.*, l.j FROM (" KEY_COLUMNS KEY_LOOKUP " OFFSET 0) a LEFT JOIN LATERAL mp_list($3, a.merchant_id, $4::int, $5, $6,"
	  " $7::timestamptz, $8::timestamptz, $9, $10, $11::boolean) l(j) ON true" },
	/* DB_LIST_CSV: as DB_LIST, of balance transactions; enum list_csv_col */
	{ "list_csv",
	  "SELECT x.* FROM mp_list($1, $2::bigint, $3::int, $4, $5, $6::timestamptz,"
	  " $7::timestamptz, $8, $9, $10::boolean) WITH ORDINALITY AS l(j, n),"
	  " json_to_record(l.j) AS x(id text, type text, amount text, balance_after text,"
	  " currency text, source text, transaction_id text, created_at text) ORDER BY l.n" },
	/* DB_BALANCE: $1 merchant; enum intent_col */
	{ "balance", "SELECT mp_balance_json($1::bigint)" },
	/* DB_EVENT_GET: $1 event id, $2 merchant; enum intent_col */
	{ "event_get",
	  "SELECT object FROM mp_list_events WHERE id = $1 AND owner = $2::bigint" },
	/* DB_EVENT_REDELIVER: $1 merchant, $2 event id; raises MP030, MP040, MP041 (DETAIL: the
	 * seconds to wait), MP042; enum intent_col */
	{ "event_redeliver", "SELECT mp_redeliver_event($1::bigint, $2)" },
	/* DB_SECRET_ROTATE: $1 merchant, $2 the new secret sealed (bytea hex); raises MP043;
	 * enum secret_rotate_col */
	{ "secret_rotate", "SELECT mp_iso(mp_rotate_webhook_secret($1::bigint, $2::bytea))" },
	/* DB_WEBHOOK_BACKLOG: enum webhook_backlog_col */
	{ "webhook_backlog", "SELECT pending, oldest_pending_ms, dead FROM mp_webhook_backlog()" },
};
