#ifndef MP_METRICS_H
#define MP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Counters shared by the processes of one program of one environment (a pool's workers,
 * the webhook daemon's senders): a file mapped into each of them, one slot per process,
 * written with relaxed atomic adds (no lock, no system call per update). A slot is an
 * array of nvalues uint64 counters whose meaning the program's schema defines
 * (metrics_worker.h, metrics_delivery.h). Slot 0 keeps the totals of processes that are
 * gone: a process taking a slot first adds every dead process's counters to it (under the
 * file's lock, which a reader takes too), so a restart never loses or doubles a count.
 */

/* The largest number of processes of one program with counters (more get none). */
#define METRICS_SLOTS 256

/*
 * The file of program ("fcgi", "webhookd") of environment env under dir, into out (size
 * outlen): dir/env-program.metrics. Returns out, or NULL when dir is "" (metrics off) or
 * the path does not fit.
 */
char *metrics_path(const char *dir, const char *env, const char *program, char *out,
    size_t outlen);

/* The latency histograms' upper bounds in microseconds; +Inf is the next bucket. */
#define METRICS_BUCKETS 11
extern const uint64_t metrics_bucket_us[METRICS_BUCKETS];

/* The same for what takes seconds to an hour (a webhook event's way to its endpoint). */
extern const uint64_t metrics_slow_bucket_us[METRICS_BUCKETS];

/* A histogram inside a slot: per-bucket (not cumulative) counts, +Inf last, then the sum. */
#define METRICS_HIST_LEN (METRICS_BUCKETS + 2)

/*
 * The groups a reader counts processes in (a pool's two sockets); a process stays in the
 * group it attached with.
 */
#define METRICS_GROUPS 2

/*
 * Maps file path (created 0640 when missing) and takes a slot for this process, holding
 * nvalues counters, in group group (< METRICS_GROUPS, else 0); a reader sees the slot with
 * its group from the start. Later metrics_add/metrics_observe calls of this process go there.
 * Returns 0, or -1 (errno set; the process then counts nothing, every call a no-op).
 */
int metrics_attach(const char *path, size_t nvalues, unsigned group);

/* Leaves the slot as it is (its counts stay, retired by the next process) and unmaps. */
void metrics_detach(void);

/* Adds n to counter i of this process's slot; a no-op when not attached. */
void metrics_add(size_t i, uint64_t n);

/* Counts one observation of us microseconds into the histogram at counter index hist. */
void metrics_observe(size_t hist, uint64_t us);

/* The same for a histogram with the upper bounds bounds (METRICS_BUCKETS of them). */
void metrics_observe_in(size_t hist, const uint64_t *bounds, uint64_t us);

/* Marks this process busy with a request (true) or waiting for one (false). */
void metrics_set_busy(bool busy);

/* The bucket of a histogram that us microseconds fall in (METRICS_BUCKETS: +Inf). */
size_t metrics_bucket(uint64_t us);

/* The same for the upper bounds bounds (METRICS_BUCKETS of them). */
size_t metrics_bucket_in(const uint64_t *bounds, uint64_t us);

/* What metrics_read found: the sums, and the processes alive with a slot, by group. */
struct metrics_sum {
	uint64_t *values;   /* nvalues counters summed over every slot, the retired ones too */
	unsigned live[METRICS_GROUPS];  /* processes alive with a slot */
	unsigned busy[METRICS_GROUPS];  /* of them, busy */
};

/*
 * Sums the file at path (nvalues counters per slot) into out->values (nvalues, zeroed
 * here). Returns 0, or -1 when the file is missing or of another layout (out zero).
 */
int metrics_read(const char *path, size_t nvalues, struct metrics_sum *out);

#endif
