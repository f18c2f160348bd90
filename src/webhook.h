#ifndef MP_WEBHOOK_H
#define MP_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/*
 * The delivery side of the webhook outbox, for one sender of marketpay-webhookd: one
 * database handle (db.h) with the daemon's statements (webhook_sql.h), listening on
 * marketpay_webhooks, and many HTTP requests in flight at once (webhook_post.h). Events are
 * leased in batches (webhook_claim), sent, and their attempts recorded in batches as they
 * finish (webhook_run); no transaction stays open while a request is in flight.
 */
struct webhook;

/*
 * A deliverer for cfg (the struct must outlive it): parses the retry schedule, reads the
 * secrets key file and sets up libcurl; it connects later, in webhook_ready. Returns NULL
 * with the reason in err. Free with webhook_free.
 */
struct webhook *webhook_new(const struct config *cfg, char *err, size_t errlen);

/* Closes the connection and frees w (NULL is fine). */
void webhook_free(struct webhook *w);

/* What webhook_new would refuse (schedule, key file, libcurl), checked once: 0 or -1. */
int webhook_check(const struct config *cfg, char *err, size_t errlen);

/*
 * True when the connection is up, prepared and listening. A broken or missing connection is
 * re-opened at most once per back-off interval (100 ms doubling to 5 s); false meanwhile.
 */
bool webhook_ready(struct webhook *w);

/*
 * Leases due events (fairly across merchants, within each endpoint's in-flight limit and
 * breaker, as many as webhook_max_in_flight leaves room for) and starts their deliveries,
 * unless it is not yet time to look again: after an empty claim, not before the next event
 * or breaker falls due or webhook_poll_interval passes, unless a notification, a finished
 * delivery or webhook_wake says otherwise. Returns how many started, or -1 on a database
 * failure.
 */
int webhook_claim(struct webhook *w);

/* Makes the next webhook_claim look at once. */
void webhook_wake(struct webhook *w);

/*
 * Moves the requests in flight on, without waiting, and records those that finished (the
 * attempt, then the event delivered, due again later, or dead; the endpoint's breaker), in
 * one statement. Attempts not recorded because the database is away are kept and recorded
 * by a later call. Returns how many requests finished.
 */
int webhook_run(struct webhook *w);

/* Requests in flight; finished attempts not recorded yet. */
size_t webhook_in_flight(const struct webhook *w);
size_t webhook_unrecorded(const struct webhook *w);

/*
 * Reads what the server sent and throws the notifications away. Returns how many there
 * were (each may be an event to deliver), or -1 when the connection turned out lost (the
 * next webhook_ready says so and re-opens it). Notifications make the next claim look at once.
 */
int webhook_drain(struct webhook *w);

/* The database handle of w, for the expiry sweep (webhook_expire.h). */
struct db *webhook_db(struct webhook *w);

/*
 * Waits at most max_ms for something to do: a request in flight moving, a notification,
 * wake_fd readable, the next claim or reconnection falling due. 0, or -1.
 */
int webhook_wait(struct webhook *w, int wake_fd, long max_ms);

#endif
