/*
 * Webhook delivery: lease due outbox events, sign and POST them, many at once, and record
 * every attempt in batches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "crypto.h"
#include "db.h"
#include "log.h"
#include "metrics_delivery.h"
#include "pgarray.h"
#include "webhook.h"
#include "webhook_backlog.h"
#include "webhook_post.h"
#include "webhook_schedule.h"
#include "webhook_sign.h"
#include "webhook_sql.h"

#define CHANNEL "marketpay_webhooks"
#define CLAIM_BATCH 200     /* the most events one claim leases */
#define LEASE_MARGIN 10     /* seconds a lease outlasts webhook_timeout */
#define CLAIM_BACKOFF_MS 1000 /* after a failed claim */
#define CLAIM_GAP_MS 5      /* between two claims: events arriving together leave together */

/* One delivery: in flight (the tag of its request), then an outcome waiting to be recorded. */
struct flight {
	char id[48];
	char merchant[24];
	long long merchant_id; /* the same, parsed once at the claim */
	char *url;            /* NULL: the merchant has none */
	int attempts;         /* made before this one, since queued or redelivered */
	long long age_ms;     /* the event's age when claimed (database clock); -1: unknown */
	long long claimed;    /* monotonic ms when it was claimed */
	long long ended;      /* monotonic ms when the attempt ended */
	bool ok;
	bool from_backlog;    /* its merchant had more due: claim again once it is recorded */
	const char *result;   /* delivered, retry, dead */
	long delay;           /* retry: seconds until the next attempt */
	struct webhook_result res;
};

struct webhook {
	const struct config *cfg;
	struct webhook_schedule schedule;
	unsigned char key[CRYPTO_KEY_LEN];  /* opens the merchants' sealed secrets */
	struct webhook_post *post;
	struct db *db;
	char owner[96];       /* host:pid, written into the leases it takes */
	long long claim_at;   /* monotonic ms of the next claim; 0 = at once */
	long long last_claim; /* monotonic ms of the last one */
	long due_ms;          /* from the last empty claim; -1 = nothing known */
	struct webhook_backlog backlog;
	struct flight **done; /* finished, not yet recorded */
	size_t ndone, capdone;
};

static long long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Listens for new events at each connect, after the statements are prepared. */
static int
listen_events(struct db *db, void *arg)
{
	struct webhook *w = arg;
	PGresult *r;
	enum err e;

	if ((r = db_exec(db, "LISTEN " CHANNEL, 0, NULL, &e)) == NULL)
		return -1;
	PQclear(r);
	w->claim_at = 0;
	log_msg(LOG_LVL_INFO, NULL, "database connected; listening on " CHANNEL);
	return 0;
}

struct webhook *
webhook_new(const struct config *cfg, char *err, size_t errlen)
{
	struct webhook *w;
	char host[64] = "localhost";

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	w->cfg = cfg;
	w->due_ms = -1;
	gethostname(host, sizeof(host) - 1);
	snprintf(w->owner, sizeof(w->owner), "%s:%ld", host, (long)getpid());
	if ((w->db = db_new(cfg->database)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	db_set_statements(w->db, webhook_sql, WH_STMT__MAX);
	db_set_environment(w->db, config_env_name(cfg));
	db_set_application(w->db, "marketpay-webhookd");
	db_set_on_connect(w->db, listen_events, w);
	db_set_reconnect_metric(w->db, MD_DB_RECONNECTS);
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

static void
flight_free(struct flight *f)
{
	if (f == NULL)
		return;
	free(f->url);
	free(f);
}

static void
drop_flight(void *tag)
{
	flight_free(tag);
}

void
webhook_free(struct webhook *w)
{
	size_t i;

	if (w == NULL)
		return;
	db_free(w->db);
	webhook_post_free(w->post, drop_flight);
	for (i = 0; i < w->ndone; i++)
		flight_free(w->done[i]);
	free(w->done);
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

size_t
webhook_in_flight(const struct webhook *w)
{
	return webhook_post_running(w->post);
}

size_t
webhook_unrecorded(const struct webhook *w)
{
	return w->ndone;
}

/* f is over: what comes next for its event, and into the list to record. */
static void
finish(struct webhook *w, struct flight *f, bool ok, const struct webhook_result *res)
{
	struct flight **grown;
	size_t cap;

	f->ok = ok;
	f->res = *res;
	f->ended = mono_ms();
	f->delay = webhook_schedule_next(&w->schedule, f->attempts + 1);
	f->result = ok ? "delivered" : f->delay < 0 ? "dead" : "retry";
	if (w->ndone == w->capdone) {
		cap = w->capdone ? w->capdone * 2 : 64;
		if ((grown = realloc(w->done, cap * sizeof(*grown))) == NULL) {
			/* Unrecorded, its lease brings the event back: sent again, same id. */
			log_msg(LOG_LVL_ERROR, NULL, "webhook event=%s: out of memory; its attempt "
			    "is not recorded and it will be made again", f->id);
			flight_free(f);
			return;
		}
		w->done = grown;
		w->capdone = cap;
	}
	w->done[w->ndone++] = f;
}

static void
on_done(void *arg, void *tag, bool ok, const struct webhook_result *res)
{
	finish(arg, tag, ok, res);
}

/*
 * The merchant's secrets from claim row i, each opened into secrets[n] (the current first,
 * then the previous within its rotation window). Returns how many, 0 with the reason in
 * res when the current one is missing or does not open.
 */
static size_t
open_secrets(struct webhook *w, const PGresult *claim, int i,
    char secrets[2][WEBHOOK_SECRET_MAX], struct webhook_result *res)
{
	const int cols[2] = { WH_CLAIM_SECRET, WH_CLAIM_PREVIOUS };
	unsigned char *sealed;
	size_t len = 0, n;
	int rc;

	for (n = 0; n < 2; n++) {
		if (PQgetisnull(claim, i, cols[n]))
			break;
		sealed = PQunescapeBytea((const unsigned char *)PQgetvalue(claim, i, cols[n]),
		    &len);
		rc = sealed == NULL ? -1 : webhook_sign_open(w->key, sealed, len, secrets[n]);
		PQfreemem(sealed);
		if (rc != 0)
			break;
	}
	if (n == 0 && PQgetisnull(claim, i, WH_CLAIM_SECRET))
		snprintf(res->error, sizeof(res->error), "merchant has no webhook secret "
		    "(marketpayctl merchant webhook sets one)");
	else if (n == 0)
		snprintf(res->error, sizeof(res->error), "the merchant's webhook secret does not "
		    "open with secrets_key_file");
	return n;
}

/*
 * The webhook-signature value for the body of claim row i, signed now with each of the
 * merchant's secrets ("v1,<new> v1,<old>" during a rotation). 0, or -1 with res filled.
 */
static int
signature(struct webhook *w, const PGresult *claim, int i, const char *id, long long stamp,
    char out[WEBHOOK_SIGNATURES_MAX], struct webhook_result *res)
{
	char secrets[2][WEBHOOK_SECRET_MAX];
	const char *list[2] = { secrets[0], secrets[1] };
	size_t n = open_secrets(w, claim, i, secrets, res);
	int rc = -1;

	if (n > 0 && (rc = webhook_sign_all(list, n, id, stamp, PQgetvalue(claim, i,
	    WH_CLAIM_BODY), (size_t)PQgetlength(claim, i, WH_CLAIM_BODY), out,
	    WEBHOOK_SIGNATURES_MAX)) != 0)
		snprintf(res->error, sizeof(res->error), "cannot sign the event");
	crypto_wipe(secrets, sizeof(secrets));
	return rc;
}

/* Starts the delivery of claim row i; one that cannot start is over at once. */
static void
start(struct webhook *w, const PGresult *claim, int i, long long merchant, bool from_backlog)
{
	char sig[WEBHOOK_SIGNATURES_MAX];
	struct webhook_result res;
	struct flight *f;
	long long stamp = (long long)time(NULL);

	memset(&res, 0, sizeof(res));
	if ((f = calloc(1, sizeof(*f))) == NULL) {
		log_msg(LOG_LVL_ERROR, NULL, "out of memory; the claimed events come back when "
		    "their leases end");
		return;
	}
	snprintf(f->id, sizeof(f->id), "%s", PQgetvalue(claim, i, WH_CLAIM_ID));
	snprintf(f->merchant, sizeof(f->merchant), "%s", PQgetvalue(claim, i, WH_CLAIM_MERCHANT));
	f->attempts = atoi(PQgetvalue(claim, i, WH_CLAIM_ATTEMPTS));
	f->age_ms = PQgetisnull(claim, i, WH_CLAIM_AGE_MS) ? -1 :
	    strtoll(PQgetvalue(claim, i, WH_CLAIM_AGE_MS), NULL, 10);
	f->claimed = w->last_claim;
	f->merchant_id = merchant;
	f->from_backlog = from_backlog;
	if (!PQgetisnull(claim, i, WH_CLAIM_URL))
		f->url = strdup(PQgetvalue(claim, i, WH_CLAIM_URL));
	if (f->url == NULL)
		snprintf(res.error, sizeof(res.error), PQgetisnull(claim, i, WH_CLAIM_URL) ?
		    "merchant has no webhook_url" : "out of memory");
	else if (signature(w, claim, i, f->id, stamp, sig, &res) == 0 &&
	    webhook_post_start(w->post, f->url, f->id, stamp, sig, PQgetvalue(claim, i,
	    WH_CLAIM_BODY), (size_t)PQgetlength(claim, i, WH_CLAIM_BODY), f, &res) == 0)
		return;
	finish(w, f, false, &res);
}

/* After a claim that found nothing: when to look again. 0, or -1 on a database failure. */
static int
note_next_due(struct webhook *w)
{
	PGresult *r;
	enum err e;

	if ((r = db_run(w->db, WH_NEXT_DUE, 0, NULL, &e)) == NULL) {
		w->claim_at = mono_ms() + CLAIM_BACKOFF_MS;
		return -1;
	}
	w->due_ms = -1;
	if (!PQgetisnull(r, 0, WH_NEXT_DUE_MS))
		w->due_ms = atol(PQgetvalue(r, 0, WH_NEXT_DUE_MS)) < 0 ? 0 :
		    atol(PQgetvalue(r, 0, WH_NEXT_DUE_MS));
	PQclear(r);
	w->claim_at = mono_ms() + (w->due_ms >= 0 && w->due_ms < w->cfg->webhook_poll_interval *
	    1000 ? w->due_ms : w->cfg->webhook_poll_interval * 1000);
	return 0;
}

/*
 * When the next claim may go: at claim_at, but not sooner than CLAIM_GAP_MS after the last,
 * so that a notification or a finished delivery per event does not cost a claim per event
 * (a claim costs the database about the same for one event as for a hundred). Once a
 * delivery from a merchant's backlog is recorded, its endpoint has room and more is due:
 * no gap then, or an endpoint that answers at once would get only its in-flight limit
 * every CLAIM_GAP_MS.
 */
static long long
claim_time(const struct webhook *w)
{
	long long gap = w->last_claim + CLAIM_GAP_MS;

	if (webhook_backlog_pending(&w->backlog))
		return w->claim_at;
	return w->claim_at > gap ? w->claim_at : gap;
}

int
webhook_claim(struct webhook *w)
{
	char max[24], per[24], lease[24];
	const char *p[4] = { w->owner, max, per, lease };
	long long merchant[CLAIM_BATCH];
	bool from_backlog[CLAIM_BATCH];
	long room = w->cfg->webhook_max_in_flight - (long)webhook_in_flight(w), want;
	PGresult *r;
	enum err e;
	int i, n;

	if (room <= 0 || mono_ms() < claim_time(w))
		return 0;
	w->last_claim = mono_ms();
	want = room < CLAIM_BATCH ? room : CLAIM_BATCH;
	snprintf(max, sizeof(max), "%ld", want);
	snprintf(per, sizeof(per), "%ld", w->cfg->webhook_endpoint_in_flight);
	snprintf(lease, sizeof(lease), "%ld", w->cfg->webhook_timeout + LEASE_MARGIN);
	if ((r = db_run(w->db, WH_CLAIM, 4, p, &e)) == NULL) {
		/* Logged by db_run; not again at once, or a refusal would spin. */
		w->claim_at = mono_ms() + CLAIM_BACKOFF_MS;
		return -1;
	}
	n = PQntuples(r) < CLAIM_BATCH ? PQntuples(r) : CLAIM_BATCH; /* want bounds it */
	for (i = 0; i < n; i++)
		merchant[i] = strtoll(PQgetvalue(r, i, WH_CLAIM_MERCHANT), NULL, 10);
	webhook_backlog_claimed(&w->backlog, merchant, (size_t)n,
	    w->cfg->webhook_endpoint_in_flight, from_backlog);
	for (i = 0; i < n; i++)
		start(w, r, i, merchant[i], from_backlog[i]);
	PQclear(r);
	/* A full batch may leave more behind: claim again at once. */
	if (n == 0)
		return note_next_due(w) == 0 ? 0 : -1;
	w->claim_at = n < want ? mono_ms() + w->cfg->webhook_poll_interval * 1000 : 0;
	return n;
}

void
webhook_wake(struct webhook *w)
{
	w->claim_at = 0;
}

static void
log_outcome(const struct flight *f)
{
	char err[sizeof(f->res.error) * 4], next[48] = "";

	if (strcmp(f->result, "retry") == 0)
		snprintf(next, sizeof(next), " retry_in=%lds", f->delay);
	/*
	 * A delivery is counted (marketpay_webhook_attempts_total, the duration histogram)
	 * and logged only at debug: at 1,500 events a second an info line each would be
	 * gigabytes a day. A failure stays a warning: someone may have to act on it.
	 */
	log_msg(f->ok ? LOG_LVL_DEBUG : LOG_LVL_WARN, NULL,
	    "webhook event=%s merchant=%s attempt=%d http=%ld result=%s dur_ms=%ld%s%s%s",
	    f->id, f->merchant, f->attempts + 1, f->res.http_status, f->result,
	    f->res.duration_ms, next, f->res.error[0] ? " error=" : "",
	    log_escape(f->res.error, err, sizeof(err)));
}

/* The breaker settings as text: $10 and $11 of WH_RECORD. */
struct breaker_text {
	char failures[24], cooldown[24];
};

/* Records the finished deliveries in one statement. 0, or -1 (they stay to record). */
static int
record(struct webhook *w)
{
	struct pgarray a[8];
	struct breaker_text b;
	const char *p[11];
	PGresult *r;
	enum err e;
	size_t i, k;
	int rc = -1;

	for (k = 0; k < 8; k++)
		pgarray_init(&a[k]);
	for (i = 0; i < w->ndone; i++) {
		const struct flight *f = w->done[i];

		pgarray_add(&a[0], f->id);
		pgarray_add(&a[1], f->result);
		pgarray_add_int(&a[2], f->delay < 0 ? 0 : f->delay);
		pgarray_add(&a[3], f->url != NULL ? f->url : "");
		if (f->res.http_status > 0)
			pgarray_add_int(&a[4], f->res.http_status);
		else
			pgarray_add(&a[4], NULL);
		pgarray_add(&a[5], f->ok ? NULL : f->res.error);
		pgarray_add_int(&a[6], f->res.duration_ms);
		pgarray_add(&a[7], f->res.endpoint_down ? "t" : "f");
	}
	p[0] = w->owner;
	for (k = 0; k < 8; k++)
		if ((p[k + 1] = pgarray_end(&a[k])) == NULL)
			goto out;
	snprintf(b.failures, sizeof(b.failures), "%ld", w->cfg->webhook_breaker_failures);
	snprintf(b.cooldown, sizeof(b.cooldown), "%ld", w->cfg->webhook_breaker_cooldown);
	p[9] = b.failures;
	p[10] = b.cooldown;
	if ((r = db_run(w->db, WH_RECORD, 11, p, &e)) == NULL)
		goto out;
	PQclear(r);
	for (i = 0; i < w->ndone; i++) {
		metrics_delivery_done(w->done[i]->result, w->done[i]->res.duration_ms);
		/*
		 * Its latency: the age the database gave at the claim, then this sender's
		 * monotonic clock from the claim to the 2xx: no two clocks are compared.
		 */
		if (w->done[i]->ok && w->done[i]->age_ms >= 0)
			metrics_delivery_latency(w->done[i]->age_ms + w->done[i]->ended -
			    w->done[i]->claimed);
		if (w->done[i]->from_backlog)
			webhook_backlog_recorded(&w->backlog, w->done[i]->merchant_id);
		log_outcome(w->done[i]);
		flight_free(w->done[i]);
	}
	w->ndone = 0;
	/* Room, and perhaps the merchant's next events: look at once. */
	w->claim_at = 0;
	rc = 0;
out:
	for (k = 0; k < 8; k++)
		pgarray_free(&a[k]);
	return rc;
}

int
webhook_run(struct webhook *w)
{
	int n = webhook_post_run(w->post, on_done, w);

	if (w->ndone > 0 && db_ready(w->db) && record(w) != 0)
		log_msg(LOG_LVL_ERROR, NULL, "%zu attempts not recorded yet; kept to record when "
		    "the database answers", w->ndone);
	return n;
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
	if (count > 0)
		w->claim_at = 0;
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
webhook_wait(struct webhook *w, int wake_fd, long max_ms)
{
	int fds[2] = { sound(w) != NULL ? PQsocket(sound(w)) : -1, wake_fd };
	long ms = max_ms;
	long long left;

	if (sound(w) == NULL) {
		ms = db_retry_ms(w->db);
	} else if (webhook_in_flight(w) < (size_t)w->cfg->webhook_max_in_flight) {
		left = claim_time(w) - mono_ms();
		ms = left < 0 ? 0 : (long)left;
	}
	if (ms > max_ms)
		ms = max_ms;
	return webhook_post_wait(w->post, fds, 2, ms);
}
