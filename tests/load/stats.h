#ifndef MPLOAD_STATS_H
#define MPLOAD_STATS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* The kinds of request mpload sends; each is counted and timed on its own. */
enum stats_kind {
	STATS_CREATE,     /* POST /api/v1/payment/create-session */
	STATS_PAGE,       /* GET /checkout/{id} */
	STATS_PAY,        /* POST /checkout/{id}: the payment form */
	STATS_TRANSFER,   /* POST /api/v1/payment/send-money-MultiVendor */
	STATS__MAX
};

/* The operations of the mix; one operation sends one or more requests. */
enum stats_op {
	STATS_OP_CREATE,    /* create-session alone */
	STATS_OP_PAY,       /* create-session, the page, the form */
	STATS_OP_TRANSFER,  /* one transfer, retried with the same body and key */
	STATS_OP__MAX
};

#define STATS_STATUS_MAX 600   /* HTTP statuses 0..599; 0 = no answer (transport error) */

/*
 * What one thread saw. Every latency is kept (not a histogram) so that percentiles are
 * exact; threads fill their own and stats_merge adds them up at the end, so no lock.
 */
struct stats {
	uint64_t count[STATS__MAX][STATS_STATUS_MAX];
	uint32_t *lat[STATS__MAX];      /* microseconds of every answered request */
	size_t nlat[STATS__MAX], cap[STATS__MAX];
	uint64_t ops_ok[STATS_OP__MAX];     /* operations that reached their goal */
	uint64_t ops_failed[STATS_OP__MAX]; /* refused, or gave up after the retry budget */
	uint64_t retries[STATS_OP__MAX];    /* requests sent again after a retriable failure */
	uint64_t paced;       /* mpload -q: operations sent on the schedule */
	uint64_t late;        /* ... of which more than PACE_LATE_US after they were due */
	uint64_t max_lag_us;  /* the most one was late */
};

/* Name of a kind or an operation ("create", "pay", ...); never NULL. */
const char *stats_kind_name(enum stats_kind k);
const char *stats_op_name(enum stats_op o);

/* Counts one request; status 0 = no answer (its latency is not kept). Returns 0, or -1 when
 * the sample could not be stored (out of memory: the count is kept anyway). */
int stats_add(struct stats *s, enum stats_kind k, long status, uint64_t lat_us);

/* Adds src into dst (src is left as it is). Returns 0, or -1 out of memory. */
int stats_merge(struct stats *dst, const struct stats *src);

/* Frees the samples; s can be reused after a memset. */
void stats_free(struct stats *s);

/*
 * Prints the summary of a run of secs seconds to f: one "key=value ..." line per kind and
 * per operation, then a total line. Sorts the samples in place.
 */
void stats_print(struct stats *s, double secs, int conns, FILE *f);

#endif
