/* marketpay-fcgi: one FastCGI worker. argv, config, logging, the accept loop, exit. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "fcgi.h"
#include "log.h"
#include "route.h"

static void
on_term(int sig)
{
	(void)sig;
	fcgi_shutdown();
}

static int
install_signals(void)
{
	struct sigaction sa;

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
	fprintf(stderr, "usage: marketpay-fcgi [-v] [-c config]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct app app;
	struct fcgi *f = NULL;
	struct req *req;
	const char *path = NULL;
	char err[512], epath[256];
	int ch, verbose = 0, rc = 1;

	while ((ch = getopt(argc, argv, "c:v")) != -1) {
		switch (ch) {
		case 'c': path = optarg; break;
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
	if ((app.db = db_new(app.cfg.database)) == NULL || (f = fcgi_new()) == NULL ||
	    install_signals() != 0) {
		log_msg(LOG_LVL_ERROR, NULL, "startup failed (is stdin a FastCGI socket?)");
		goto out;
	}
	db_ready(app.db);
	log_msg(LOG_LVL_INFO, NULL, "worker ready");
	while (fcgi_accept(f) == 0) {
		if ((req = fcgi_read(f, app.cfg.max_body_bytes)) == NULL) {
			struct req oom = { 0 };

			oom.status = 500;
			fcgi_finish(f, &oom);
			continue;
		}
		db_set_reqid(app.db, req->request_id);
		route_dispatch(&app, req);
		fcgi_finish(f, req);
		log_msg(req->status >= 500 ? LOG_LVL_WARN : LOG_LVL_INFO, req->request_id,
		    "%s %s status=%d dur_ms=%.1f merchant=%lld", req->method,
		    log_escape(req->path, epath, sizeof(epath)), req->status,
		    elapsed_ms(&req->start), (long long)req->merchant_id);
		db_set_reqid(app.db, NULL);
		req_free(req);
	}
	log_msg(LOG_LVL_INFO, NULL, "worker exiting");
	rc = 0;
out:
	fcgi_free(f);
	db_free(app.db);
	config_free(&app.cfg);
	log_close();
	return rc;
}
