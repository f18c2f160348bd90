/* marketpay-webhookd: delivers the webhook outbox. argv, config, logging, signals, the loop. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "webhook.h"

static volatile sig_atomic_t stopping;

static void
on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

/*
 * SIGTERM and SIGINT stay blocked except while the daemon waits for work (ppoll lets them
 * in with waitmask), so they can never cut a delivery short: the one in hand is finished
 * and recorded, then the daemon exits.
 */
static int
install_signals(sigset_t *waitmask)
{
	struct sigaction sa;
	sigset_t stops;

	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
		return -1;
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) != 0 || sigprocmask(SIG_BLOCK, &stops, waitmask) != 0)
		return -1;
	sigdelset(waitmask, SIGTERM);
	sigdelset(waitmask, SIGINT);
	return 0;
}

/* True once a stop signal came, also while it still waits, blocked, to be let in. */
static bool
stop_asked(void)
{
	sigset_t pending;

	return stopping || (sigpending(&pending) == 0 &&
	    (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1));
}

/* Sleeps until a notification, the next due retry, poll_ms, or a stop signal. */
static void
wait_for_work(const struct webhook *w, long poll_ms, const sigset_t *waitmask)
{
	struct pollfd pfd;
	struct timespec ts;
	long ms = webhook_wait_ms(w, poll_ms);

	pfd.fd = webhook_socket(w);   /* -1 when not connected: poll ignores it */
	pfd.events = POLLIN;
	pfd.revents = 0;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	ppoll(&pfd, 1, &ts, waitmask);
}

static void
usage(void)
{
	fprintf(stderr, "usage: marketpay-webhookd [-v] [-c config]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct config cfg;
	struct webhook *w = NULL;
	const char *path = NULL;
	char err[512] = "cannot install signal handlers";
	sigset_t waitmask;
	int ch, n, verbose = 0, rc = 1;

	while ((ch = getopt(argc, argv, "c:v")) != -1) {
		switch (ch) {
		case 'c': path = optarg; break;
		case 'v': verbose++; break;
		default: usage();
		}
	}
	if (argc != optind)
		usage();
	if (config_load(&cfg, path, err, sizeof(err)) != 0) {
		fprintf(stderr, "marketpay-webhookd: %s\n", err);
		config_free(&cfg);
		return 1;
	}
	if (log_open("marketpay-webhookd", cfg.log_file, cfg.log_level) != 0)
		fprintf(stderr, "marketpay-webhookd: cannot open log %s; using stderr\n",
		    cfg.log_file);
	while (verbose-- > 0)
		log_more();
	if (install_signals(&waitmask) != 0 || (w = webhook_new(&cfg, err, sizeof(err))) == NULL) {
		/* Said on stderr too: whoever started it by hand is looking there. */
		fprintf(stderr, "marketpay-webhookd: %s\n", err);
		log_msg(LOG_LVL_ERROR, NULL, "startup failed: %s", err);
		goto out;
	}
	log_msg(LOG_LVL_INFO, NULL, "started: poll every %lds, attempt timeout %lds",
	    cfg.webhook_poll_interval, cfg.webhook_timeout);
	while (!stopping) {
		n = -1;
		if (webhook_ready(w)) {
			/* Notifications so far name events that the scan below sees anyway. */
			webhook_drain(w);
			while (!stop_asked() && (n = webhook_deliver_next(w)) > 0)
				;
			/* Events committed while it scanned may have been missed: scan again. */
			if (n == 0 && !stop_asked() && webhook_drain(w) > 0)
				continue;
		}
		wait_for_work(w, cfg.webhook_poll_interval * 1000, &waitmask);
	}
	log_msg(LOG_LVL_INFO, NULL, "stopping on signal");
	rc = 0;
out:
	webhook_free(w);
	config_free(&cfg);
	log_close();
	return rc;
}
