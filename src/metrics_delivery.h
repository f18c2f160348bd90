#ifndef MP_METRICS_DELIVERY_H
#define MP_METRICS_DELIVERY_H

#include "config.h"
#include "metrics.h"
#include "metrics_text.h"

/* marketpay-webhookd's counters (one slot per sender), in its metrics file. */
enum metrics_delivery {
	MD_DELIVERED,       /* attempts that delivered their event */
	MD_RETRY,           /* attempts that failed, the event to be tried again */
	MD_DEAD,            /* attempts that failed for the last time: the event is dead */
	MD_DB_RECONNECTS,   /* database connections made again after one was lost */
	MD_ATTEMPT_HIST,    /* a histogram (METRICS_HIST_LEN): each attempt's duration */
	/* a histogram (METRICS_HIST_LEN, metrics_slow_bucket_us): event created to delivered */
	MD_LATENCY_HIST = MD_ATTEMPT_HIST + METRICS_HIST_LEN,
	MD__MAX = MD_LATENCY_HIST + METRICS_HIST_LEN
};

/* Takes this sender's slot in metrics_dir/ENV-webhookd.metrics (logs why not). */
void metrics_delivery_attach(const struct config *cfg);

/* Counts one finished attempt: result "delivered", "retry" or "dead", and its duration. */
void metrics_delivery_done(const char *result, long duration_ms);

/* Counts one event delivered latency_ms after it was created. */
void metrics_delivery_latency(long long latency_ms);

/*
 * Writes the families of the daemon's counters v (MD__MAX of them, summed) and how many
 * senders are alive to t.
 */
void metrics_delivery_text(struct metrics_text *t, const uint64_t *v, unsigned senders);

#endif
