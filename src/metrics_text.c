/* Prometheus's text exposition format into a growing buffer. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "metrics_text.h"

static void
append(struct metrics_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
append(struct metrics_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *grown;

	for (;;) {
		if (t->failed)
			return;
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt,
		    ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if (t->buf != NULL && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		t->cap = (t->cap + (size_t)n + 1) * 2;
		if ((grown = realloc(t->buf, t->cap)) == NULL) {
			t->failed = true;
			return;
		}
		t->buf = grown;
	}
}

void
metrics_text_family(struct metrics_text *t, const char *name, const char *type,
    const char *help)
{
	append(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* {labels} or nothing. */
static void
labelset(struct metrics_text *t, const char *labels, const char *more)
{
	if (labels[0] == '\0' && more[0] == '\0')
		return;
	append(t, "{%s%s%s}", labels, labels[0] != '\0' && more[0] != '\0' ? "," : "", more);
}

void
metrics_text_value(struct metrics_text *t, const char *name, const char *labels, uint64_t v)
{
	append(t, "%s", name);
	labelset(t, labels, "");
	append(t, " %" PRIu64 "\n", v);
}

void
metrics_text_seconds(struct metrics_text *t, const char *name, const char *labels,
    uint64_t us)
{
	append(t, "%s", name);
	labelset(t, labels, "");
	append(t, " %" PRIu64 ".%06" PRIu64 "\n", us / 1000000, us % 1000000);
}

void
metrics_text_histogram(struct metrics_text *t, const char *name, const char *labels,
    const uint64_t *hist)
{
	metrics_text_histogram_in(t, name, labels, hist, metrics_bucket_us);
}

void
metrics_text_histogram_in(struct metrics_text *t, const char *name, const char *labels,
    const uint64_t *hist, const uint64_t *bounds)
{
	char le[48];
	uint64_t cum = 0, b;
	size_t i;

	for (i = 0; i <= METRICS_BUCKETS; i++) {
		cum += hist[i];
		if (i < METRICS_BUCKETS) {
			b = bounds[i];
			snprintf(le, sizeof(le), "le=\"%" PRIu64 ".%06" PRIu64 "\"", b / 1000000,
			    b % 1000000);
		} else
			snprintf(le, sizeof(le), "le=\"+Inf\"");
		append(t, "%s_bucket", name);
		labelset(t, labels, le);
		append(t, " %" PRIu64 "\n", cum);
	}
	append(t, "%s_sum", name);
	labelset(t, labels, "");
	b = hist[METRICS_BUCKETS + 1];
	append(t, " %" PRIu64 ".%06" PRIu64 "\n", b / 1000000, b % 1000000);
	append(t, "%s_count", name);
	labelset(t, labels, "");
	append(t, " %" PRIu64 "\n", cum);
}

char *
metrics_text_label(char *out, size_t outlen, const char *name, const char *value)
{
	size_t n = strlen(out), start = n;
	const char *p;

#define PUT(c) do { if (n + 1 >= outlen) goto full; out[n++] = (c); } while (0)
	if (n > 0)
		PUT(',');
	for (p = name; *p != '\0'; p++)
		PUT(*p);
	PUT('=');
	PUT('"');
	for (p = value; *p != '\0'; p++) {
		if (*p == '\\' || *p == '"')
			PUT('\\');
		if (*p == '\n') {
			PUT('\\');
			PUT('n');
		} else
			PUT(*p);
	}
	PUT('"');
#undef PUT
	out[n] = '\0';
	return out;
full:
	if (start + 1 < outlen) {
		out[start] = '!';
		out[start + 1] = '\0';
	}
	return out;
}
