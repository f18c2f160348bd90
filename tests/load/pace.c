/* Open-loop pacing for mpload -q: a fixed schedule shared by the threads. */
#include <time.h>

#include "pace.h"

void
pace_init(struct pace *p, double start, double rate)
{
	p->start = start;
	p->rate = rate;
	atomic_init(&p->next, 0);
}

double
pace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double
pace_take(struct pace *p)
{
	unsigned long long k = atomic_fetch_add(&p->next, 1);

	return p->start + (double)k / p->rate;
}

uint64_t
pace_due_count(const struct pace *p, double secs)
{
	double x = secs * p->rate;
	uint64_t n;

	/* k is due before start + secs when k < x: ceil(x) of them. */
	if (x <= 0)
		return 0;
	n = (uint64_t)x;
	return (double)n < x ? n + 1 : n;
}

int
pace_wait(double due, volatile sig_atomic_t *stop)
{
	struct timespec ts;
	double now, until;

	while (!*stop) {
		now = pace_now();
		if (now >= due)
			return 0;
		until = due - now > 0.1 ? now + 0.1 : due;
		ts.tv_sec = (time_t)until;
		ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_nsec = 999999999L;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return -1;
}
