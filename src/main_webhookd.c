/*
 * marketpay-webhookd: delivers the webhook outbox. argv, config, logging, signals; a
 * supervisor forks webhook_senders sender processes, each running the delivery loop; the
 * first of them also sweeps expired payment sessions every expire_interval seconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "metrics_delivery.h"
#include "webhook.h"
#include "webhook_expire.h"

static volatile sig_atomic_t stopping;
static int wake_pipe[2] = { -1, -1 };   /* a sender's: written by on_term, read by nobody */

static void
on_term(int sig)
{
	int saved = errno;

	(void)sig;
	stopping = 1;
	/* Wakes the sender's wait; a full pipe is awake already. */
	if (wake_pipe[1] >= 0 && write(wake_pipe[1], "", 1) < 0)
		errno = saved;
	errno = saved;
}

/* Only there to wake the supervisor's sigsuspend. */
static void
on_child(int sig)
{
	(void)sig;
}

/*
 * The supervisor keeps SIGTERM and SIGINT blocked except in sigsuspend (waitmask lets them
 * in); its senders let them in (sender_signals) and are woken by them through a pipe.
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
	sa.sa_flags = SA_RESTART;
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

/* A sender's: the wake pipe, then SIGTERM and SIGINT let in. 0, or -1. */
static int
sender_signals(void)
{
	sigset_t stops;
	int i;

	if (pipe(wake_pipe) != 0)
		return -1;
	for (i = 0; i < 2; i++)
		if (fcntl(wake_pipe[i], F_SETFL, O_NONBLOCK) != 0 ||
		    fcntl(wake_pipe[i], F_SETFD, FD_CLOEXEC) != 0)
			return -1;
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	return sigprocmask(SIG_UNBLOCK, &stops, NULL);
}

static bool
stop_asked(void)
{
	return stopping;
}

/* Milliseconds of the monotonic clock. */
static long long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Throws away what woke the sender. */
static void
drain_pipe(void)
{
	char buf[64];

	while (read(wake_pipe[0], buf, sizeof(buf)) > 0)
		;
}

/*
 * One sender: its own connection and requests in flight; the delivery loop until a stop
 * signal, then until what is in flight has finished and been recorded (webhook_timeout
 * bounds that, plus a few seconds for the database to answer). The sweeper (one sender of
 * the daemon) also runs the expiry sweep when it falls due, between claims.
 */
static int
sender(const struct config *cfg, bool sweeper)
{
	long long next_sweep = mono_ms(), give_up = 0;
	long wait_ms;
	struct webhook *w;
	char err[512];

	metrics_delivery_attach(cfg);
	if (sender_signals() != 0 || (w = webhook_new(cfg, err, sizeof(err))) == NULL) {
		log_msg(LOG_LVL_ERROR, NULL, "sender: %s", wake_pipe[0] < 0 ? strerror(errno) :
		    err);
		return 1;
	}
	for (;;) {
		if (stopping && give_up == 0)
			give_up = mono_ms() + (cfg->webhook_timeout + 5) * 1000;
		if (stopping && ((webhook_in_flight(w) == 0 && webhook_unrecorded(w) == 0) ||
		    mono_ms() > give_up))
			break;
		if (webhook_ready(w)) {
			if (sweeper && !stopping && mono_ms() >= next_sweep) {
				webhook_expire(webhook_db(w), stop_asked);
				next_sweep = mono_ms() + cfg->expire_interval * 1000;
			}
			webhook_drain(w);
			if (!stopping)
				webhook_claim(w);
		}
		webhook_run(w);
		wait_ms = cfg->webhook_poll_interval * 1000;
		if (sweeper && next_sweep - mono_ms() < wait_ms)
			wait_ms = next_sweep > mono_ms() ? (long)(next_sweep - mono_ms()) : 0;
		if (stopping)
			wait_ms = 100;
		webhook_wait(w, wake_pipe[0], wait_ms);
		drain_pipe();
	}
	if (webhook_in_flight(w) > 0 || webhook_unrecorded(w) > 0)
		log_msg(LOG_LVL_WARN, NULL, "stopping with %zu deliveries in flight and %zu not "
		    "recorded: their events are sent again when their leases end",
		    webhook_in_flight(w), webhook_unrecorded(w));
	webhook_free(w);
	return 0;
}

#define MAX_SENDERS 64

/* Forks a sender into slot i; the child never returns. */
static void
spawn(const struct config *cfg, pid_t *pids, long i)
{
	struct sigaction sa;
	pid_t pid = fork();

	if (pid == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGCHLD, &sa, NULL);
		_exit(sender(cfg, i == 0));
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
		spawn(cfg, pids, i);
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
				spawn(cfg, pids, i);
			}
	}
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (i = 0; i < n; i++)
		while (pids[i] > 0 && waitpid(pids[i], &status, 0) < 0 && errno == EINTR)
			;
}

/*
 * Each request in flight holds a socket: the soft limit on open files goes up to the hard
 * one, and what is still short is said.
 */
static void
raise_fd_limit(const struct config *cfg)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)cfg->webhook_max_in_flight + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < want)
		log_msg(LOG_LVL_WARN, NULL, "open files limited to %lu: fewer than "
		    "webhook_max_in_flight (%ld) deliveries can be in flight (LimitNOFILE=)",
		    (unsigned long)rl.rlim_cur, cfg->webhook_max_in_flight);
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
	static const struct option longopts[] = {
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct config cfg;
	const char *path = NULL;
	char err[512] = "cannot install signal handlers";
	sigset_t waitmask;
	int ch, verbose = 0, rc = 1;

	while ((ch = getopt_long(argc, argv, "c:vV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': path = optarg; break;
		case 'V': printf("marketpay-webhookd %s\n", PACKAGE_VERSION); exit(0);
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
	log_msg(LOG_LVL_INFO, NULL, "started: %ld senders of up to %ld deliveries in flight, %ld "
	    "per endpoint; poll every %lds, attempt timeout %lds, expiry sweep every %lds",
	    cfg.webhook_senders, cfg.webhook_max_in_flight, cfg.webhook_endpoint_in_flight,
	    cfg.webhook_poll_interval, cfg.webhook_timeout, cfg.expire_interval);
	if (cfg.webhook_allow_private)
		log_msg(LOG_LVL_WARN, NULL, "webhook_allow_private is on: webhooks may go to "
		    "loopback, private and other internal addresses");
	raise_fd_limit(&cfg);
	supervise(&cfg, &waitmask);
	log_msg(LOG_LVL_INFO, NULL, "stopping on signal");
	rc = 0;
out:
	config_free(&cfg);
	log_close();
	return rc;
}
