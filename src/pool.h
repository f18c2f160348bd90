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
	/*
	 * Runs one worker in a child process, accepting on fd 0; returns its exit status.
	 * reads is 1 for a worker of the reads socket (fd 0 is then that socket); other is the
	 * pool's other socket, open for its figures (never accepted on), or -1.
	 */
	int (*worker)(void *ctx, int reads, int other);
	void *ctx;
};

/*
 * Takes the sockets passed by systemd (LISTEN_PID is this process; LISTEN_FDS=1: fd 3, or
 * 2: fds 3 and 4) and unsets LISTEN_*: fd 3, the socket of every request, goes onto fd 0,
 * where libfcgi accepts; fd 4, the socket nginx passes reads to (GET and HEAD), stays and
 * is stored in *reads_fd. Without LISTEN_PID nothing changes (spawn-fcgi put the socket on
 * fd 0) and *reads_fd is -1, as with LISTEN_FDS=1. Returns 0, or -1 when LISTEN_FDS is
 * neither 1 nor 2 or a socket is no listening socket.
 */
int pool_adopt_socket(int *reads_fd);

/* How many workers accept on which socket. */
struct pool_size {
	int workers;		/* on fd 0: every request */
	int read_workers;	/* on reads_fd; 0 when reads_fd is -1 */
	int reads_fd;
};

/*
 * Runs size->workers workers on fd 0 and size->read_workers on size->reads_fd until
 * SIGTERM, SIGINT or SIGQUIT, which each worker gets to finish the request in hand; then
 * returns 0. A worker that dies is started again on its socket (after a second when it
 * lived less than one). SIGHUP reloads: hooks->load, then as many new workers, then
 * SIGTERM to the old ones, which finish the request in hand and exit; no socket is ever
 * closed. Returns 1 when the first load fails.
 */
int pool_run(const struct pool_size *size, const struct pool_hooks *hooks);

#endif
