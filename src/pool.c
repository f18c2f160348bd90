/* The supervisor of marketpay-fcgi --workers N: start, respawn, reload and stop workers. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pool.h"

/* What the pool takes synchronously (sigtimedwait); a worker starts with their defaults. */
static const int pool_signals[] = {
	SIGCHLD, SIGHUP, SIGTERM, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2,
};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct worker {
	pid_t pid;		/* 0: a free slot */
	unsigned gen;		/* the reload that started it */
	time_t started;		/* CLOCK_MONOTONIC seconds */
	int reads;		/* 1: accepts on the reads socket */
};

struct pool {
	struct worker *w;
	size_t cap;
	unsigned gen;		/* the workers of this generation serve; older ones drain */
	struct pool_size size;
	int stopping;
	time_t respawn_at;	/* no worker is started before this (a crash loop's pause) */
	const struct pool_hooks *hooks;
};

static time_t
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* Whether fd is a listening socket. */
static int
listening(int fd)
{
	int accepting = 0;
	socklen_t len = sizeof(accepting);

	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) == 0 && accepting;
}

int
pool_adopt_socket(int *reads_fd)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");

	*reads_fd = -1;
	if (pid != NULL && strtol(pid, NULL, 10) == (long)getpid()) {
		if (fds == NULL || (strcmp(fds, "1") != 0 && strcmp(fds, "2") != 0) ||
		    dup2(3, 0) < 0)
			return -1;
		close(3);
		if (strcmp(fds, "2") == 0) {
			if (!listening(4))
				return -1;
			*reads_fd = 4;
		}
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_FDNAMES");
	}
	/* Blocking or not, as passed: each worker makes it non-blocking (fcgi_new). */
	return listening(0) ? 0 : -1;
}

static struct worker *
free_slot(struct pool *p)
{
	struct worker *w;
	size_t i;

	for (i = 0; i < p->cap; i++)
		if (p->w[i].pid == 0)
			return &p->w[i];
	if ((w = realloc(p->w, (p->cap + 8) * sizeof(*w))) == NULL)
		return NULL;
	memset(w + p->cap, 0, 8 * sizeof(*w));
	p->w = w;
	p->cap += 8;
	return &p->w[p->cap - 8];
}

/* Exchanges what fds a and b refer to; 0, or -1. */
static int
swap_fds(int a, int b)
{
	int t = dup(a);

	if (t < 0 || dup2(b, a) < 0 || dup2(t, b) < 0) {
		if (t >= 0)
			close(t);
		return -1;
	}
	close(t);
	return 0;
}

static int
spawn(struct pool *p, int reads)
{
	struct worker *w = free_slot(p);
	sigset_t none;
	size_t i;
	pid_t pid;

	if (w == NULL || (pid = fork()) < 0) {
		log_msg(LOG_LVL_ERROR, NULL, "pool: cannot start a worker: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* The worker sets its own signal handling and opens its own log. */
		for (i = 0; i < NELEM(pool_signals); i++)
			signal(pool_signals[i], SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		log_close();
		/*
		 * Each accepts on fd 0: a reads worker swaps the two sockets, and either keeps the
		 * other at reads_fd, only to report its queue.
		 */
		if (reads && swap_fds(0, p->size.reads_fd) != 0)
			_exit(1);
		exit(p->hooks->worker(p->hooks->ctx, reads, p->size.reads_fd));
	}
	w->pid = pid;
	w->reads = reads;
	w->gen = p->gen;
	w->started = now_s();
	return 0;
}

/* The workers alive: all of them, or those of this generation on one socket. */
static int
count(const struct pool *p, int current_only, int reads)
{
	size_t i;
	int n = 0;

	for (i = 0; i < p->cap; i++)
		if (p->w[i].pid != 0 && (!current_only ||
		    (p->w[i].gen == p->gen && p->w[i].reads == reads)))
			n++;
	return n;
}

/* Starts the workers missing from this generation; -1 when one cannot be started. */
static int
fill(struct pool *p)
{
	while (count(p, 1, 0) < p->size.workers)
		if (spawn(p, 0) != 0)
			return -1;
	while (count(p, 1, 1) < p->size.read_workers)
		if (spawn(p, 1) != 0)
			return -1;
	return 0;
}

static void
signal_workers(struct pool *p, int all)
{
	size_t i;

	for (i = 0; i < p->cap; i++)
		if (p->w[i].pid != 0 && (all || p->w[i].gen != p->gen))
			kill(p->w[i].pid, SIGTERM);
}

/* Collects the workers that exited; one that was not asked to is logged, with how. */
static void
reap(struct pool *p)
{
	struct worker *w;
	pid_t pid;
	size_t i;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (i = 0, w = NULL; i < p->cap && w == NULL; i++)
			if (p->w[i].pid == pid)
				w = &p->w[i];
		if (w == NULL)
			continue;
		w->pid = 0;
		if (p->stopping || w->gen != p->gen)
			continue;
		if (WIFSIGNALED(st))
			log_msg(LOG_LVL_WARN, NULL, "pool: worker pid=%ld killed by signal %d; "
			    "starting another", (long)pid, WTERMSIG(st));
		else
			log_msg(LOG_LVL_WARN, NULL, "pool: worker pid=%ld exited with status %d; "
			    "starting another", (long)pid, WEXITSTATUS(st));
		/* A worker that cannot even start would otherwise be forked in a tight loop. */
		if (now_s() - w->started < 1)
			p->respawn_at = now_s() + 1;
	}
}

static void
reload(struct pool *p)
{
	if (p->hooks->load(p->hooks->ctx) != 0) {
		log_msg(LOG_LVL_ERROR, NULL, "pool: reload refused (configuration above); the "
		    "workers keep serving with the one they have");
		return;
	}
	p->gen++;
	fill(p);
	/* The new workers accept on the same sockets already; the old finish and exit. */
	signal_workers(p, 0);
	log_msg(LOG_LVL_INFO, NULL, "pool: reloaded: %d new workers; the old ones finish the "
	    "request in hand and exit", p->size.workers + p->size.read_workers);
}

int
pool_run(const struct pool_size *size, const struct pool_hooks *hooks)
{
	struct pool p = { .size = *size, .hooks = hooks };
	struct timespec tick = { 0, 200 * 1000 * 1000 };
	sigset_t set;
	size_t i;
	int sig;

	if (hooks->load(hooks->ctx) != 0)
		return 1;
	/* Taken synchronously below, never by a handler. */
	sigemptyset(&set);
	for (i = 0; i < NELEM(pool_signals); i++)
		sigaddset(&set, pool_signals[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (p.size.reads_fd < 0)
		p.size.read_workers = 0;
	log_msg(LOG_LVL_INFO, NULL, "pool: %d workers, %d on the reads socket; SIGHUP reloads, "
	    "SIGTERM stops", p.size.workers, p.size.read_workers);
	for (;;) {
		reap(&p);
		if (p.stopping && count(&p, 0, 0) == 0)
			break;
		if (!p.stopping && now_s() >= p.respawn_at && fill(&p) != 0)
			p.respawn_at = now_s() + 1;
		sig = sigtimedwait(&set, NULL, &tick);
		if (sig == SIGHUP && !p.stopping)
			reload(&p);
		else if (sig == SIGTERM || sig == SIGINT || sig == SIGQUIT) {
			if (!p.stopping)
				log_msg(LOG_LVL_INFO, NULL, "pool: stopping; each worker finishes the "
				    "request in hand");
			p.stopping = 1;
			signal_workers(&p, 1);
		} else if (sig == SIGUSR1 || sig == SIGUSR2)
			log_msg(LOG_LVL_WARN, NULL, "pool: signal %d ignored (SIGHUP reloads, "
			    "SIGTERM stops)", sig);
	}
	log_msg(LOG_LVL_INFO, NULL, "pool: stopped");
	free(p.w);
	return 0;
}
