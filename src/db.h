#ifndef MP_DB_H
#define MP_DB_H

#include <stdbool.h>

#include <libpq-fe.h>

#include "err.h"

/*
 * The one database module of all three programs: a handle that owns one PostgreSQL
 * connection, the program's table of prepared statements, reconnection with back-off, and
 * the classification of every failure into enum err. It is not thread-safe: one handle per
 * process (webhookd: per sender).
 *
 * How an error travels: a failed call returns NULL or the error, never a half result. The
 * database's own words stay in the handle until the next call (db_error, db_sqlstate,
 * db_detail, db_message); with logging on (the default) the module has already logged them,
 * so a daemon only maps the enum err to its reply. A lost connection is dropped at once and
 * the next db_ready opens a new one.
 */

/* One row of a program's statement table: the name it is prepared under, and its text. */
struct db_sql {
	const char *name;
	const char *sql;
};

/* The first column: all there is of SELECT f(...) or RETURNING id, or all a caller reads. */
enum { DB_FIRST_COLUMN };

struct db;

/*
 * A handle for conninfo that connects later, in db_ready or db_connect. Returns NULL on
 * ENOMEM. Free with db_free. The setters below are for before the first connect.
 */
struct db *db_new(const char *conninfo);

/* Closes the connection and frees db (NULL is fine). */
void db_free(struct db *db);

/*
 * The statements prepared at each connect and run by db_run, indexed by the program's
 * statement enum (n rows). table must outlive db. None by default (marketpayctl).
 */
void db_set_statements(struct db *db, const struct db_sql *table, int n);

/*
 * Called last at each connect, after the statements and the environment check (webhookd
 * sends LISTEN there). Returns 0, or -1 after logging why: the connection is then refused
 * like one that failed.
 */
void db_set_on_connect(struct db *db, int (*hook)(struct db *db, void *arg), void *arg);

/*
 * The environment ("sandbox" or "production", a static string) the database must record
 * (mp_settings): a database of the other environment is refused at every connect, like one
 * that is down. NULL (the default) checks nothing.
 */
void db_set_environment(struct db *db, const char *environment);

/*
 * The application_name each connection reports (pg_stat_activity, the server's log):
 * program/environment (call after db_set_environment), unless the connection string names
 * one itself.
 */
void db_set_application(struct db *db, const char *program);

/* Each connection made after the first adds 1 to this process's counter (metrics.h). */
void db_set_reconnect_metric(struct db *db, size_t counter);

/*
 * On (the default): failures and server notices go to the log. Off: nothing is logged and
 * the caller reports db_error itself (marketpayctl talks to its operator on stderr). The
 * environment check logs either way.
 */
void db_set_logging(struct db *db, bool on);

/* The request id that db log lines carry (owned by the caller; NULL = none). */
void db_set_reqid(struct db *db, const char *reqid);

/*
 * One connection attempt now, without back-off: connect, prepare the table, check the
 * environment, run the hook. ERR_OK, or ERR_UNAVAILABLE with libpq's reason in db_error.
 */
enum err db_connect(struct db *db);

/*
 * True when the connection is up and its statements are prepared. A broken connection is
 * dropped and re-opened, at most once per back-off interval (100 ms doubling to 5 s), so
 * callers meanwhile fail fast (503) instead of piling up.
 */
bool db_ready(struct db *db);

/* Milliseconds until db_ready may try to connect again: 0 when it would now. */
long db_retry_ms(const struct db *db);

/*
 * The open connection (owned by db; NULL when there is none), for what the module does not
 * wrap: the socket to wait on and the notifications of LISTEN.
 */
PGconn *db_conn(const struct db *db);

/*
 * Runs prepared statement stmt of the table with n text parameters (NULL = SQL NULL).
 * Returns the result (caller PQclears) with *e = ERR_OK, or NULL with *e = ERR_UNAVAILABLE
 * (no connection, or it was lost), ERR_CONFLICT (lock timeout), ERR_INVALID (one of the
 * service's refusals, see db_sqlstate) or ERR_DB.
 */
PGresult *db_run(struct db *db, int stmt, int n, const char *const *params, enum err *e);

/* One command of db_pipeline: plain SQL without parameters, or a prepared statement. */
struct db_step {
	const char *sql;		/* BEGIN, COMMIT; NULL: the prepared statement stmt */
	int stmt;
	int n;
	const char *const *params;
};

/*
 * Runs the n steps in order in one round trip (libpq's pipeline mode); a step runs only if
 * every one before it succeeded. Returns the result of step keep (caller PQclears) with
 * *e = ERR_OK, or NULL: with keep -1 and *e = ERR_OK when all succeeded, else with the
 * error of the first step that failed, as db_run says it (a COMMIT that rolled back is
 * ERR_DB). A transaction a failed step leaves open stays open: the caller rolls it back.
 */
PGresult *db_pipeline(struct db *db, const struct db_step *steps, int n, int keep,
    enum err *e);

/*
 * Runs prepared statement stmt as db_run does, but hands its rows to row(arg, r) one at a
 * time as they arrive (libpq's single-row mode: r holds one row, row 0, and is the
 * module's), so that a result of any size never sits in memory. row returns 0 to go on, or
 * -1 to stop taking rows (the rest are read and dropped). Returns ERR_OK when the statement
 * ran to its end, else the error as db_run (rows handed over before a failure stand).
 */
enum err db_each(struct db *db, int stmt, int n, const char *const *params,
    int (*row)(void *arg, const PGresult *r), void *arg);

/*
 * One unprepared statement with n text parameters (DDL, marketpayctl's commands). Returns
 * as db_run. Several statements in one string are refused by the server.
 */
PGresult *db_exec(struct db *db, const char *sql, int n, const char *const *params,
    enum err *e);

/*
 * A script of several statements without parameters (a migration file: our text, never
 * user data). ERR_OK or the error as db_run; the results are thrown away.
 */
enum err db_script(struct db *db, const char *sql);

/*
 * BEGIN, COMMIT, ROLLBACK: ERR_OK or the error as db_run (a COMMIT that rolled back is
 * ERR_DB). ROLLBACK is harmless outside a transaction.
 */
enum err db_begin(struct db *db);
enum err db_commit(struct db *db);
enum err db_rollback(struct db *db);

/*
 * After a failure: libpq's full message (it ends with a newline), the SQLSTATE ("MP0xx" for
 * the service's refusals, see sql/), DETAIL and primary message; "" when there was none
 * (a lost connection has no SQLSTATE). Owned by db, valid until its next call.
 */
const char *db_error(const struct db *db);
const char *db_sqlstate(const struct db *db);
const char *db_detail(const struct db *db);
const char *db_message(const struct db *db);

/*
 * 0 when the database of db's connection records the environment want ("sandbox" or
 * "production"; NULL checks nothing); else -1 after logging why (another environment's, or
 * never migrated, or no connection).
 */
int db_environment_check(struct db *db, const char *want);

#endif
