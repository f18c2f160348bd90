#ifndef MP_FCGI_H
#define MP_FCGI_H

#include "req.h"

/* The FastCGI side of a worker: the only module that sees libfcgi. */
struct fcgi;

/* Initialises libfcgi on the inherited listening socket (fd 0). NULL on failure. */
struct fcgi *fcgi_new(void);

/* Frees f (NULL is fine). */
void fcgi_free(struct fcgi *f);

/*
 * Waits for the next request. Returns 0, or -1 when the worker should exit (shutdown
 * requested by a signal, or the listening socket failed).
 */
int fcgi_accept(struct fcgi *f);

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

/* Async-signal-safe: asks the accept loop to stop after the request in hand. */
void fcgi_shutdown(void);

#endif
