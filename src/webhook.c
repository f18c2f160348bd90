/* Webhook delivery: claim due outbox events, sign and POST them, record every attempt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "crypto.h"
#include "db.h"
#include "log.h"
#include "webhook.h"
#include "webhook_post.h"
#include "webhook_schedule.h"
#include "webhook_sign.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define CHANNEL "marketpay_webhooks"
#define MERCHANT_SLOTS 2     /* deliveries of one merchant in flight at once */
#define CLAIM_TRIES 16       /* merchants passed over as busy before a scan gives up */

enum stmt {
	ST_CLAIM,
	ST_SLOT,
	ST_ATTEMPT,
	ST_DELIVERED,
	ST_RETRY,
	ST_DEAD,
	ST_NEXT_DUE,
	ST_DEFER,
	ST__MAX
};

struct stmt_sql {
	const char *name;
	const char *sql;
};

/* The only SQL the daemon sends, apart from BEGIN/COMMIT/ROLLBACK and LISTEN. */
static const struct stmt_sql stmts[ST__MAX] = {
	/*
	 * ST_CLAIM: the oldest due event that no other sender holds, of a merchant not in $1
	 * (those whose delivery slots are all taken). Only the event row is locked (OF e): the
	 * merchant row stays free for marketpayctl.
	 */
	{ "wh_claim",
	  "SELECT e.id, e.merchant_id, e.body, e.attempts, m.webhook_url, m.webhook_secret_sealed"
	  " FROM webhook_events e JOIN merchants m ON m.id = e.merchant_id"
	  " WHERE e.status = 'pending' AND e.next_attempt_at <= now()"
	  " AND NOT e.merchant_id = ANY($1::bigint[])"
	  " ORDER BY e.next_attempt_at LIMIT 1 FOR UPDATE OF e SKIP LOCKED" },
	/*
	 * ST_SLOT: $1 merchant, $2 slot. At most MERCHANT_SLOTS deliveries of one merchant are
	 * in flight across all senders and daemons, so a merchant whose endpoint hangs holds
	 * that many senders, never all of them. The lock ends with the transaction.
	 */
	{ "wh_slot",
	  "SELECT pg_try_advisory_xact_lock(7301 + $2::int, ($1::bigint % 2147483647)::int)" },
	/*
	 * ST_ATTEMPT: $1 event, $2 url, $3 HTTP status, $4 error, $5 duration. Numbers go on
	 * from the event's earlier attempts, also across a redelivery; the row lock we hold
	 * makes max() + 1 safe.
	 */
	{ "wh_attempt",
	  "INSERT INTO webhook_attempts (event_id, attempt, url, http_status, error, duration_ms)"
	  " SELECT $1, coalesce(max(attempt), 0) + 1, $2, $3::int, $4, $5::int"
	  " FROM webhook_attempts WHERE event_id = $1 RETURNING attempt" },
	/* ST_DELIVERED: $1 event */
	{ "wh_delivered",
	  "UPDATE webhook_events SET status = 'delivered', attempts = attempts + 1,"
	  " delivered_at = clock_timestamp(), last_error = NULL WHERE id = $1" },
	/* ST_RETRY: $1 event, $2 error, $3 seconds from the end of this attempt */
	{ "wh_retry",
	  "UPDATE webhook_events SET attempts = attempts + 1, last_error = $2,"
	  " next_attempt_at = clock_timestamp() + make_interval(secs => $3::int) WHERE id = $1" },
	/* ST_DEAD: $1 event, $2 error */
	{ "wh_dead",
	  "UPDATE webhook_events SET status = 'dead', attempts = attempts + 1, last_error = $2"
	  " WHERE id = $1" },
	/*
	 * ST_NEXT_DUE: milliseconds until the next event falls due, after a scan found none.
	 * Events already due then are held by other daemons: theirs to finish.
	 */
	{ "wh_next_due",
	  "SELECT ceil(extract(epoch FROM min(next_attempt_at) - clock_timestamp()) * 1000)::bigint"
	  " FROM webhook_events WHERE status = 'pending' AND next_attempt_at > now()" },
	/*
	 * ST_DEFER: $1 merchant, $2 seconds, $3 the event just tried. When an endpoint does not
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
};

struct webhook {
	const struct config *cfg;
	struct webhook_schedule schedule;
	unsigned char key[CRYPTO_KEY_LEN];  /* opens the merchants' sealed secrets */
	struct webhook_post *post;
	PGconn *conn;
	long long retry_at;   /* monotonic ms: no connection attempt before this */
	long backoff_ms;
	long due_ms;          /* from the last empty scan; -1 = nothing known */
};

/* What one attempt came to, for its log line once it is committed. */
struct outcome {
	const char *id;
	const char *merchant;
	const char *result;   /* delivered, retry, dead */
	int attempt;          /* its number in webhook_attempts */
	long delay;           /* retry: seconds until the next attempt */
	long deferred;        /* the merchant's other events made to wait with it */
	struct webhook_result res;
};

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct webhook *
webhook_new(const struct config *cfg, char *err, size_t errlen)
{
	struct webhook *w;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	w->cfg = cfg;
	w->backoff_ms = BACKOFF_MIN_MS;
	w->due_ms = -1;
	if (webhook_schedule_parse(cfg->webhook_retry_schedule, &w->schedule, err, errlen) != 0)
		goto fail;
	if (crypto_load_key(cfg->secrets_key_file, w->key) != 0) {
		snprintf(err, errlen, "secrets_key_file %s: cannot read exactly %d bytes",
		    cfg->secrets_key_file, CRYPTO_KEY_LEN);
		goto fail;
	}
	if ((w->post = webhook_post_new(cfg->webhook_timeout, cfg->webhook_allow_private)) ==
	    NULL) {
		snprintf(err, errlen, "cannot set up libcurl");
		goto fail;
	}
	return w;
fail:
	webhook_free(w);
	return NULL;
}

void
webhook_free(struct webhook *w)
{
	if (w == NULL)
		return;
	PQfinish(w->conn);
	webhook_post_free(w->post);
	crypto_wipe(w->key, sizeof(w->key));
	free(w);
}

/* Forgets a broken connection; the next webhook_ready re-opens it without waiting. */
static void
drop(struct webhook *w)
{
	if (w->conn == NULL)
		return;
	log_msg(LOG_LVL_WARN, NULL, "database connection lost: %s", PQerrorMessage(w->conn));
	PQfinish(w->conn);
	w->conn = NULL;
	w->retry_at = 0;
}

static void
on_notice(void *arg, const char *message)
{
	(void)arg;
	log_msg(LOG_LVL_WARN, NULL, "database: %s", message);
}

/* Prepares the statements and listens. 0, or -1 after logging why. */
static int
set_up(struct webhook *w)
{
	PGresult *r = NULL;
	int i, rc = -1;

	PQsetNoticeProcessor(w->conn, on_notice, NULL);
	for (i = 0; i < ST__MAX; i++) {
		r = PQprepare(w->conn, stmts[i].name, stmts[i].sql, 0, NULL);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			log_msg(LOG_LVL_ERROR, NULL, "prepare %s: %s", stmts[i].name,
			    PQerrorMessage(w->conn));
			goto out;
		}
		PQclear(r);
		r = NULL;
	}
	if (db_environment_check(w->conn, config_env_name(w->cfg), NULL) != 0)
		goto out;
	r = PQexec(w->conn, "LISTEN " CHANNEL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		log_msg(LOG_LVL_ERROR, NULL, "LISTEN: %s", PQerrorMessage(w->conn));
		goto out;
	}
	rc = 0;
out:
	PQclear(r);
	return rc;
}

bool
webhook_ready(struct webhook *w)
{
	if (w->conn != NULL && PQstatus(w->conn) == CONNECTION_OK)
		return true;
	drop(w);
	if (now_ms() < w->retry_at)
		return false;
	w->conn = PQconnectdb(w->cfg->database);
	if (PQstatus(w->conn) != CONNECTION_OK)
		log_msg(LOG_LVL_ERROR, NULL, "database connect failed: %s",
		    PQerrorMessage(w->conn));
	else if (set_up(w) == 0) {
		w->backoff_ms = BACKOFF_MIN_MS;
		log_msg(LOG_LVL_INFO, NULL, "database connected; listening on " CHANNEL);
		return true;
	}
	PQfinish(w->conn);
	w->conn = NULL;
	w->retry_at = now_ms() + w->backoff_ms;
	w->backoff_ms = w->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : w->backoff_ms * 2;
	return false;
}

/* Runs a prepared statement. Returns the result (caller PQclears), or NULL after logging. */
static PGresult *
run(struct webhook *w, enum stmt s, int n, const char *const *params)
{
	PGresult *r = PQexecPrepared(w->conn, stmts[s].name, n, params, NULL, NULL, 0);

	if (PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK)
		return r;
	log_msg(LOG_LVL_ERROR, NULL, "%s: %s", stmts[s].name, PQerrorMessage(w->conn));
	PQclear(r);
	if (PQstatus(w->conn) != CONNECTION_OK)
		drop(w);
	return NULL;
}

/* BEGIN, COMMIT or ROLLBACK. 0, or -1 after logging (a COMMIT that rolled back is -1). */
static int
tx(struct webhook *w, const char *sql)
{
	PGresult *r;
	int ok;

	if (w->conn == NULL)
		return -1;
	r = PQexec(w->conn, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK && strcmp(PQcmdStatus(r), sql) == 0;
	if (!ok)
		log_msg(LOG_LVL_ERROR, NULL, "%s: %s", sql, PQerrorMessage(w->conn));
	PQclear(r);
	if (PQstatus(w->conn) != CONNECTION_OK)
		drop(w);
	return ok ? 0 : -1;
}

/* The merchant's secret from the claimed row into secret; -1 with the reason in res. */
static int
open_secret(struct webhook *w, const PGresult *claim, char secret[WEBHOOK_SECRET_MAX],
    struct webhook_result *res)
{
	unsigned char *sealed;
	size_t len = 0;
	int rc;

	if (PQgetisnull(claim, 0, 5)) {
		snprintf(res->error, sizeof(res->error), "merchant has no webhook secret "
		    "(marketpayctl merchant webhook sets one)");
		return -1;
	}
	if ((sealed = PQunescapeBytea((const unsigned char *)PQgetvalue(claim, 0, 5), &len)) ==
	    NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		return -1;
	}
	rc = webhook_sign_open(w->key, sealed, len, secret);
	PQfreemem(sealed);
	if (rc != 0)
		snprintf(res->error, sizeof(res->error), "the merchant's webhook secret does not "
		    "open with secrets_key_file");
	return rc;
}

/* No answer, or one that says the endpoint itself is unwell rather than the event. */
static bool
endpoint_down(const struct webhook_result *res)
{
	return res->http_status == 0 || res->http_status == 408 || res->http_status == 429 ||
	    res->http_status >= 500;
}

/*
 * One attempt at the claimed event, recorded and its next step written, inside the
 * caller's transaction. Returns 0 with o filled, or -1 on a database failure.
 */
static int
attempt(struct webhook *w, const PGresult *claim, struct outcome *o)
{
	const char *url = PQgetisnull(claim, 0, 4) ? NULL : PQgetvalue(claim, 0, 4);
	char secret[WEBHOOK_SECRET_MAX], status[16], dur[24], delay[24];
	const char *p[5];
	PGresult *r = NULL;
	int ok = 0, rc = -1;

	memset(o, 0, sizeof(*o));
	o->id = PQgetvalue(claim, 0, 0);
	o->merchant = PQgetvalue(claim, 0, 1);
	if (url == NULL)
		snprintf(o->res.error, sizeof(o->res.error), "merchant has no webhook_url");
	else if (open_secret(w, claim, secret, &o->res) == 0)
		ok = webhook_post_send(w->post, url, secret, o->id, PQgetvalue(claim, 0, 2),
		    (size_t)PQgetlength(claim, 0, 2), &o->res);
	crypto_wipe(secret, sizeof(secret));
	snprintf(status, sizeof(status), "%ld", o->res.http_status);
	snprintf(dur, sizeof(dur), "%ld", o->res.duration_ms);
	p[0] = o->id;
	p[1] = url ? url : "";
	p[2] = o->res.http_status > 0 ? status : NULL;
	p[3] = ok ? NULL : o->res.error;
	p[4] = dur;
	if ((r = run(w, ST_ATTEMPT, 5, p)) == NULL)
		goto out;
	o->attempt = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	p[1] = o->res.error;
	o->delay = webhook_schedule_next(&w->schedule, atoi(PQgetvalue(claim, 0, 3)) + 1);
	snprintf(delay, sizeof(delay), "%ld", o->delay);
	p[2] = delay;
	if (ok) {
		o->result = "delivered";
		r = run(w, ST_DELIVERED, 1, p);
	} else if (o->delay < 0) {
		o->result = "dead";
		r = run(w, ST_DEAD, 2, p);
	} else {
		o->result = "retry";
		r = run(w, ST_RETRY, 3, p);
		if (r != NULL && endpoint_down(&o->res)) {
			PQclear(r);
			p[0] = o->merchant;
			p[1] = delay;
			p[2] = o->id;
			if ((r = run(w, ST_DEFER, 3, p)) != NULL)
				o->deferred = atol(PQcmdTuples(r));
		}
	}
	if (r != NULL)
		rc = 0;
out:
	PQclear(r);
	return rc;
}

/* After an empty scan: when the next event falls due. 0, or -1 on a database failure. */
static int
note_next_due(struct webhook *w)
{
	PGresult *r;

	if ((r = run(w, ST_NEXT_DUE, 0, NULL)) == NULL)
		return -1;
	if (!PQgetisnull(r, 0, 0))
		w->due_ms = atol(PQgetvalue(r, 0, 0)) < 0 ? 0 : atol(PQgetvalue(r, 0, 0));
	PQclear(r);
	return 0;
}

static void
log_outcome(const struct outcome *o)
{
	char err[sizeof(o->res.error) * 4], next[64] = "";

	if (o->delay >= 0 && strcmp(o->result, "retry") == 0)
		snprintf(next, sizeof(next), " retry_in=%lds deferred=%ld", o->delay, o->deferred);
	log_msg(strcmp(o->result, "delivered") == 0 ? LOG_LVL_INFO : LOG_LVL_WARN, NULL,
	    "webhook event=%s merchant=%s attempt=%d http=%ld result=%s dur_ms=%ld%s%s%s",
	    o->id, o->merchant, o->attempt, o->res.http_status, o->result, o->res.duration_ms,
	    next, o->res.error[0] ? " error=" : "", log_escape(o->res.error, err, sizeof(err)));
}

/* Takes a free delivery slot of the merchant; 1 when got, 0 when all are busy, -1. */
static int
take_slot(struct webhook *w, const char *merchant)
{
	char slot[8];
	const char *p[2] = { merchant, slot };
	PGresult *r;
	int i, got = 0;

	for (i = 0; i < MERCHANT_SLOTS && !got; i++) {
		snprintf(slot, sizeof(slot), "%d", i);
		if ((r = run(w, ST_SLOT, 2, p)) == NULL)
			return -1;
		got = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
		PQclear(r);
	}
	return got;
}

/*
 * Claims the oldest due event of a merchant with a free delivery slot into *claim (no
 * rows: nothing to do now). Events of busy merchants it passed over stay locked by this
 * transaction, which only keeps other senders off what they could not send either.
 * 0, or -1 on a database failure.
 */
static int
claim_free_slot(struct webhook *w, PGresult **claim)
{
	char busy[CLAIM_TRIES * 21 + 3] = "{}";
	const char *p[1] = { busy };
	size_t len = 1;
	int tries, got;

	for (tries = 0; tries < CLAIM_TRIES; tries++) {
		if ((*claim = run(w, ST_CLAIM, 1, p)) == NULL)
			return -1;
		if (PQntuples(*claim) == 0)
			return 0;
		if ((got = take_slot(w, PQgetvalue(*claim, 0, 1))) != 0)
			return got < 0 ? -1 : 0;
		len += (size_t)snprintf(busy + len, sizeof(busy) - len, "%s%s}",
		    len > 1 ? "," : "", PQgetvalue(*claim, 0, 1)) - 1;
		PQclear(*claim);
		*claim = NULL;
	}
	/* Every candidate's merchant is busy: nothing this sender can do until one is done. */
	*claim = PQmakeEmptyPGresult(w->conn, PGRES_TUPLES_OK);
	return *claim == NULL ? -1 : 0;
}

/*
 * The row lock is held through the HTTP call, and claim, attempt and outcome commit
 * together. That is what keeps a second daemon from sending the same attempt (SKIP LOCKED
 * passes the row while we hold it), and a daemon that dies mid-call leaves the event due,
 * not lost: it is sent again, with the same webhook-id. The cost is one open transaction
 * per daemon for at most webhook_timeout seconds.
 */
int
webhook_deliver_next(struct webhook *w)
{
	PGresult *claim = NULL;
	struct outcome o;
	int rc = -1;

	w->due_ms = -1;
	if (tx(w, "BEGIN") != 0)
		return -1;
	if (claim_free_slot(w, &claim) != 0)
		goto out;
	if (PQntuples(claim) == 0)
		rc = note_next_due(w);
	else if (attempt(w, claim, &o) == 0)
		rc = 1;
	if (rc >= 0 && tx(w, "COMMIT") != 0) {
		if (rc == 1)
			log_msg(LOG_LVL_ERROR, NULL, "webhook event=%s: attempt not recorded; it "
			    "will be made again", o.id);
		rc = -1;
	} else if (rc == 1)
		log_outcome(&o);
out:
	if (rc < 0)
		tx(w, "ROLLBACK");
	PQclear(claim);
	return rc;
}

int
webhook_check(const struct config *cfg, char *err, size_t errlen)
{
	struct webhook *w = webhook_new(cfg, err, errlen);

	webhook_free(w);
	return w == NULL ? -1 : 0;
}

int
webhook_drain(struct webhook *w)
{
	PGnotify *n;
	int count = 0;

	if (w->conn == NULL)
		return 0;
	if (PQconsumeInput(w->conn) != 1) {
		drop(w);
		return -1;
	}
	while ((n = PQnotifies(w->conn)) != NULL) {
		count++;
		PQfreemem(n);
	}
	return count;
}

int
webhook_socket(const struct webhook *w)
{
	return w->conn != NULL ? PQsocket(w->conn) : -1;
}

long
webhook_wait_ms(const struct webhook *w, long max_ms)
{
	long long left;

	if (w->conn == NULL) {
		left = w->retry_at - now_ms();
		return left < 0 ? 0 : left > max_ms ? max_ms : (long)left;
	}
	return w->due_ms >= 0 && w->due_ms < max_ms ? w->due_ms : max_ms;
}
