#ifndef MP_FCGI_H
#define MP_FCGI_H

#include <signal.h>

#include "req.h"

/* The FastCGI side of a worker: the only module that sees libfcgi. */
struct fcgi;

/*
 * Initialises libfcgi on the inherited listening socket (fd 0), and makes that socket
 * non-blocking. NULL on failure.
 */
struct fcgi *fcgi_new(void);

/* Frees f (NULL is fine). */
void fcgi_free(struct fcgi *f);

/*
 * Takes the next request, waiting for one with the signal mask waitmask (and only there:
 * the caller keeps its stop signals blocked otherwise). Returns 1 with a request in hand, 0
 * when a signal ended the wait, or -1 when the listening socket failed.
 */
int fcgi_accept(struct fcgi *f, const sigset_t *waitmask);

/*
 * Copies the accepted request into a new struct req, reading at most max_body bytes of
 * body. Returns NULL on ENOMEM. The caller frees with req_free.
 */
struct req *fcgi_read(struct fcgi *f, long max_body);

/*
 * Writes req's response (status, headers, body) and ends the request. Adds Cache-Control:
 * no-store and X-Content-Type-Options: nosniff unless req has its own. A streamed response
 * (req_stream_begin: req's sink is this request's output) is written already: it only ends,
 * or with req->cut (req_stream_cut) the connection is cut instead, so that nginx does not
 * end the client's body either.
 */
void fcgi_finish(struct fcgi *f, const struct req *req);

#endif
