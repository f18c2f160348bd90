#ifndef MP_DB_H
#define MP_DB_H

#include <stdbool.h>

#include <libpq-fe.h>

#include "err.h"

/* Every statement the workers run, prepared once per connection (see the table in db.c). */
enum db_stmt {
	DB_HEALTH,
	DB_AUTH_KEY,
	DB_SESSION_CREATE,
	DB_SESSION_GET,
	DB_SESSION_ITEMS,
	DB_LOCK_TIMEOUT,
	DB_IDEM_LOCK,
	DB_IDEM_GET,
	DB_IDEM_PUT,
	DB_CHECKOUT_GET,
	DB_PAY_WALLET,
	DB_PAY_TEST_CARD,
	DB_CANCEL,
	DB_TRANSFER_SEND,
	DB_STMT__MAX
};

struct db;

/* A handle that connects lazily to conninfo. Returns NULL on ENOMEM. Free with db_free. */
struct db *db_new(const char *conninfo);

/* Closes the connection and frees db (NULL is fine). */
void db_free(struct db *db);

/*
 * True when the connection is up and its statements are prepared. A broken connection is
 * dropped and re-opened, at most once per back-off interval (100 ms doubling to 5 s), so
 * requests meanwhile fail fast with 503 instead of piling up.
 */
bool db_ready(struct db *db);

/*
 * Runs a prepared statement with n text parameters (NULL = SQL NULL). Returns the result
 * (caller PQclears) with *e = ERR_OK, or NULL with *e = ERR_UNAVAILABLE (connection lost),
 * ERR_CONFLICT (lock timeout), ERR_INVALID (a ledger refusal, see db_sqlstate) or ERR_DB;
 * the database's message goes to the log.
 */
PGresult *db_run(struct db *db, enum db_stmt s, int n, const char *const *params, enum err *e);

/* BEGIN, COMMIT, ROLLBACK: ERR_OK or the error as db_run. ROLLBACK is harmless outside one. */
enum err db_begin(struct db *db);
enum err db_commit(struct db *db);
enum err db_rollback(struct db *db);

/*
 * After db_run failed with ERR_INVALID: the SQLSTATE of the service's refusal (MP0xx, see
 * sql/) and its
 * DETAIL and primary message ("" when none), owned by db.
 */
const char *db_sqlstate(const struct db *db);
const char *db_detail(const struct db *db);
const char *db_message(const struct db *db);

/*
 * The environment ("sandbox" or "production", a static string) the database must record
 * (mp_settings): a database of the other environment is refused at every connect, like one
 * that is down. NULL (the default) checks nothing.
 */
void db_set_environment(struct db *db, const char *environment);

/*
 * 0 when the database on conn records the environment want ("sandbox" or "production"; NULL
 * checks nothing); else -1 after logging why (another environment's, or never migrated).
 */
int db_environment_check(PGconn *conn, const char *want, const char *reqid);

/* The request id that db log lines carry (owned by the caller; NULL = none). */
void db_set_reqid(struct db *db, const char *reqid);

#endif
