#ifndef MP_METRICS_TEXT_H
#define MP_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Prometheus's text exposition format (version 0.0.4), written into a growing buffer.
 * labels arguments are a label set's inside, already escaped (metrics_text_label), such as
 * `route="/api/v1/health",code="200"`, or "" for none. Integers only: a time is kept in
 * microseconds and written as seconds with six decimals, never through a double.
 */
struct metrics_text {
	char *buf;      /* NUL-terminated; the caller frees it */
	size_t len, cap;
	bool failed;    /* out of memory: buf is incomplete */
};

/* # HELP and # TYPE lines of a family; type is "counter", "gauge" or "histogram". */
void metrics_text_family(struct metrics_text *t, const char *name, const char *type,
    const char *help);

/* name{labels} v */
void metrics_text_value(struct metrics_text *t, const char *name, const char *labels,
    uint64_t v);

/* name{labels} followed by us as seconds (6 decimals). */
void metrics_text_seconds(struct metrics_text *t, const char *name, const char *labels,
    uint64_t us);

/*
 * A histogram's samples from METRICS_HIST_LEN counters (metrics.h: per-bucket counts, +Inf,
 * the sum in microseconds): name_bucket{labels,le=...} cumulative, name_sum, name_count.
 */
void metrics_text_histogram(struct metrics_text *t, const char *name, const char *labels,
    const uint64_t *hist);

/* The same with the upper bounds bounds (METRICS_BUCKETS of them, in microseconds). */
void metrics_text_histogram_in(struct metrics_text *t, const char *name, const char *labels,
    const uint64_t *hist, const uint64_t *bounds);

/*
 * Appends name="value" to the label set in out (size outlen, "" to start), value escaped
 * as the format wants (backslash, double quote, newline). Returns out; a label that does
 * not fit is left out and out ends with "!" so a test sees it.
 */
char *metrics_text_label(char *out, size_t outlen, const char *name, const char *value);

#endif
