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
#include "log.h"
#include "metrics_worker.h"
#include "route.h"

static volatile sig_atomic_t stopping;

static void
on_term(int sig)
{
	(void)sig;
	stopping = 1;
	fcgi_shutdown();
}

static int
install_signals(sigset_t *stops)
{
	struct sigaction sa;

	sigemptyset(stops);
	sigaddset(stops, SIGTERM);
	sigaddset(stops, SIGUSR1);
	sigaddset(stops, SIGINT);
	/* No SA_RESTART: the signal must interrupt accept() so an idle worker exits at once. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0 ||
	    sigaction(SIGINT, &sa, NULL) != 0)
		return -1;
	sa.sa_handler = SIG_IGN;
	return sigaction(SIGPIPE, &sa, NULL);
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
	fprintf(stderr, "usage: marketpay-fcgi [-v] [-c config] | -V\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct app app = { 0 };
	struct fcgi *f = NULL;
	struct req *req;
	const char *path = NULL;
	char err[512], epath[256], emethod[32];
	sigset_t stops;
	int ch, verbose = 0, rc = 1;

	while ((ch = getopt_long(argc, argv, "c:vV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': path = optarg; break;
		case 'V': printf("marketpay-fcgi %s\n", PACKAGE_VERSION); exit(0);
		case 'v': verbose++; break;
		default: usage();
		}
	}
	if (config_load(&app.cfg, path, err, sizeof(err)) != 0) {
		fprintf(stderr, "marketpay-fcgi: %s\n", err);
		config_free(&app.cfg);
		return 1;
	}
	if (log_open("marketpay-fcgi", app.cfg.log_file, app.cfg.log_level) != 0)
		fprintf(stderr, "marketpay-fcgi: cannot open log %s; using stderr\n",
		    app.cfg.log_file);
	while (verbose-- > 0)
		log_more();
	/* Not the database string: it may hold a password. */
	log_msg(LOG_LVL_DEBUG, NULL, "config %s: environment=%s checkout_base_url=%s "
	    "max_body_bytes=%ld max_items=%ld max_vendors=%ld timezone=%s",
	    path ? path : getenv("MARKETPAY_CONFIG") ? getenv("MARKETPAY_CONFIG") :
	    CONFIG_DEFAULT_PATH, config_env_name(&app.cfg), app.cfg.checkout_base_url,
	    app.cfg.max_body_bytes, app.cfg.max_items, app.cfg.max_vendors, app.cfg.timezone);
	if ((app.db = db_new(app.cfg.database)) == NULL || (f = fcgi_new()) == NULL ||
	    install_signals(&stops) != 0) {
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
		log_msg(LOG_LVL_WARN, NULL, "pin_key_file %s: no RSA private key; multi-vendor "
		    "transfers are unavailable", app.cfg.pin_key_file);
	metrics_worker_attach(&app);
	db_ready(app.db);
	log_msg(LOG_LVL_INFO, NULL, "worker ready");
	for (;;) {
		/*
		 * Stop signals are let in only while waiting for a connection: they end the wait
		 * at once, and can never cut short a read or write of the request in hand.
		 */
		sigprocmask(SIG_UNBLOCK, &stops, NULL);
		if (stopping || fcgi_accept(f) != 0)
			break;
		sigprocmask(SIG_BLOCK, &stops, NULL);
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
