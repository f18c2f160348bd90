/*
 * marketpay-webhookd: delivers the webhook outbox. argv, config, logging, signals; a
 * supervisor forks webhook_senders sender processes, each running the delivery loop; the
 * first of them also sweeps expired payment sessions every expire_interval seconds.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "webhook.h"
#include "webhook_expire.h"

static volatile sig_atomic_t stopping;

static void
on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

/* Only there to wake the supervisor's sigsuspend. */
static void
on_child(int sig)
{
	(void)sig;
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
	sigaddset(&stops, SIGCHLD);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
		return -1;
	sa.sa_handler = on_child;
	if (sigaction(SIGCHLD, &sa, NULL) != 0)
		return -1;
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) != 0 || sigprocmask(SIG_BLOCK, &stops, waitmask) != 0)
		return -1;
	sigdelset(waitmask, SIGTERM);
	sigdelset(waitmask, SIGINT);
	sigdelset(waitmask, SIGCHLD);
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

/* Milliseconds of the monotonic clock. */
static long long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

/*
 * One sender: its own connection and HTTP client, the delivery loop until a stop signal.
 * The sweeper (one sender of the daemon) also runs the expiry sweep when it falls due,
 * between deliveries.
 */
static int
sender(const struct config *cfg, const sigset_t *waitmask, bool sweeper)
{
	long long next_sweep = mono_ms();
	long poll_ms;
	struct webhook *w;
	char err[512];
	int n;

	if ((w = webhook_new(cfg, err, sizeof(err))) == NULL) {
		log_msg(LOG_LVL_ERROR, NULL, "sender: %s", err);
		return 1;
	}
	while (!stopping) {
		n = -1;
		if (webhook_ready(w)) {
			if (sweeper && mono_ms() >= next_sweep) {
				webhook_expire(webhook_db(w), stop_asked);
				next_sweep = mono_ms() + cfg->expire_interval * 1000;
			}
			/* Notifications so far name events that the scan below sees anyway. */
			webhook_drain(w);
			while (!stop_asked() && (n = webhook_deliver_next(w)) > 0)
				;
			/* Events committed while it scanned may have been missed: scan again. */
			if (n == 0 && !stop_asked() && webhook_drain(w) > 0)
				continue;
		}
		poll_ms = cfg->webhook_poll_interval * 1000;
		if (sweeper && next_sweep - mono_ms() < poll_ms)
			poll_ms = next_sweep > mono_ms() ? (long)(next_sweep - mono_ms()) : 0;
		wait_for_work(w, poll_ms, waitmask);
	}
	webhook_free(w);
	return 0;
}

#define MAX_SENDERS 64

/* Forks a sender into slot i; the child never returns. */
static void
spawn(const struct config *cfg, const sigset_t *waitmask, pid_t *pids, long i)
{
	struct sigaction sa;
	pid_t pid = fork();

	if (pid == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGCHLD, &sa, NULL);
		_exit(sender(cfg, waitmask, i == 0));
	}
	if (pid < 0)
		log_msg(LOG_LVL_ERROR, NULL, "fork: %s", strerror(errno));
	pids[i] = pid > 0 ? pid : 0;
}

/*
 * The supervisor: keeps webhook_senders senders running, restarting one that dies (a
 * second later, so a sender that cannot start does not spin), and on SIGTERM passes the
 * stop on and waits until each has finished the delivery in hand.
 */
static void
supervise(const struct config *cfg, const sigset_t *waitmask)
{
	pid_t pids[MAX_SENDERS] = { 0 }, pid;
	long i, n = cfg->webhook_senders > MAX_SENDERS ? MAX_SENDERS : cfg->webhook_senders;
	int status;

	for (i = 0; i < n; i++)
		spawn(cfg, waitmask, pids, i);
	while (!stopping) {
		sigsuspend(waitmask);
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < n && pids[i] != pid; i++)
				;
			if (i < n)
				pids[i] = 0;
			if (!stopping)
				log_msg(LOG_LVL_ERROR, NULL, "sender pid=%ld %s %d; restarting it",
				    (long)pid, WIFSIGNALED(status) ? "killed by signal" : "exited",
				    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		}
		for (i = 0; i < n && !stopping; i++)
			if (pids[i] == 0) {
				sleep(1);
				spawn(cfg, waitmask, pids, i);
			}
	}
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (i = 0; i < n; i++)
		while (pids[i] > 0 && waitpid(pids[i], &status, 0) < 0 && errno == EINTR)
			;
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
	const char *path = NULL;
	char err[512] = "cannot install signal handlers";
	sigset_t waitmask;
	int ch, verbose = 0, rc = 1;

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
	/* Checked here, once: the senders would each fail on what is wrong for all. */
	if (install_signals(&waitmask) != 0 || webhook_check(&cfg, err, sizeof(err)) != 0) {
		/* Said on stderr too: whoever started it by hand is looking there. */
		fprintf(stderr, "marketpay-webhookd: %s\n", err);
		log_msg(LOG_LVL_ERROR, NULL, "startup failed: %s", err);
		goto out;
	}
	log_msg(LOG_LVL_INFO, NULL, "started: %ld senders, poll every %lds, attempt timeout %lds,"
	    " expiry sweep every %lds", cfg.webhook_senders, cfg.webhook_poll_interval,
	    cfg.webhook_timeout, cfg.expire_interval);
	if (cfg.webhook_allow_private)
		log_msg(LOG_LVL_WARN, NULL, "webhook_allow_private is on: webhooks may go to "
		    "loopback, private and other internal addresses");
	supervise(&cfg, &waitmask);
	log_msg(LOG_LVL_INFO, NULL, "stopping on signal");
	rc = 0;
out:
	config_free(&cfg);
	log_close();
	return rc;
}
