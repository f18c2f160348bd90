/* Webhook delivery: claim due outbox events, sign and POST them, record every attempt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "crypto.h"
#include "db.h"
#include "log.h"
#include "webhook.h"
#include "webhook_post.h"
#include "webhook_schedule.h"
#include "webhook_sign.h"
#include "webhook_sql.h"

#define CHANNEL "marketpay_webhooks"
#define MERCHANT_SLOTS 2     /* deliveries of one merchant in flight at once */
#define CLAIM_TRIES 16       /* merchants passed over as busy before a scan gives up */

struct webhook {
	const struct config *cfg;
	struct webhook_schedule schedule;
	unsigned char key[CRYPTO_KEY_LEN];  /* opens the merchants' sealed secrets */
	struct webhook_post *post;
	struct db *db;
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

/* Listens for new events at each connect, after the statements are prepared. */
static int
listen_events(struct db *db, void *arg)
{
	PGresult *r;
	enum err e;

	(void)arg;
	if ((r = db_exec(db, "LISTEN " CHANNEL, 0, NULL, &e)) == NULL)
		return -1;
	PQclear(r);
	log_msg(LOG_LVL_INFO, NULL, "database connected; listening on " CHANNEL);
	return 0;
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
	w->due_ms = -1;
	if ((w->db = db_new(cfg->database)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	db_set_statements(w->db, webhook_sql, WH_STMT__MAX);
	db_set_environment(w->db, config_env_name(cfg));
	db_set_on_connect(w->db, listen_events, NULL);
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
	db_free(w->db);
	webhook_post_free(w->post);
	crypto_wipe(w->key, sizeof(w->key));
	free(w);
}

struct db *
webhook_db(struct webhook *w)
{
	return w->db;
}

bool
webhook_ready(struct webhook *w)
{
	return db_ready(w->db);
}

/* The merchant's secret from the claimed row into secret; -1 with the reason in res. */
static int
open_secret(struct webhook *w, const PGresult *claim, char secret[WEBHOOK_SECRET_MAX],
    struct webhook_result *res)
{
	unsigned char *sealed;
	size_t len = 0;
	int rc;

	if (PQgetisnull(claim, 0, WH_CLAIM_SECRET)) {
		snprintf(res->error, sizeof(res->error), "merchant has no webhook secret "
		    "(marketpayctl merchant webhook sets one)");
		return -1;
	}
	sealed = PQunescapeBytea((const unsigned char *)PQgetvalue(claim, 0, WH_CLAIM_SECRET),
	    &len);
	if (sealed == NULL) {
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
	const char *url = PQgetisnull(claim, 0, WH_CLAIM_URL) ? NULL :
	    PQgetvalue(claim, 0, WH_CLAIM_URL);
	char secret[WEBHOOK_SECRET_MAX], status[16], dur[24], delay[24];
	const char *p[5];
	PGresult *r = NULL;
	enum err e;
	int ok = 0, rc = -1;

	memset(o, 0, sizeof(*o));
	o->id = PQgetvalue(claim, 0, WH_CLAIM_ID);
	o->merchant = PQgetvalue(claim, 0, WH_CLAIM_MERCHANT);
	if (url == NULL)
		snprintf(o->res.error, sizeof(o->res.error), "merchant has no webhook_url");
	else if (open_secret(w, claim, secret, &o->res) == 0)
		ok = webhook_post_send(w->post, url, secret, o->id, PQgetvalue(claim, 0,
		    WH_CLAIM_BODY), (size_t)PQgetlength(claim, 0, WH_CLAIM_BODY), &o->res);
	crypto_wipe(secret, sizeof(secret));
	snprintf(status, sizeof(status), "%ld", o->res.http_status);
	snprintf(dur, sizeof(dur), "%ld", o->res.duration_ms);
	p[0] = o->id;
	p[1] = url ? url : "";
	p[2] = o->res.http_status > 0 ? status : NULL;
	p[3] = ok ? NULL : o->res.error;
	p[4] = dur;
	if ((r = db_run(w->db, WH_ATTEMPT, 5, p, &e)) == NULL)
		goto out;
	o->attempt = atoi(PQgetvalue(r, 0, WH_ATTEMPT_NUMBER));
	PQclear(r);
	p[1] = o->res.error;
	o->delay = webhook_schedule_next(&w->schedule,
	    atoi(PQgetvalue(claim, 0, WH_CLAIM_ATTEMPTS)) + 1);
	snprintf(delay, sizeof(delay), "%ld", o->delay);
	p[2] = delay;
	if (ok) {
		o->result = "delivered";
		r = db_run(w->db, WH_DELIVERED, 1, p, &e);
	} else if (o->delay < 0) {
		o->result = "dead";
		r = db_run(w->db, WH_DEAD, 2, p, &e);
	} else {
		o->result = "retry";
		r = db_run(w->db, WH_RETRY, 3, p, &e);
		if (r != NULL && endpoint_down(&o->res)) {
			PQclear(r);
			p[0] = o->merchant;
			p[1] = delay;
			p[2] = o->id;
			if ((r = db_run(w->db, WH_DEFER, 3, p, &e)) != NULL)
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
	enum err e;

	if ((r = db_run(w->db, WH_NEXT_DUE, 0, NULL, &e)) == NULL)
		return -1;
	if (!PQgetisnull(r, 0, WH_NEXT_DUE_MS))
		w->due_ms = atol(PQgetvalue(r, 0, WH_NEXT_DUE_MS)) < 0 ? 0 :
		    atol(PQgetvalue(r, 0, WH_NEXT_DUE_MS));
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
	enum err e;
	int i, got = 0;

	for (i = 0; i < MERCHANT_SLOTS && !got; i++) {
		snprintf(slot, sizeof(slot), "%d", i);
		if ((r = db_run(w->db, WH_SLOT, 2, p, &e)) == NULL)
			return -1;
		got = strcmp(PQgetvalue(r, 0, WH_SLOT_TAKEN), "t") == 0;
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
	enum err e;
	int tries, got;

	for (tries = 0; tries < CLAIM_TRIES; tries++) {
		if ((*claim = db_run(w->db, WH_CLAIM, 1, p, &e)) == NULL)
			return -1;
		if (PQntuples(*claim) == 0)
			return 0;
		if ((got = take_slot(w, PQgetvalue(*claim, 0, WH_CLAIM_MERCHANT))) != 0)
			return got < 0 ? -1 : 0;
		len += (size_t)snprintf(busy + len, sizeof(busy) - len, "%s%s}",
		    len > 1 ? "," : "", PQgetvalue(*claim, 0, WH_CLAIM_MERCHANT)) - 1;
		PQclear(*claim);
		*claim = NULL;
	}
	/* Every candidate's merchant is busy: nothing this sender can do until one is done. */
	*claim = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
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
	if (db_begin(w->db) != ERR_OK)
		return -1;
	if (claim_free_slot(w, &claim) != 0)
		goto out;
	if (PQntuples(claim) == 0)
		rc = note_next_due(w);
	else if (attempt(w, claim, &o) == 0)
		rc = 1;
	if (rc >= 0 && db_commit(w->db) != ERR_OK) {
		if (rc == 1)
			log_msg(LOG_LVL_ERROR, NULL, "webhook event=%s: attempt not recorded; it "
			    "will be made again", o.id);
		rc = -1;
	} else if (rc == 1)
		log_outcome(&o);
out:
	if (rc < 0)
		db_rollback(w->db);
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
	PGconn *conn = db_conn(w->db);
	PGnotify *n;
	int count = 0;

	if (conn == NULL)
		return 0;
	/* A lost connection is left for webhook_ready, which says so and re-opens it at once. */
	if (PQconsumeInput(conn) != 1)
		return -1;
	while ((n = PQnotifies(conn)) != NULL) {
		count++;
		PQfreemem(n);
	}
	return count;
}

/* The connection when it is open and sound, else NULL. */
static PGconn *
sound(const struct webhook *w)
{
	PGconn *conn = db_conn(w->db);

	return conn != NULL && PQstatus(conn) == CONNECTION_OK ? conn : NULL;
}

int
webhook_socket(const struct webhook *w)
{
	return sound(w) != NULL ? PQsocket(sound(w)) : -1;
}

long
webhook_wait_ms(const struct webhook *w, long max_ms)
{
	long left;

	if (sound(w) == NULL) {
		left = db_retry_ms(w->db);
		return left > max_ms ? max_ms : left;
	}
	return w->due_ms >= 0 && w->due_ms < max_ms ? w->due_ms : max_ms;
}
