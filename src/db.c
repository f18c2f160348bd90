#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "log.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000

/*
 * A PIN lock as two columns: until when (ISO 8601; "" for the hard lock the operator lifts,
 * NULL for none) and the seconds left (NULL for none or hard).
 */
#define LOCKED_COLUMNS \
	" CASE WHEN locked_until = 'infinity' THEN '' ELSE mp_iso(locked_until) END," \
	" CASE WHEN isfinite(locked_until) THEN" \
	" greatest(ceil(extract(epoch FROM locked_until - now())), 1)::bigint END"

struct stmt {
	const char *name;
	const char *sql;
};

/* The only SQL the workers send, apart from BEGIN/COMMIT/ROLLBACK. Indexed by enum db_stmt. */
static const struct stmt stmts[DB_STMT__MAX] = {
	/* DB_HEALTH */
	{ "health", "SELECT 1" },
	/* DB_AUTH_KEY: $1 digest (bytea hex), $2 environment */
	{ "auth_key",
	  "SELECT k.merchant_id, m.name, m.currency FROM api_keys k"
	  " JOIN merchants m ON m.id = k.merchant_id"
	  " WHERE k.digest = $1::bytea AND k.environment = $2"
	  " AND k.revoked_at IS NULL AND m.status = 'active'" },
	/* DB_SESSION_CREATE: see mp_create_session in sql/ */
	{ "session_create",
	  "SELECT id, mp_iso(expires_at) FROM mp_create_session($1::bigint, $2::bigint, $3, $4,"
	  " $5, $6, $7, $8::int, $9::jsonb)" },
	/* DB_SESSION_GET: $1 session id, $2 merchant id */
	{ "session_get",
	  "SELECT id, mp_session_status(status, expires_at), amount, currency, user_id, email,"
	  " redirect_success_url, redirect_failure_url, mp_iso(created_at), mp_iso(expires_at)"
	  " FROM payment_sessions WHERE id = $1::uuid AND merchant_id = $2" },
	/* DB_SESSION_ITEMS: $1 session id */
	{ "session_items",
	  "SELECT item_id, name, price FROM session_items WHERE session_id = $1::uuid"
	  " ORDER BY position" },
	/* DB_LOCK_TIMEOUT: $1 milliseconds, for this transaction only */
	{ "lock_timeout", "SELECT set_config('lock_timeout', $1 || 'ms', true)" },
	/* DB_IDEM_LOCK: $1 merchant id, $2 key; held until the transaction ends */
	{ "idem_lock",
	  "SELECT pg_advisory_xact_lock(hashtextextended($1 || ':' || $2, 7201))" },
	/* DB_IDEM_GET: $1 merchant id, $2 key, $3 ttl seconds */
	{ "idem_get",
	  "SELECT encode(request_hash, 'hex'), status_code, body FROM idempotency_keys"
	  " WHERE merchant_id = $1 AND key = $2"
	  " AND created_at > now() - make_interval(secs => $3::int)" },
	/* DB_IDEM_PUT: $1 merchant, $2 key, $3 hash (bytea hex), $4 status, $5 body */
	{ "idem_put",
	  "INSERT INTO idempotency_keys (merchant_id, key, request_hash, status_code, body)"
	  " VALUES ($1, $2, $3::bytea, $4, $5) ON CONFLICT (merchant_id, key) DO UPDATE"
	  " SET request_hash = EXCLUDED.request_hash, status_code = EXCLUDED.status_code,"
	  " body = EXCLUDED.body, created_at = now()" },
	/* DB_CHECKOUT_GET: $1 session id; the page's view of a session, any merchant */
	{ "checkout_get",
	  "SELECT s.id, mp_session_status(s.status, s.expires_at), s.amount, s.currency,"
	  " s.redirect_success_url, s.redirect_failure_url, s.user_id,"
	  " to_char(s.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), m.name,"
	  " s.failure_reason FROM payment_sessions s JOIN merchants m ON m.id = s.merchant_id"
	  " WHERE s.id = $1::uuid" },
	/* DB_PAY_WALLET: $1 session, $2 account number, $3 digest, $4 legacy digest (bytea hex) */
	{ "pay_wallet",
	  "SELECT outcome, transaction_id," LOCKED_COLUMNS
	  " FROM mp_pay_wallet($1::uuid, $2, $3::bytea, $4::bytea)" },
	/* DB_PAY_TEST_CARD: $1 session, $2 brand, $3 last four digits, $4 decline reason or NULL */
	{ "pay_test_card",
	  "SELECT outcome, transaction_id, NULL, NULL FROM mp_pay_test_card($1::uuid, $2, $3, $4)" },
	/* DB_CANCEL: $1 session */
	{ "cancel", "SELECT mp_cancel_session($1::uuid)" },
	/* DB_TRANSFER_SEND: $1 merchant, $2 digest, $3 legacy digest, $4 issued at, $5 nonce,
	 * $6 account numbers, $7 amounts, $8 time zone */
	{ "transfer_send",
	  "SELECT outcome, detail, message," LOCKED_COLUMNS ", transfer_id, amount, transaction_date"
	  " FROM mp_transfer_send($1::bigint, $2::bytea, $3::bytea, $4::bigint, $5, $6::text[],"
	  " $7::bigint[], $8)" },
};

struct db {
	char *conninfo;
	PGconn *conn;
	struct timespec next_try;
	long backoff_ms;
	const char *reqid;
	const char *environment; /* the configured one, checked against the database's */
	char sqlstate[6];   /* of the last ERR_INVALID from db_run */
	char detail[64];    /* its DETAIL */
	char message[128];  /* its primary message */
};

struct db *
db_new(const char *conninfo)
{
	struct db *db = calloc(1, sizeof(*db));

	if (db == NULL)
		return NULL;
	if ((db->conninfo = strdup(conninfo)) == NULL) {
		free(db);
		return NULL;
	}
	db->backoff_ms = BACKOFF_MIN_MS;
	return db;
}

void
db_free(struct db *db)
{
	if (db == NULL)
		return;
	PQfinish(db->conn);
	free(db->conninfo);
	free(db);
}

const char *
db_sqlstate(const struct db *db)
{
	return db->sqlstate;
}

const char *
db_detail(const struct db *db)
{
	return db->detail;
}

const char *
db_message(const struct db *db)
{
	return db->message;
}

void
db_set_reqid(struct db *db, const char *reqid)
{
	db->reqid = reqid;
}

void
db_set_environment(struct db *db, const char *environment)
{
	db->environment = environment;
}

int
db_environment_check(PGconn *conn, const char *want, const char *reqid)
{
	PGresult *r;
	int rc = -1;

	if (want == NULL)
		return 0;
	r = PQexec(conn, "SELECT environment FROM mp_settings");
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		log_msg(LOG_LVL_ERROR, reqid, "the database records no environment (%s): run "
		    "marketpayctl db migrate", PQresultStatus(r) == PGRES_TUPLES_OK ? "no row" :
		    PQresultErrorMessage(r));
	else if (strcmp(PQgetvalue(r, 0, 0), want) != 0)
		log_msg(LOG_LVL_ERROR, reqid, "the database serves %s, this program is configured "
		    "for %s: refusing it", PQgetvalue(r, 0, 0), want);
	else
		rc = 0;
	PQclear(r);
	return rc;
}

static void
drop(struct db *db)
{
	PQfinish(db->conn);
	db->conn = NULL;
}

static void
on_notice(void *arg, const char *message)
{
	struct db *db = arg;

	/* Server notices (such as "terminating connection") go to our log, not raw stderr. */
	log_msg(LOG_LVL_WARN, db->reqid, "database: %s", message);
}

static int
prepare_all(struct db *db)
{
	PGresult *r;
	int i, ok;

	for (i = 0; i < DB_STMT__MAX; i++) {
		r = PQprepare(db->conn, stmts[i].name, stmts[i].sql, 0, NULL);
		ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		if (!ok)
			log_msg(LOG_LVL_ERROR, db->reqid, "prepare %s: %s", stmts[i].name,
			    PQerrorMessage(db->conn));
		PQclear(r);
		if (!ok)
			return -1;
	}
	return 0;
}

static void
schedule_retry(struct db *db)
{
	clock_gettime(CLOCK_MONOTONIC, &db->next_try);
	db->next_try.tv_sec += db->backoff_ms / 1000;
	db->next_try.tv_nsec += (db->backoff_ms % 1000) * 1000000L;
	if (db->next_try.tv_nsec >= 1000000000L) {
		db->next_try.tv_sec++;
		db->next_try.tv_nsec -= 1000000000L;
	}
	db->backoff_ms = db->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : db->backoff_ms * 2;
}

static bool
too_early(const struct db *db)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec < db->next_try.tv_sec ||
	    (now.tv_sec == db->next_try.tv_sec && now.tv_nsec < db->next_try.tv_nsec);
}

bool
db_ready(struct db *db)
{
	/*
	 * Reading pending input notices a server that closed the connection while we idled: the
	 * first read takes its FATAL message, the second the end of the stream. Both return at
	 * once on a healthy idle connection.
	 */
	if (db->conn != NULL && PQstatus(db->conn) == CONNECTION_OK &&
	    PQconsumeInput(db->conn) == 1 && PQconsumeInput(db->conn) == 1 &&
	    PQstatus(db->conn) == CONNECTION_OK)
		return true;
	if (db->conn != NULL) {
		log_msg(LOG_LVL_WARN, db->reqid, "database connection lost; reconnecting");
		drop(db);
	}
	if (too_early(db))
		return false;
	db->conn = PQconnectdb(db->conninfo);
	if (PQstatus(db->conn) != CONNECTION_OK) {
		log_msg(LOG_LVL_ERROR, db->reqid, "database connect failed: %s",
		    PQerrorMessage(db->conn));
		goto fail;
	}
	PQsetNoticeProcessor(db->conn, on_notice, db);
	if (prepare_all(db) != 0 ||
	    db_environment_check(db->conn, db->environment, db->reqid) != 0)
		goto fail;
	db->backoff_ms = BACKOFF_MIN_MS;
	return true;
fail:
	drop(db);
	schedule_retry(db);
	return false;
}

static enum err
classify(struct db *db, PGresult *r, const char *what)
{
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

	/*
	 * An error without a SQLSTATE came from libpq, not the server: the connection broke,
	 * even when libpq has not marked it bad yet (a BEGIN sent into a socket the server has
	 * just closed answers "server closed the connection unexpectedly" with the status still
	 * CONNECTION_OK). Found by tests/faults.sh: it was a 500.
	 */
	if (db->conn == NULL || PQstatus(db->conn) != CONNECTION_OK || state == NULL) {
		log_msg(LOG_LVL_ERROR, db->reqid, "%s: connection lost: %s", what,
		    db->conn ? PQerrorMessage(db->conn) : "");
		/* Reconnect on the next request without waiting out a back-off. */
		drop(db);
		return ERR_UNAVAILABLE;
	}
	if (state != NULL && strcmp(state, "55P03") == 0)
		return ERR_CONFLICT;
	/* The service's own refusals (src/sqlstate.h): the caller says what they mean. */
	if (state != NULL && strncmp(state, "MP0", 3) == 0) {
		const char *detail = PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL);

		const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);

		db->sqlstate[0] = db->detail[0] = db->message[0] = '\0';
		strncat(db->sqlstate, state, sizeof(db->sqlstate) - 1);
		if (msg != NULL)
			strncat(db->message, msg, sizeof(db->message) - 1);
		if (detail != NULL)
			strncat(db->detail, detail, sizeof(db->detail) - 1);
		return ERR_INVALID;
	}
	log_msg(LOG_LVL_ERROR, db->reqid, "%s: %s %s", what, state ? state : "-",
	    PQresultErrorMessage(r));
	return ERR_DB;
}

PGresult *
db_run(struct db *db, enum db_stmt s, int n, const char *const *params, enum err *e)
{
	struct timespec t0, t1;
	int debug = log_enabled(LOG_LVL_DEBUG);
	PGresult *r;
	ExecStatusType st;

	if (db->conn == NULL) {
		*e = ERR_UNAVAILABLE;
		return NULL;
	}
	if (debug)
		clock_gettime(CLOCK_MONOTONIC, &t0);
	r = PQexecPrepared(db->conn, stmts[s].name, n, params, NULL, NULL, 0);
	st = PQresultStatus(r);
	if (debug) {
		/* Names and timings only: parameters can carry what must not be logged. */
		clock_gettime(CLOCK_MONOTONIC, &t1);
		log_msg(LOG_LVL_DEBUG, db->reqid, "sql %s %s rows=%d ms=%.2f", stmts[s].name,
		    PQresStatus(st), PQntuples(r), (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	}
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
		*e = ERR_OK;
		return r;
	}
	*e = classify(db, r, stmts[s].name);
	PQclear(r);
	return NULL;
}

static enum err
simple(struct db *db, const char *sql)
{
	PGresult *r;
	enum err e = ERR_OK;

	if (db->conn == NULL)
		return ERR_UNAVAILABLE;
	r = PQexec(db->conn, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		e = classify(db, r, sql);
	else if (strcmp(sql, "COMMIT") == 0 && strcmp(PQcmdStatus(r), "COMMIT") != 0) {
		/* COMMIT of a transaction that already failed answers ROLLBACK. */
		log_msg(LOG_LVL_ERROR, db->reqid, "COMMIT rolled back");
		e = ERR_DB;
	}
	PQclear(r);
	return e;
}

enum err
db_begin(struct db *db)
{
	return simple(db, "BEGIN");
}

enum err
db_commit(struct db *db)
{
	return simple(db, "COMMIT");
}

enum err
db_rollback(struct db *db)
{
	return simple(db, "ROLLBACK");
}
