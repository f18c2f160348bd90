/*
 * mpload: a load generator for marketpay. N connections (one thread each) run a weighted
 * mix of operations against $MARKETPAY_BASE_URL for D seconds or until SIGTERM/SIGINT:
 * create-session; a checkout payment (create-session, GET the page, POST the form with a
 * wallet or the sandbox test card, expecting 303); a multi-vendor transfer with an
 * Idempotency-Key, sent again with the same body after 503 or no answer, as
 * marketpay-api(7) says. Every request goes to the journal (journal.h); the summary gives
 * counts per status and exact latency percentiles, one key=value line per kind.
 *
 * With -q RATE the load is open loop: operations are due at RATE per second over all the
 * connections from the start, each sent by the next free connection (pace.h); the first
 * request of each counts its latency from when it was due, so a stall shows in every
 * operation it delayed, not only in those in flight (coordinated omission); the summary
 * counts the operations sent more than 10 ms late and those due but never sent.
 *
 * The first SIGTERM/SIGINT lets every operation in hand finish (with its retries); a second
 * one stops the retries. Exit status: 0 when every operation reached its goal, 3 when some
 * did not (refused, or given up after the retry budget), 1 when setup failed, 2 for usage.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "client.h"
#include "journal.h"
#include "ops.h"
#include "pace.h"
#include "seal.h"
#include "stats.h"

static volatile sig_atomic_t stopping, abort_retries;
static atomic_int running;
static int weights[STATS_OP__MAX];
static int weight_sum;
static struct pace pace;      /* -q: the schedule */
static double pace_end;       /* -q: no operation due at or after this is sent */
static int paced;

static void
usage(void)
{
	fprintf(stderr, "usage: mpload [-n] [-c conns] [-d seconds] [-j journal] [-k apikey]"
	    " [-m mix]\n\t[-p wallet|card|both] [-P pin] [-q ops-per-second] [-r run-id]"
	    " [-R retry-seconds]"
	    " [-s max-split]\n\t[-t timeout] [-u base-url] [-V vendors] [-w wallets]"
	    " [-W wallet-pin]\n"
	    "mix: create=W,pay=W,transfer=W (default create=1,pay=2,transfer=1)\n"
	    "-q: open loop, ops-per-second operations due over all connections (default: closed loop)\n"
	    "env: MARKETPAY_BASE_URL, MPLOAD_KEY, MPLOAD_PIN, MPLOAD_VENDORS, MPLOAD_WALLETS,"
	    " MPLOAD_WALLET_PIN\n");
	exit(2);
}

static const char *
env_or(const char *opt, const char *name)
{
	return opt != NULL ? opt : getenv(name);
}

/* "create=1,pay=2" into weights; -1 on a bad name or weight. */
static int
parse_mix(const char *text)
{
	char *copy = strdup(text), *tok, *save = NULL, *eq, *end;
	long w;
	int k, rc = 0;

	if (copy == NULL)
		return -1;
	memset(weights, 0, sizeof(weights));
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if ((eq = strchr(tok, '=')) == NULL) {
			rc = -1;
			break;
		}
		*eq = '\0';
		errno = 0;
		w = strtol(eq + 1, &end, 10);
		for (k = 0; k < STATS_OP__MAX && strcmp(tok, stats_op_name(k)) != 0; k++)
			;
		if (k == STATS_OP__MAX || errno != 0 || *end != '\0' || w < 0 || w > 1000) {
			rc = -1;
			break;
		}
		weights[k] = (int)w;
	}
	free(copy);
	weight_sum = 0;
	for (k = 0; k < STATS_OP__MAX; k++)
		weight_sum += weights[k];
	return rc == 0 && weight_sum > 0 ? 0 : -1;
}

/* "a,b,c" into a NULL-terminated array (the strings live in a copy of text); count in *n. */
static char **
split_list(const char *text, int *n)
{
	char *copy, *tok, *save = NULL, **v;
	int cap = 8;

	*n = 0;
	if (text == NULL || *text == '\0')
		return NULL;
	if (*text == ',')   /* v[0] must be where the copy starts: main frees it */
		usage();
	if ((copy = strdup(text)) == NULL || (v = calloc((size_t)cap + 1, sizeof(*v))) == NULL) {
		fprintf(stderr, "mpload: out of memory\n");
		exit(1);
	}
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (*n == cap) {
			cap *= 2;
			if ((v = realloc(v, ((size_t)cap + 1) * sizeof(*v))) == NULL) {
				fprintf(stderr, "mpload: out of memory\n");
				exit(1);
			}
		}
		v[(*n)++] = tok;
		v[*n] = NULL;
	}
	return v;
}

/* The service's PIN key (GET /api/v1/payment/pin-public-key), trying for up to 10 s. */
static EVP_PKEY *
fetch_pin_key(const char *base, const char *auth)
{
	const char *h[] = { auth, NULL };
	struct client *c = client_new(base, 10);
	struct json_object *j = NULL, *v;
	EVP_PKEY *k = NULL;
	int i;

	for (i = 0; c != NULL && k == NULL && i < 50; i++) {
		if (i > 0)
			usleep(200000);
		if (client_do(c, "GET", "/api/v1/payment/pin-public-key", h, NULL) != 0 ||
		    c->status != 200 || (j = json_tokener_parse(c->body)) == NULL)
			continue;
		if (json_object_object_get_ex(j, "public_key", &v))
			k = seal_load(json_object_get_string(v));
		json_object_put(j);
	}
	if (k == NULL)
		fprintf(stderr, "mpload: cannot get the PIN key (last status %ld: %.200s)\n",
		    c ? c->status : 0L, c ? c->body : "");
	client_free(c);
	return k;
}

static void *
worker(void *arg)
{
	struct ops_thread *t = arg;
	double due, lag;
	int r, k;

	while (!stopping) {
		if (paced) {
			due = pace_take(&pace);
			if (due >= pace_end || pace_wait(due, &stopping) != 0)
				break;
			lag = pace_now() - due;
			t->cl->owed_us = (int64_t)(lag * 1e6);
			t->st.paced++;
			if (t->cl->owed_us > PACE_LATE_US)
				t->st.late++;
			if ((uint64_t)t->cl->owed_us > t->st.max_lag_us)
				t->st.max_lag_us = (uint64_t)t->cl->owed_us;
		}
		r = rand_r(&t->seed) % weight_sum;
		for (k = 0; r >= weights[k]; k++)
			r -= weights[k];
		ops_run(t, (enum stats_op)k);
	}
	atomic_fetch_sub(&running, 1);
	return NULL;
}

/* Waits up to secs (< 0: for ever) for SIGINT/SIGTERM; returns 1 when one came. */
static int
wait_signal(const sigset_t *set, double secs)
{
	struct timespec ts;

	if (secs < 0)
		secs = 3600;
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	return sigtimedwait(set, NULL, &ts) > 0;
}

int
main(int argc, char **argv)
{
	struct ops_config cfg = { 0 };
	struct ops_thread *th = NULL;
	struct stats total = { 0 };
	pthread_t *tid = NULL;
	const char *base = NULL, *key = NULL, *journal = NULL, *mix = "create=1,pay=2,transfer=1";
	const char *vendors = NULL, *wallets = NULL, *method = NULL;
	char run[32];
	double duration = 10, rate = 0, t0, end, secs;
	long timeout = 30;
	int ch, conns = 8, i, failed = 0, started = 0;
	uint64_t ops_failed = 0;
	sigset_t set;

	snprintf(run, sizeof(run), "%lx%lx", (unsigned long)time(NULL) & 0xfffff,
	    (unsigned long)getpid() & 0xfff);
	cfg.run = run;
	cfg.max_split = 3;
	cfg.create_keys = 1;
	cfg.retry_s = 30;
	cfg.abort_retries = &abort_retries;
	while ((ch = getopt(argc, argv, "c:d:j:k:m:np:P:q:r:R:s:t:u:V:w:W:")) != -1) {
		switch (ch) {
		case 'c': conns = atoi(optarg); break;
		case 'd': duration = atof(optarg); break;
		case 'j': journal = optarg; break;
		case 'k': key = optarg; break;
		case 'm': mix = optarg; break;
		case 'n': cfg.create_keys = 0; break;
		case 'p': method = optarg; break;
		case 'P': cfg.pin = optarg; break;
		case 'q': rate = atof(optarg); break;
		case 'r': cfg.run = optarg; break;
		case 'R': cfg.retry_s = atof(optarg); break;
		case 's': cfg.max_split = atoi(optarg); break;
		case 't': timeout = atol(optarg); break;
		case 'u': base = optarg; break;
		case 'V': vendors = optarg; break;
		case 'w': wallets = optarg; break;
		case 'W': cfg.wallet_pin = optarg; break;
		default: usage();
		}
	}
	base = env_or(base, "MARKETPAY_BASE_URL");
	key = env_or(key, "MPLOAD_KEY");
	cfg.pin = env_or(cfg.pin, "MPLOAD_PIN");
	cfg.wallet_pin = env_or(cfg.wallet_pin, "MPLOAD_WALLET_PIN");
	cfg.vendors = split_list(env_or(vendors, "MPLOAD_VENDORS"), &cfg.nvendors);
	cfg.wallets = split_list(env_or(wallets, "MPLOAD_WALLETS"), &cfg.nwallets);
	if (argc != optind || conns < 1 || conns > 4096 || duration < 0 || timeout < 1 ||
	    !(rate >= 0 && rate <= 1e6) ||
	    cfg.max_split < 1 || cfg.retry_s < 0 || strlen(cfg.run) > 20 || parse_mix(mix) != 0)
		usage();
	if (method == NULL || strcmp(method, "both") == 0)
		cfg.method = OPS_BOTH;
	else if (strcmp(method, "wallet") == 0)
		cfg.method = OPS_WALLET;
	else if (strcmp(method, "card") == 0)
		cfg.method = OPS_CARD;
	else
		usage();
	if (base == NULL || key == NULL) {
		fprintf(stderr, "mpload: need the base URL (-u, MARKETPAY_BASE_URL) and an API key"
		    " (-k, MPLOAD_KEY)\n");
		return 2;
	}
	if (weights[STATS_OP_PAY] && cfg.method == OPS_WALLET &&
	    (cfg.nwallets == 0 || cfg.wallet_pin == NULL)) {
		fprintf(stderr, "mpload: wallet payments need accounts (-w) and their PIN (-W)\n");
		return 2;
	}
	if (cfg.nwallets > 0 && cfg.wallet_pin == NULL)
		cfg.nwallets = 0;   /* no PIN: pay by card */
	snprintf(cfg.auth, sizeof(cfg.auth), "Authorization: API-KEY %s", key);
	if (weights[STATS_OP_TRANSFER] && (cfg.pin == NULL || cfg.nvendors == 0)) {
		fprintf(stderr, "mpload: transfers need the PIN (-P) and vendor accounts (-V)\n");
		return 2;
	}
	if (journal_open(journal) != 0) {
		fprintf(stderr, "mpload: %s: %s\n", journal, strerror(errno));
		return 1;
	}
	/* Blocked here, so in every thread: only sigtimedwait below takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (weights[STATS_OP_TRANSFER] && (cfg.pin_key = fetch_pin_key(base, cfg.auth)) == NULL) {
		failed = 1;
		goto out;
	}
	if ((th = calloc((size_t)conns, sizeof(*th))) == NULL ||
	    (tid = calloc((size_t)conns, sizeof(*tid))) == NULL) {
		fprintf(stderr, "mpload: out of memory\n");
		failed = 1;
		goto out;
	}
	t0 = pace_now();
	if (rate > 0) {
		pace_init(&pace, t0, rate);
		pace_end = duration > 0 ? t0 + duration : 1e300;
		paced = 1;
	}
	for (i = 0; i < conns; i++) {
		th[i].cfg = &cfg;
		th[i].id = i;
		th[i].seed = (unsigned int)(time(NULL) ^ (i * 2654435761u) ^ (unsigned)getpid());
		if ((th[i].cl = client_new(base, timeout)) == NULL)
			break;
		atomic_fetch_add(&running, 1);
		if (pthread_create(&tid[i], NULL, worker, &th[i]) != 0) {
			atomic_fetch_sub(&running, 1);
			client_free(th[i].cl);
			break;
		}
		started++;
	}
	if (started < conns) {
		fprintf(stderr, "mpload: started only %d of %d connections\n", started, conns);
		stopping = 1;
		failed = 1;
	}
	end = t0 + duration;
	while (!stopping) {
		if (wait_signal(&set, duration > 0 ? end - pace_now() : -1) || (duration > 0 &&
		    pace_now() >= end))
			stopping = 1;
	}
	secs = pace_now() - t0;
	/* Operations in hand finish; a second signal cuts their retries short. */
	while (atomic_load(&running) > 0)
		if (wait_signal(&set, 0.05))
			abort_retries = 1;
	for (i = 0; i < started; i++) {
		pthread_join(tid[i], NULL);
		if (stats_merge(&total, &th[i].st) != 0)
			fprintf(stderr, "mpload: out of memory: some latencies are left out\n");
		ops_failed += th[i].st.ops_failed[STATS_OP_CREATE] +
		    th[i].st.ops_failed[STATS_OP_PAY] + th[i].st.ops_failed[STATS_OP_TRANSFER];
		stats_free(&th[i].st);
		client_free(th[i].cl);
	}
	printf("mpload: run=%s conns=%d mix=%s\n", cfg.run, conns, mix);
	stats_print(&total, secs, conns, stdout);
	if (paced) {
		uint64_t due = pace_due_count(&pace, duration > 0 ? duration : secs);

		printf("paced rate=%.1f due=%llu sent=%llu unsent=%llu late=%llu max_lag_us=%llu\n",
		    rate, (unsigned long long)due, (unsigned long long)total.paced,
		    (unsigned long long)(due > total.paced ? due - total.paced : 0),
		    (unsigned long long)total.late, (unsigned long long)total.max_lag_us);
	}
	fflush(stdout);
out:
	stats_free(&total);
	EVP_PKEY_free(cfg.pin_key);
	free(th);
	free(tid);
	if (cfg.vendors)
		free(cfg.vendors[0]);
	free(cfg.vendors);
	if (cfg.wallets)
		free(cfg.wallets[0]);
	free(cfg.wallets);
	journal_close();
	curl_global_cleanup();
	return failed ? 1 : ops_failed > 0 ? 3 : 0;
}
