/*
 * Which merchants' endpoints have a backlog, so that a claim after their deliveries are
 * recorded need not wait out the gap between claims.
 */
#ifndef MP_WEBHOOK_BACKLOG_H
#define MP_WEBHOOK_BACKLOG_H

#include <stdbool.h>
#include <stddef.h>

#define WEBHOOK_BACKLOG_MAX 200 /* merchants remembered between a record and a claim */

struct webhook_backlog {
	long long merchant[WEBHOOK_BACKLOG_MAX]; /* recorded since the last claim */
	size_t n;
};

/* A delivery claimed from merchant's backlog was recorded: the next claim may go at once. */
void webhook_backlog_recorded(struct webhook_backlog *b, long long merchant);

/* Whether a delivery from a backlog was recorded since the last claim. */
bool webhook_backlog_pending(const struct webhook_backlog *b);

/*
 * After a claim of n events of merchant[0..n-1]: sets from_backlog[i] when event i's
 * merchant has a backlog, that is when this claim took its endpoint's whole in-flight
 * limit (per events) or when it is a merchant recorded since the last claim that got more.
 * Then forgets the merchants recorded.
 */
void webhook_backlog_claimed(struct webhook_backlog *b, const long long *merchant, size_t n,
    long per, bool *from_backlog);

#endif
