#ifndef MPLOAD_JOURNAL_H
#define MPLOAD_JOURNAL_H

#include <stdint.h>

/*
 * The journal: one line per request, tab-separated, "-" for an empty field, in this order:
 *   start_ms   Unix time in milliseconds when the request was sent; with mpload -q, for the
 *              first request of an operation, when it was due (lag_us before it was sent)
 *   kind       create, page, pay, transfer
 *   status     HTTP status; 0 when no answer came (transport error)
 *   lat_us     microseconds from start_ms until the whole answer was in
 *   try        1 for the first attempt, 2 for the first retry, ...
 *   key        the Idempotency-Key sent
 *   ids        create, page, pay: the session id; transfer: the reply's tr_ ids, comma-separated
 *   amount     minor units: the session's total, or the transfer's
 *   request_id the Request-Id header of the answer
 *   note       pay: paid (303 to the success URL), failed (303 elsewhere), already_paid,
 *              form (the page again); transfer: replayed; no answer: curl's error code
 *   lag_us     mpload -q, the first request of an operation: microseconds it was sent after
 *              it was due (all connections busy, or the machine slow to wake the thread)
 * Lines are written whole under a lock and flushed, so a reader never sees half a line.
 */
struct journal_line {
	int64_t start_ms;
	const char *kind;
	long status;
	uint64_t lat_us;
	int attempt;
	const char *key, *ids, *request_id, *note;
	int64_t amount;   /* < 0: none */
	int64_t lag_us;   /* < 0: none */
};

/* Opens path for appending (NULL or "-": no journal). Returns 0, or -1 with errno set. */
int journal_open(const char *path);

/* Writes one line; does nothing when no journal is open. Thread-safe. */
void journal_write(const struct journal_line *l);

/* Flushes and closes it. */
void journal_close(void);

#endif
