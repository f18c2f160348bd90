#ifndef MP_POOL_H
#define MP_POOL_H

/*
 * A pool of FastCGI workers on one listening socket, supervised by the calling process
 * (marketpay-fcgi --workers N): the socket systemd's socket unit holds stays open across
 * restarts and reloads, so no connection is ever refused.
 */

/* What the pool runs. */
struct pool_hooks {
	/*
	 * Loads the configuration anew (at start and at each SIGHUP) and opens the log it names.
	 * Returns 0, or -1 with the reason logged: the pool then keeps the workers it has.
	 */
	int (*load)(void *ctx);
	/* Runs one worker in a child process; returns its exit status. */
	int (*worker)(void *ctx);
	void *ctx;
};

/*
 * Takes a socket passed by systemd (LISTEN_PID is this process, LISTEN_FDS=1: fd 3) onto
 * fd 0, where libfcgi accepts, and unsets LISTEN_*. Without LISTEN_PID nothing changes
 * (spawn-fcgi put the socket on fd 0). Returns 0, or -1 when LISTEN_FDS is not 1 or fd 0
 * is then no listening socket.
 */
int pool_adopt_socket(void);

/*
 * Runs nworkers workers until SIGTERM, SIGINT or SIGQUIT, which each worker gets to finish
 * the request in hand; then returns 0. A worker that dies is started again (after a second
 * when it lived less than one). SIGHUP reloads: hooks->load, then nworkers new workers,
 * then SIGTERM to the old ones, which finish the request in hand and exit; the socket is
 * never closed. Returns 1 when the first load fails.
 */
int pool_run(int nworkers, const struct pool_hooks *hooks);

#endif
