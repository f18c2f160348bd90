/* The database module: one connection, a statement table, back-off, errors as enum err. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "log.h"
#include "metrics.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000

/* A log line when logging is on (see db_set_logging). */
#define NOTE(db, level, ...) \
	do { \
		if ((db)->logging) \
			log_msg((level), (db)->reqid, __VA_ARGS__); \
	} while (0)

/* Columns of the environment check's query. */
enum { SETTINGS_ENVIRONMENT };

struct db {
	char *conninfo;
	PGconn *conn;
	const struct db_sql *sql;  /* the program's statements, nsql of them */
	int nsql;
	int (*on_connect)(struct db *, void *);
	void *arg;
	struct timespec next_try;
	long backoff_ms;
	bool logging;
	const char *reqid;
	const char *environment; /* the configured one, checked against the database's */
	char application[64];    /* application_name unless conninfo sets one; "" = none */
	bool connected;          /* a connection was made before: the next one is a reconnect */
	size_t reconnect_metric; /* the counter of reconnects (metrics.h); SIZE_MAX = none */
	char *error;        /* libpq's message of the last failure; NULL: none */
	char sqlstate[6];   /* its SQLSTATE */
	char detail[64];    /* its DETAIL */
	char message[128];  /* its primary message */
};

struct db *
db_new(const char *conninfo)
{
	struct db *db = calloc(1, sizeof(*db));

	if (db == NULL)
		return NULL;
	db->reconnect_metric = SIZE_MAX;
	if ((db->conninfo = strdup(conninfo)) == NULL) {
		free(db);
		return NULL;
	}
	db->backoff_ms = BACKOFF_MIN_MS;
	db->logging = true;
	return db;
}

void
db_free(struct db *db)
{
	if (db == NULL)
		return;
	PQfinish(db->conn);
	free(db->error);
	free(db->conninfo);
	free(db);
}

void
db_set_statements(struct db *db, const struct db_sql *table, int n)
{
	db->sql = table;
	db->nsql = n;
}

void
db_set_on_connect(struct db *db, int (*hook)(struct db *, void *), void *arg)
{
	db->on_connect = hook;
	db->arg = arg;
}

void
db_set_environment(struct db *db, const char *environment)
{
	db->environment = environment;
}

void
db_set_application(struct db *db, const char *program)
{
	if (db->environment != NULL)
		snprintf(db->application, sizeof(db->application), "%s/%s", program,
		    db->environment);
	else
		snprintf(db->application, sizeof(db->application), "%s", program);
}

void
db_set_reconnect_metric(struct db *db, size_t counter)
{
	db->reconnect_metric = counter;
}

void
db_set_logging(struct db *db, bool on)
{
	db->logging = on;
}

void
db_set_reqid(struct db *db, const char *reqid)
{
	db->reqid = reqid;
}

PGconn *
db_conn(const struct db *db)
{
	return db->conn;
}

const char *
db_error(const struct db *db)
{
	return db->error != NULL ? db->error : "";
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

/* Forgets the last failure and, with msg, records a new one (without its fields). */
static void
set_error(struct db *db, const char *msg)
{
	free(db->error);
	db->error = msg != NULL ? strdup(msg) : NULL;
	db->sqlstate[0] = db->detail[0] = db->message[0] = '\0';
}

int
db_environment_check(struct db *db, const char *want)
{
	char why[512];
	PGresult *r;
	int rc = -1;

	if (want == NULL)
		return 0;
	r = PQexec(db->conn, "SELECT environment FROM mp_settings");
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		snprintf(why, sizeof(why), "the database records no environment (%s): run "
		    "marketpayctl db migrate", PQresultStatus(r) == PGRES_TUPLES_OK ? "no row" :
		    PQresultErrorMessage(r));
	else if (strcmp(PQgetvalue(r, 0, SETTINGS_ENVIRONMENT), want) != 0)
		snprintf(why, sizeof(why), "the database serves %s, this program is configured "
		    "for %s: refusing it", PQgetvalue(r, 0, SETTINGS_ENVIRONMENT), want);
	else
		rc = 0;
	PQclear(r);
	if (rc != 0) {
		log_msg(LOG_LVL_ERROR, db->reqid, "%s", why);
		set_error(db, why);
	}
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
	NOTE(db, LOG_LVL_WARN, "database: %s", message);
}

static int
prepare_all(struct db *db)
{
	PGresult *r;
	int i, ok;

	for (i = 0; i < db->nsql; i++) {
		r = PQprepare(db->conn, db->sql[i].name, db->sql[i].sql, 0, NULL);
		ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		if (!ok) {
			set_error(db, PQerrorMessage(db->conn));
			NOTE(db, LOG_LVL_ERROR, "prepare %s: %s", db->sql[i].name, db_error(db));
		}
		PQclear(r);
		if (!ok)
			return -1;
	}
	return 0;
}

enum err
db_connect(struct db *db)
{
	drop(db);
	set_error(db, NULL);
	{
		/* The connection string first; its own application_name, if any, wins. */
		const char *const keys[] = { "dbname", "fallback_application_name", NULL };
		const char *const values[] = { db->conninfo, db->application[0] != '\0' ?
		    db->application : NULL, NULL };

		db->conn = PQconnectdbParams(keys, values, 1);
	}
	if (PQstatus(db->conn) != CONNECTION_OK) {
		set_error(db, PQerrorMessage(db->conn));
		NOTE(db, LOG_LVL_ERROR, "database connect failed: %s", db_error(db));
		goto fail;
	}
	PQsetNoticeProcessor(db->conn, on_notice, db);
	if (prepare_all(db) != 0 || db_environment_check(db, db->environment) != 0 ||
	    (db->on_connect != NULL && db->on_connect(db, db->arg) != 0))
		goto fail;
	if (db->connected && db->reconnect_metric != SIZE_MAX)
		metrics_add(db->reconnect_metric, 1);
	db->connected = true;
	return ERR_OK;
fail:
	drop(db);
	return ERR_UNAVAILABLE;
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

long
db_retry_ms(const struct db *db)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(db->next_try.tv_sec - now.tv_sec) * 1000 +
	    (db->next_try.tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (long)ms : 0;
}

/* Whether socket fd has input, or its end, to read now; an error counts as input. */
static bool
input_pending(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd < 0 || poll(&p, 1, 0) != 0;
}

bool
db_ready(struct db *db)
{
	/*
	 * Reading pending input notices a server that closed the connection while we idled: the
	 * first read takes its FATAL message, the second the end of the stream. A healthy idle
	 * connection has nothing to read, which one poll that does not wait tells: the reads
	 * are only made when there is something.
	 */
	if (db->conn != NULL && PQstatus(db->conn) == CONNECTION_OK &&
	    (!input_pending(PQsocket(db->conn)) ||
	     (PQconsumeInput(db->conn) == 1 && PQconsumeInput(db->conn) == 1)) &&
	    PQstatus(db->conn) == CONNECTION_OK)
		return true;
	if (db->conn != NULL) {
		NOTE(db, LOG_LVL_WARN, "database connection lost; reconnecting");
		drop(db);
	}
	if (db_retry_ms(db) > 0)
		return false;
	if (db_connect(db) != ERR_OK) {
		schedule_retry(db);
		return false;
	}
	db->backoff_ms = BACKOFF_MIN_MS;
	return true;
}

/* Keeps the failure's words for db_error and the rest, then says what it means. */
static enum err
classify(struct db *db, PGresult *r, const char *what)
{
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	const char *detail = PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL);
	const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);

	set_error(db, PQresultErrorMessage(r)[0] != '\0' ? PQresultErrorMessage(r) :
	    db->conn != NULL ? PQerrorMessage(db->conn) : "no database connection\n");
	strncat(db->sqlstate, state != NULL ? state : "", sizeof(db->sqlstate) - 1);
	strncat(db->message, msg != NULL ? msg : "", sizeof(db->message) - 1);
	strncat(db->detail, detail != NULL ? detail : "", sizeof(db->detail) - 1);
	/*
	 * An error without a SQLSTATE came from libpq, not the server: the connection broke,
	 * even when libpq has not marked it bad yet (a BEGIN sent into a socket the server has
	 * just closed answers "server closed the connection unexpectedly" with the status still
	 * CONNECTION_OK). Found by tests/faults.sh: it was a 500.
	 */
	if (db->conn == NULL || PQstatus(db->conn) != CONNECTION_OK || state == NULL) {
		NOTE(db, LOG_LVL_ERROR, "%.80s: database connection lost: %s", what, db_error(db));
		/* Reconnect on the next db_ready without waiting out a back-off. */
		drop(db);
		return ERR_UNAVAILABLE;
	}
	/*
	 * A node that is not, or no longer, the primary refuses writes (25006: after a failover
	 * the old primary until it is demoted, marketpay-ha(7)), and one shutting down says so
	 * (57P01-57P03). Nothing was done: a 503, and the next request connects afresh, to
	 * whichever node target_session_attrs=read-write finds the primary then.
	 */
	if (strcmp(state, "25006") == 0 || strncmp(state, "57P", 3) == 0) {
		NOTE(db, LOG_LVL_ERROR, "%.80s: the database refused (%s); reconnecting: %s", what,
		    state, db_error(db));
		drop(db);
		return ERR_UNAVAILABLE;
	}
	/*
	 * The server rolled the transaction back for a reason of the moment: it broke a deadlock
	 * by cancelling this side (40P01; the service's own transactions lock in one order,
	 * marketpay-ledger(7), so the other side is someone else's, a DBA's session say), a
	 * serialization failure (40001), or a statement cancelled (57014: statement_timeout,
	 * pg_cancel_backend). Nothing was done: a 503 to retry, on the same connection.
	 */
	if (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0 ||
	    strcmp(state, "57014") == 0) {
		NOTE(db, LOG_LVL_WARN, "%.80s: the database gave up on it (%s), nothing done: %s",
		    what, state, db_error(db));
		return ERR_UNAVAILABLE;
	}
	if (strcmp(state, "55P03") == 0)
		return ERR_CONFLICT;
	/* The service's own refusals (src/sqlstate.h): the caller says what they mean. */
	if (strncmp(state, "MP0", 3) == 0)
		return ERR_INVALID;
	NOTE(db, LOG_LVL_ERROR, "%.80s: %s %s", what, state, db_error(db));
	return ERR_DB;
}

/* The result of a statement with *e = ERR_OK, or NULL with the failure classified. */
static PGresult *
finish(struct db *db, PGresult *r, const char *what, enum err *e)
{
	ExecStatusType st = PQresultStatus(r);

	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
		*e = ERR_OK;
		return r;
	}
	*e = classify(db, r, what);
	PQclear(r);
	return NULL;
}

/* No connection to send on: the caller gets ERR_UNAVAILABLE and db_error says so. */
static bool
unconnected(struct db *db, enum err *e)
{
	if (db->conn != NULL)
		return false;
	set_error(db, "no database connection\n");
	*e = ERR_UNAVAILABLE;
	return true;
}

static double
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

PGresult *
db_run(struct db *db, int stmt, int n, const char *const *params, enum err *e)
{
	struct timespec t0;
	int debug = log_enabled(LOG_LVL_DEBUG);
	PGresult *r;

	if (unconnected(db, e))
		return NULL;
	if (stmt < 0 || stmt >= db->nsql) {
		set_error(db, "no such prepared statement\n");
		*e = ERR_INTERNAL;
		return NULL;
	}
	if (debug)
		clock_gettime(CLOCK_MONOTONIC, &t0);
	r = PQexecPrepared(db->conn, db->sql[stmt].name, n, params, NULL, NULL, 0);
	if (debug) {
		/* Names and timings only: parameters can carry what must not be logged. */
		NOTE(db, LOG_LVL_DEBUG, "sql %s %s rows=%d ms=%.2f", db->sql[stmt].name,
		    PQresStatus(PQresultStatus(r)), PQntuples(r), ms_since(&t0));
	}
	return finish(db, r, db->sql[stmt].name, e);
}

enum err
db_each(struct db *db, int stmt, int n, const char *const *params,
    int (*row)(void *arg, const PGresult *r), void *arg)
{
	enum err e = ERR_OK;
	bool taking = true;
	PGresult *r;

	if (unconnected(db, &e))
		return e;
	if (stmt < 0 || stmt >= db->nsql) {
		set_error(db, "no such prepared statement\n");
		return ERR_INTERNAL;
	}
	if (!PQsendQueryPrepared(db->conn, db->sql[stmt].name, n, params, NULL, NULL, 0) ||
	    !PQsetSingleRowMode(db->conn))
		/* Nothing was sent, or it cannot be read row by row: the connection is broken. */
		return classify(db, NULL, db->sql[stmt].name);
	/* Every result up to the end, also after a failure, so the connection is ready again. */
	while (db->conn != NULL && (r = PQgetResult(db->conn)) != NULL) {
		ExecStatusType st = PQresultStatus(r);

		if (st == PGRES_SINGLE_TUPLE) {
			if (e == ERR_OK && taking && row(arg, r) != 0)
				taking = false;
		} else if (st != PGRES_TUPLES_OK && e == ERR_OK)
			e = classify(db, r, db->sql[stmt].name);
		PQclear(r);
	}
	return e;
}

static const char *
step_name(const struct db *db, const struct db_step *step)
{
	return step->sql != NULL ? step->sql : db->sql[step->stmt].name;
}

/* A COMMIT of a transaction that had already failed answers ROLLBACK: an error. */
static bool
rolled_back(struct db *db, const char *sql, const PGresult *r)
{
	if (strcmp(sql, "COMMIT") != 0 || strcmp(PQcmdStatus((PGresult *)r), "COMMIT") == 0)
		return false;
	set_error(db, "COMMIT rolled back\n");
	NOTE(db, LOG_LVL_ERROR, "COMMIT rolled back");
	return true;
}

/* Sends the steps and the sync that ends them: 0, or -1 when the connection failed. */
static int
pipeline_send(struct db *db, const struct db_step *steps, int n)
{
	int i, ok;

	if (!PQenterPipelineMode(db->conn))
		return -1;
	for (i = 0; i < n; i++) {
		ok = steps[i].sql != NULL ?
		    PQsendQueryParams(db->conn, steps[i].sql, 0, NULL, NULL, NULL, NULL, 0) :
		    PQsendQueryPrepared(db->conn, db->sql[steps[i].stmt].name, steps[i].n,
		    steps[i].params, NULL, NULL, 0);
		if (!ok)
			return -1;
	}
	return PQpipelineSync(db->conn) ? 0 : -1;
}

PGresult *
db_pipeline(struct db *db, const struct db_step *steps, int n, int keep, enum err *e)
{
	PGresult *r, *kept = NULL;
	ExecStatusType st;
	struct timespec t0;
	int i;

	if (unconnected(db, e))
		return NULL;
	for (i = 0; i < n; i++)
		if (steps[i].sql == NULL && (steps[i].stmt < 0 || steps[i].stmt >= db->nsql))
			break;
	if (n < 1 || i < n) {
		set_error(db, n < 1 ? "empty pipeline\n" : "no such prepared statement\n");
		*e = ERR_INTERNAL;
		return NULL;
	}
	*e = ERR_OK;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pipeline_send(db, steps, n) != 0)
		goto broken;
	/*
	 * Step i's result, then a NULL that ends it; after a failure each later step's result
	 * is PGRES_PIPELINE_ABORTED; the sync's result ends the pipeline.
	 */
	for (i = 0;;) {
		if ((r = PQgetResult(db->conn)) == NULL) {
			if (PQstatus(db->conn) != CONNECTION_OK || ++i > n)
				goto broken;
			continue;
		}
		if ((st = PQresultStatus(r)) == PGRES_PIPELINE_SYNC) {
			PQclear(r);
			break;
		}
		if (st == PGRES_PIPELINE_ABORTED || i >= n || *e != ERR_OK)
			PQclear(r);
		else if ((r = finish(db, r, step_name(db, &steps[i]), e)) == NULL) {
			if (db->conn == NULL)
				goto lost;	/* classified: the connection is gone */
		} else if (rolled_back(db, step_name(db, &steps[i]), r)) {
			*e = ERR_DB;
			PQclear(r);
		} else if (i == keep)
			kept = r;
		else
			PQclear(r);
	}
	if (!PQexitPipelineMode(db->conn))
		goto broken;
	/* As db_run's line: names and timing only. */
	NOTE(db, LOG_LVL_DEBUG, "sql pipeline of %d, %s to %s: %s ms=%.2f", n,
	    step_name(db, &steps[0]), step_name(db, &steps[n - 1]), *e == ERR_OK ? "ok" : "failed", ms_since(&t0));
	if (*e == ERR_OK)
		return kept;
	PQclear(kept);
	return NULL;
broken:
	*e = classify(db, NULL, step_name(db, &steps[0]));
lost:
	PQclear(kept);
	return NULL;
}

PGresult *
db_exec(struct db *db, const char *sql, int n, const char *const *params, enum err *e)
{
	if (unconnected(db, e))
		return NULL;
	return finish(db, PQexecParams(db->conn, sql, n, NULL, params, NULL, NULL, 0), sql, e);
}

enum err
db_script(struct db *db, const char *sql)
{
	enum err e;

	if (unconnected(db, &e))
		return e;
	PQclear(finish(db, PQexec(db->conn, sql), "script", &e));
	return e;
}

static enum err
simple(struct db *db, const char *sql)
{
	PGresult *r;
	enum err e;

	if (unconnected(db, &e))
		return e;
	if ((r = finish(db, PQexec(db->conn, sql), sql, &e)) != NULL && rolled_back(db, sql, r))
		e = ERR_DB;
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
