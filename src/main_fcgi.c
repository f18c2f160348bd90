/* marketpay-fcgi: one FastCGI worker. argv, config, logging, the accept loop, exit. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "fcgi.h"
#include "i18n.h"
#include "log.h"
#include "metrics_worker.h"
#include "pool.h"
#include "route.h"

/* What the command line said; the pool hands it to every worker it starts. */
struct opts {
	const char *path;	/* -c, or NULL: MARKETPAY_CONFIG or the default */
	int verbose;		/* -v, repeated */
};

static volatile sig_atomic_t stopping;

/* Each stops the worker after the request in hand. */
static const int stop_signals[] = { SIGTERM, SIGUSR1, SIGINT };
#define NSTOPS (sizeof(stop_signals) / sizeof(stop_signals[0]))

static void
on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

/*
 * The stop signals get a handler and are blocked from here on; waitmask is the mask to wait
 * for a connection with, the only place they are let in. 0, or -1.
 */
static int
install_signals(sigset_t *waitmask)
{
	struct sigaction sa;
	sigset_t stops;
	size_t i;

	sigemptyset(&stops);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NSTOPS; i++)
		if (sigaddset(&stops, stop_signals[i]) != 0 ||
		    sigaction(stop_signals[i], &sa, NULL) != 0)
			return -1;
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) != 0 || sigprocmask(SIG_BLOCK, &stops, waitmask) != 0)
		return -1;
	for (i = 0; i < NSTOPS; i++)
		sigdelset(waitmask, stop_signals[i]);
	return 0;
}

/* A stop signal sent while a request was in hand: pending, since they are blocked then. */
static int
stop_pending(void)
{
	sigset_t pending;
	size_t i;

	if (sigpending(&pending) != 0)
		return 0;
	for (i = 0; i < NSTOPS; i++)
		if (sigismember(&pending, stop_signals[i]) == 1)
			return 1;
	return 0;
}

static double
elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) * 1e3 +
	    (double)(now.tv_nsec - start->tv_nsec) / 1e6;
}

static void
usage(void)
{
	fprintf(stderr, "usage: marketpay-fcgi [-v] [-c config] [-w workers [-r read-workers]] | -V\n");
	exit(2);
}

/* Reads the configuration into cfg and opens the log it names. 0, or -1 with err set. */
static int
load(const struct opts *o, struct config *cfg, char *err, size_t errlen)
{
	int v;

	if (config_load(cfg, o->path, err, errlen) != 0)
		return -1;
	log_close();
	if (log_open("marketpay-fcgi", cfg->log_file, cfg->log_level) != 0)
		fprintf(stderr, "marketpay-fcgi: cannot open log %s; using stderr\n",
		    cfg->log_file);
	for (v = o->verbose; v > 0; v--)
		log_more();
	return 0;
}

/*
 * The pool's check at start and at each reload: the configuration loads. Why not is
 * logged: on stderr at start, in the log the pool has at a reload.
 */
static int
pool_load(void *ctx)
{
	struct config cfg = { 0 };
	char err[512];
	int rc = load(ctx, &cfg, err, sizeof(err));

	if (rc != 0)
		log_msg(LOG_LVL_ERROR, NULL, "%s", err);
	config_free(&cfg);
	return rc;
}

/*
 * One worker: serves requests on fd 0 until a stop signal; returns the exit status. reads:
 * fd 0 is the pool's reads socket, which nginx passes GET and HEAD requests to; other: the
 * pool's other socket (-1: none), whose queue a scrape reports.
 */
static int
worker(void *ctx, int reads, int other)
{
	const struct opts *o = ctx;
	const char *path = o->path;
	struct app app = { .reads = reads, .other_sock = other };
	struct fcgi *f = NULL;
	struct req *req;
	char err[512], epath[256], emethod[32];
	sigset_t waitmask;
	int rc = 1, got;

	if (load(o, &app.cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "marketpay-fcgi: %s\n", err);
		config_free(&app.cfg);
		return 1;
	}
	/* Not the database string: it may hold a password. */
	log_msg(LOG_LVL_DEBUG, NULL, "config %s: environment=%s checkout_base_url=%s "
	    "max_body_bytes=%ld max_items=%ld max_vendors=%ld timezone=%s",
	    path ? path : getenv("MARKETPAY_CONFIG") ? getenv("MARKETPAY_CONFIG") :
	    CONFIG_DEFAULT_PATH, config_env_name(&app.cfg), app.cfg.checkout_base_url,
	    app.cfg.max_body_bytes, app.cfg.max_items, app.cfg.max_vendors, app.cfg.timezone);
	/* The page's languages are the catalogs installed now: a new one needs a restart. */
	i18n_init(app.cfg.locale_dir);
	if ((app.db = db_new(app.cfg.database)) == NULL || (f = fcgi_new()) == NULL ||
	    install_signals(&waitmask) != 0) {
		/* Said on stderr too: whoever started it by hand is looking there, not at syslog. */
		fprintf(stderr, "marketpay-fcgi: startup failed (is stdin a FastCGI socket? "
		    "start it with spawn-fcgi)\n");
		log_msg(LOG_LVL_ERROR, NULL, "startup failed");
		goto out;
	}
	db_set_statements(app.db, worker_sql, DB_STMT__MAX);
	db_set_environment(app.db, config_env_name(&app.cfg));
	db_set_application(app.db, "marketpay-fcgi");
	/* Without the key the API works; only the checkout page answers 503. */
	app.have_secret = crypto_load_key(app.cfg.secrets_key_file, app.secret) == 0;
	if (!app.have_secret)
		log_msg(LOG_LVL_WARN, NULL, "secrets_key_file %s: not readable (32 bytes); the "
		    "checkout page is unavailable", app.cfg.secrets_key_file);
	/* Without the PIN key the other endpoints work; transfers answer 503. */
	if ((app.pin_key = crypto_pkey_load(app.cfg.pin_key_file)) == NULL ||
	    (app.pin_public_pem = crypto_pkey_public_pem(app.pin_key)) == NULL)
		log_msg(LOG_LVL_WARN, NULL, "pin_key_file %s: no RSA private key of at least %d "
		    "bits; multi-vendor transfers are unavailable", app.cfg.pin_key_file,
		    CRYPTO_PKEY_MIN_BITS);
	metrics_worker_attach(&app);
	db_ready(app.db);
	log_msg(LOG_LVL_INFO, NULL, reads ? "worker ready (reads socket)" : "worker ready");
	for (;;) {
		/*
		 * Stop signals are let in only while waiting for a connection: they end the wait
		 * at once, and can never cut short a read or write of the request in hand. One
		 * sent while a request was in hand is seen here, before the next is taken.
		 */
		if (stop_pending())
			stopping = 1;
		if (stopping || (got = fcgi_accept(f, &waitmask)) < 0)
			break;
		if (got == 0)
			continue;	/* a signal ended the wait */
		if ((req = fcgi_read(f, app.cfg.max_body_bytes)) == NULL) {
			struct req oom = { 0 };

			oom.status = 500;
			fcgi_finish(f, &oom);
			continue;
		}
		metrics_worker_begin();
		db_set_reqid(app.db, req->request_id);
		route_dispatch(&app, req);
		fcgi_finish(f, req);
		metrics_worker_end(req);
		log_msg(req->status >= 500 ? LOG_LVL_WARN : LOG_LVL_INFO, req->request_id,
		    "%s %s status=%d dur_ms=%.1f merchant=%lld",
		    log_escape(req->method, emethod, sizeof(emethod)),
		    log_escape(req->path, epath, sizeof(epath)), req->status,
		    elapsed_ms(&req->start), (long long)req->merchant_id);
		db_set_reqid(app.db, NULL);
		req_free(req);
	}
	if (stopping) {
		log_msg(LOG_LVL_INFO, NULL, "worker exiting");
		rc = 0;
	} else
		log_msg(LOG_LVL_ERROR, NULL, "accept failed; worker exiting");
out:
	fcgi_free(f);
	crypto_wipe(app.secret, sizeof(app.secret));
	crypto_pkey_free(app.pin_key);
	free(app.pin_public_pem);
	db_free(app.db);
	config_free(&app.cfg);
	log_close();
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "version", no_argument, NULL, 'V' },
		{ "workers", required_argument, NULL, 'w' },
		{ "read-workers", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { NULL, 0 };
	struct pool_hooks hooks = { pool_load, worker, &o };
	struct pool_size size = { 0, 0, -1 };
	char *end;
	long workers = 0, reads = 0;
	int ch;

	while ((ch = getopt_long(argc, argv, "c:r:vVw:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': o.path = optarg; break;
		case 'V': printf("marketpay-fcgi %s\n", PACKAGE_VERSION); exit(0);
		case 'v': o.verbose++; break;
		case 'w':
			workers = strtol(optarg, &end, 10);
			if (*end != '\0' || workers < 1 || workers > 1024)
				usage();
			break;
		case 'r':
			reads = strtol(optarg, &end, 10);
			if (*end != '\0' || reads < 1 || reads > 1024)
				usage();
			break;
		default: usage();
		}
	}
	if (optind != argc || (reads > 0 && workers == 0))
		usage();
	/*
	 * The listening socket: from systemd (LISTEN_FDS) or spawn-fcgi (fd 0). A lone worker
	 * says what is wrong after its configuration is read, as it always did (fcgi_new).
	 */
	if (pool_adopt_socket(&size.reads_fd) != 0 && workers > 0) {
		fprintf(stderr, "marketpay-fcgi: startup failed (is stdin a FastCGI socket? "
		    "start it with spawn-fcgi or from its systemd socket unit)\n");
		return 1;
	}
	/*
	 * The sockets and the workers asked for disagree after an upgrade whose socket unit was
	 * not restarted yet (one socket), or with a unit of its own: serve every socket there is.
	 */
	if (size.reads_fd < 0 && reads > 0) {
		fprintf(stderr, "marketpay-fcgi: no second socket, for reads (LISTEN_FDS=1): the "
		    "%ld read workers accept on the one socket (restart the socket unit)\n", reads);
		workers += reads;
		reads = 0;
	} else if (size.reads_fd >= 0 && reads == 0 && workers > 0) {
		fprintf(stderr, "marketpay-fcgi: a second socket, for reads, and no --read-workers: "
		    "1 worker accepts on it\n");
		reads = 1;
	}
	size.workers = (int)workers;
	size.read_workers = (int)reads;
	return workers > 0 ? pool_run(&size, &hooks) : worker(&o, 0, -1);
}
