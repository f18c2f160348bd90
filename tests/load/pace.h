#ifndef MPLOAD_PACE_H
#define MPLOAD_PACE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

/* An operation sent more than this long after its scheduled time is counted late. */
#define PACE_LATE_US 10000

/*
 * Open-loop pacing (mpload -q): operation k of the run, over all connections, is due at
 * start + k / rate, whatever the answers before it took, so a slow answer does not lower
 * the offered rate; each thread takes the next k when it is free. Shared by the threads.
 */
struct pace {
	double start;              /* CLOCK_MONOTONIC seconds */
	double rate;               /* operations per second, > 0 */
	atomic_ullong next;        /* the next k to hand out */
};

/* Sets p up for rate operations/s from start (pace_now()). */
void pace_init(struct pace *p, double start, double rate);

/* CLOCK_MONOTONIC in seconds. */
double pace_now(void);

/* Takes the next operation; returns its due time (the same clock as pace_now). */
double pace_take(struct pace *p);

/* The number of operations due before start + secs: those a run of secs seconds offers. */
uint64_t pace_due_count(const struct pace *p, double secs);

/*
 * Sleeps until due (in slices of at most 0.1 s, to notice *stop). Returns 0 at due (at once
 * when it has passed), -1 when *stop was set first.
 */
int pace_wait(double due, volatile sig_atomic_t *stop);

#endif
