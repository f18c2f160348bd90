/* Counts and exact latency percentiles of the requests mpload sent. */
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static const char *const kind_names[STATS__MAX] = {
	"create",     /* STATS_CREATE */
	"page",       /* STATS_PAGE */
	"pay",        /* STATS_PAY */
	"transfer",   /* STATS_TRANSFER */
};

static const char *const op_names[STATS_OP__MAX] = {
	"create",     /* STATS_OP_CREATE */
	"pay",        /* STATS_OP_PAY */
	"transfer",   /* STATS_OP_TRANSFER */
};

const char *
stats_kind_name(enum stats_kind k)
{
	return k < STATS__MAX ? kind_names[k] : "?";
}

const char *
stats_op_name(enum stats_op o)
{
	return o < STATS_OP__MAX ? op_names[o] : "?";
}

static int
push(struct stats *s, enum stats_kind k, uint32_t v)
{
	uint32_t *p;
	size_t cap;

	if (s->nlat[k] == s->cap[k]) {
		cap = s->cap[k] ? s->cap[k] * 2 : 4096;
		if ((p = realloc(s->lat[k], cap * sizeof(*p))) == NULL)
			return -1;
		s->lat[k] = p;
		s->cap[k] = cap;
	}
	s->lat[k][s->nlat[k]++] = v;
	return 0;
}

int
stats_add(struct stats *s, enum stats_kind k, long status, uint64_t lat_us)
{
	if (status < 0 || status >= STATS_STATUS_MAX)
		status = 0;
	s->count[k][status]++;
	if (status == 0)
		return 0;
	return push(s, k, lat_us > UINT32_MAX ? UINT32_MAX : (uint32_t)lat_us);
}

int
stats_merge(struct stats *dst, const struct stats *src)
{
	int k, i, rc = 0;
	size_t j;

	for (k = 0; k < STATS__MAX; k++) {
		for (i = 0; i < STATS_STATUS_MAX; i++)
			dst->count[k][i] += src->count[k][i];
		for (j = 0; j < src->nlat[k]; j++)
			if (push(dst, (enum stats_kind)k, src->lat[k][j]) != 0)
				rc = -1;
	}
	for (k = 0; k < STATS_OP__MAX; k++) {
		dst->ops_ok[k] += src->ops_ok[k];
		dst->ops_failed[k] += src->ops_failed[k];
		dst->retries[k] += src->retries[k];
	}
	dst->paced += src->paced;
	dst->late += src->late;
	if (src->max_lag_us > dst->max_lag_us)
		dst->max_lag_us = src->max_lag_us;
	return rc;
}

void
stats_free(struct stats *s)
{
	int k;

	for (k = 0; k < STATS__MAX; k++) {
		free(s->lat[k]);
		s->lat[k] = NULL;
		s->nlat[k] = s->cap[k] = 0;
	}
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile q (0..1] of n sorted samples: the smallest value with at
 * least q of the samples at or below it. */
static uint32_t
rank(const uint32_t *v, size_t n, double q)
{
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t)(q * (double)n + 0.999999999);
	if (i < 1)
		i = 1;
	return v[(i > n ? n : i) - 1];
}

void
stats_print(struct stats *s, double secs, int conns, FILE *f)
{
	uint64_t total = 0, n, err;
	double mean;
	int k, i;
	size_t j;

	if (secs <= 0)
		secs = 1e-9;
	for (k = 0; k < STATS__MAX; k++) {
		n = 0;
		for (i = 0; i < STATS_STATUS_MAX; i++)
			n += s->count[k][i];
		if (n == 0)
			continue;
		total += n;
		err = s->count[k][0];
		qsort(s->lat[k], s->nlat[k], sizeof(uint32_t), cmp_u32);
		mean = 0;
		for (j = 0; j < s->nlat[k]; j++)
			mean += s->lat[k][j];
		mean = s->nlat[k] ? mean / (double)s->nlat[k] : 0;
		fprintf(f, "kind=%s n=%llu rps=%.1f", kind_names[k], (unsigned long long)n,
		    (double)n / secs);
		for (i = 1; i < STATS_STATUS_MAX; i++)
			if (s->count[k][i] != 0)
				fprintf(f, " s%d=%llu", i, (unsigned long long)s->count[k][i]);
		fprintf(f, " transport_errors=%llu mean_us=%.0f p50_us=%u p99_us=%u p999_us=%u"
		    " max_us=%u\n", (unsigned long long)err, mean,
		    rank(s->lat[k], s->nlat[k], 0.50), rank(s->lat[k], s->nlat[k], 0.99),
		    rank(s->lat[k], s->nlat[k], 0.999), s->nlat[k] ? s->lat[k][s->nlat[k] - 1] : 0);
	}
	for (k = 0; k < STATS_OP__MAX; k++) {
		if (s->ops_ok[k] + s->ops_failed[k] == 0)
			continue;
		fprintf(f, "op=%s ok=%llu failed=%llu retries=%llu ops_per_s=%.1f\n", op_names[k],
		    (unsigned long long)s->ops_ok[k], (unsigned long long)s->ops_failed[k],
		    (unsigned long long)s->retries[k],
		    (double)(s->ops_ok[k] + s->ops_failed[k]) / secs);
	}
	fprintf(f, "total requests=%llu seconds=%.2f conns=%d rps=%.1f\n",
	    (unsigned long long)total, secs, conns, (double)total / secs);
}
