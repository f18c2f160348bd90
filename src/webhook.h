#ifndef MP_WEBHOOK_H
#define MP_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/*
 * The delivery side of the webhook outbox, for marketpay-webhookd: one database handle (db.h)
 * with the daemon's statements (webhook_sql.h), listening on marketpay_webhooks, and one HTTP
 * client. Each
 * event is claimed, POSTed and recorded in one transaction of its own (see
 * webhook_deliver_next).
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
 * Claims the oldest due event nobody else holds and makes one delivery attempt: sign, POST,
 * record the attempt, then mark the event delivered, due again later, or dead, all in one
 * transaction that holds the event's row lock throughout. Returns 1 after an attempt, 0
 * when nothing is due, -1 on a database failure (the transaction is rolled back, so the
 * event stays due; a lost connection is dropped for webhook_ready to re-open).
 */
int webhook_deliver_next(struct webhook *w);

/*
 * Reads what the server sent and throws the notifications away. Returns how many there
 * were (each may be an event to deliver), or -1 when the connection turned out lost (the
 * next webhook_ready says so and re-opens it; webhook_wait_ms does not wait for that).
 */
int webhook_drain(struct webhook *w);

/* The database handle of w, for the expiry sweep (webhook_expire.h). */
struct db *webhook_db(struct webhook *w);

/* The connection's socket to wait on for notifications, or -1 when not connected. */
int webhook_socket(const struct webhook *w);

/*
 * How long to wait, at most max_ms: until the next reconnection try when not connected,
 * else until the next retry falls due as the last empty scan saw it.
 */
long webhook_wait_ms(const struct webhook *w, long max_ms);

#endif
