/* The counters' shared file: slots, atomic adds, retiring dead processes, summing. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"

#define MAGIC 0x4d504d31u   /* "MPM1" */
#define HEAD_BYTES 64
#define SLOT_HEAD 16        /* pid, busy, group, padding */

const uint64_t metrics_bucket_us[METRICS_BUCKETS] = {
	1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000, 2500000, 10000000,
};

/* 0.1 s, 0.5 s, 1 s, 2.5 s, 5 s, 10 s, 30 s, 1 min, 5 min, 15 min, 1 h. */
const uint64_t metrics_slow_bucket_us[METRICS_BUCKETS] = {
	100000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000, 60000000, 300000000,
	900000000, 3600000000,
};

struct head {
	uint32_t magic;
	uint32_t slots;
	uint64_t nvalues;
};

struct slot {
	int32_t pid;        /* 0: free; slot 0 (the retired totals) keeps -1 */
	int32_t busy;
	uint32_t group;     /* < METRICS_GROUPS */
	uint32_t pad;
	uint64_t v[];
};

/* This process's mapping and slot (one per process: the counters are the process's). */
static void *map;
static size_t map_len;
static struct slot *mine;

char *
metrics_path(const char *dir, const char *env, const char *program, char *out, size_t outlen)
{
	int n;

	if (dir == NULL || dir[0] == '\0')
		return NULL;
	n = snprintf(out, outlen, "%s/%s-%s.metrics", dir, env, program);
	return n > 0 && (size_t)n < outlen ? out : NULL;
}

static size_t
slot_bytes(size_t nvalues)
{
	return (SLOT_HEAD + nvalues * sizeof(uint64_t) + 63) & ~(size_t)63;
}

static size_t
file_bytes(size_t nvalues)
{
	return HEAD_BYTES + METRICS_SLOTS * slot_bytes(nvalues);
}

static struct slot *
slot_at(void *base, size_t nvalues, size_t i)
{
	return (struct slot *)((char *)base + HEAD_BYTES + i * slot_bytes(nvalues));
}

static bool
layout_ok(const struct head *h, size_t nvalues)
{
	return h->magic == MAGIC && h->slots == METRICS_SLOTS && h->nvalues == nvalues;
}

/* Alive, as far as this process can tell: EPERM is another user's live process. */
static bool
alive(int32_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

/*
 * Opens path locked exclusively, of the right layout: a file of another layout (an older
 * version's) is replaced by a new one, leaving the old processes their mapping of the old.
 */
static int
open_locked(const char *path, size_t nvalues)
{
	struct stat st, at;
	struct head h;
	int fd, tries;

	for (tries = 0; tries < 5; tries++) {
		if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640)) < 0)
			return -1;
		if (flock(fd, LOCK_EX) != 0 || fstat(fd, &st) != 0)
			goto fail;
		/* Replaced by another process while we waited: take the new file. */
		if (stat(path, &at) != 0 || at.st_ino != st.st_ino || at.st_dev != st.st_dev) {
			close(fd);
			continue;
		}
		if (st.st_size == 0) {
			memset(&h, 0, sizeof(h));
			h.magic = MAGIC;
			h.slots = METRICS_SLOTS;
			h.nvalues = nvalues;
			if (ftruncate(fd, (off_t)file_bytes(nvalues)) != 0 ||
			    pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
				goto fail;
			return fd;
		}
		if ((size_t)st.st_size == file_bytes(nvalues) &&
		    pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && layout_ok(&h, nvalues))
			return fd;
		if (unlink(path) != 0)
			goto fail;
		close(fd);
	}
	errno = EAGAIN;
	return -1;
fail:
	close(fd);
	return -1;
}

/* Adds every dead process's counters to slot 0 and frees its slot; returns a free slot. */
static struct slot *
retire_and_take(void *base, size_t nvalues)
{
	struct slot *total = slot_at(base, nvalues, 0), *s, *free_slot = NULL;
	size_t i, k;

	total->pid = -1;
	for (i = 1; i < METRICS_SLOTS; i++) {
		s = slot_at(base, nvalues, i);
		/* Our own pid in a slot is a dead process whose pid we were given again. */
		if (s->pid != 0 && s->pid != getpid() && alive(s->pid))
			continue;
		if (s->pid != 0) {
			for (k = 0; k < nvalues; k++) {
				__atomic_fetch_add(&total->v[k], s->v[k], __ATOMIC_RELAXED);
				s->v[k] = 0;
			}
			s->busy = 0;
			s->group = 0;
			__atomic_store_n(&s->pid, 0, __ATOMIC_RELEASE);
		}
		if (free_slot == NULL)
			free_slot = s;
	}
	return free_slot;
}

int
metrics_attach(const char *path, size_t nvalues, unsigned group)
{
	int fd, saved;

	metrics_detach();
	if ((fd = open_locked(path, nvalues)) < 0)
		return -1;
	map_len = file_bytes(nvalues);
	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		saved = errno;
		map = NULL;
		flock(fd, LOCK_UN);
		close(fd);
		errno = saved;
		return -1;
	}
	/* The group is in place before the pid makes the slot visible to a reader. */
	if ((mine = retire_and_take(map, nvalues)) != NULL) {
		mine->group = group < METRICS_GROUPS ? group : 0;
		__atomic_store_n(&mine->pid, (int32_t)getpid(), __ATOMIC_RELEASE);
	}
	/* Explicitly: the mapping holds the open file, and with it a lock close would leave. */
	flock(fd, LOCK_UN);
	close(fd);
	if (mine == NULL) {
		metrics_detach();
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

void
metrics_detach(void)
{
	if (map != NULL)
		munmap(map, map_len);
	map = NULL;
	mine = NULL;
}

void
metrics_add(size_t i, uint64_t n)
{
	if (mine != NULL)
		__atomic_fetch_add(&mine->v[i], n, __ATOMIC_RELAXED);
}

size_t
metrics_bucket(uint64_t us)
{
	return metrics_bucket_in(metrics_bucket_us, us);
}

size_t
metrics_bucket_in(const uint64_t *bounds, uint64_t us)
{
	size_t b = 0;

	while (b < METRICS_BUCKETS && us > bounds[b])
		b++;
	return b;
}

void
metrics_observe(size_t hist, uint64_t us)
{
	metrics_observe_in(hist, metrics_bucket_us, us);
}

void
metrics_observe_in(size_t hist, const uint64_t *bounds, uint64_t us)
{
	if (mine == NULL)
		return;
	__atomic_fetch_add(&mine->v[hist + metrics_bucket_in(bounds, us)], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&mine->v[hist + METRICS_BUCKETS + 1], us, __ATOMIC_RELAXED);
}

void
metrics_set_busy(bool busy)
{
	if (mine != NULL)
		__atomic_store_n(&mine->busy, busy ? 1 : 0, __ATOMIC_RELAXED);
}

int
metrics_read(const char *path, size_t nvalues, struct metrics_sum *out)
{
	struct stat st;
	struct slot *s;
	void *base = MAP_FAILED;
	size_t i, k, len = file_bytes(nvalues);
	int fd, rc = -1;
	int32_t pid;
	uint32_t g;

	memset(out->values, 0, nvalues * sizeof(uint64_t));
	memset(out->live, 0, sizeof(out->live));
	memset(out->busy, 0, sizeof(out->busy));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	/* Shared: no process retires a slot while we add, so nothing is counted twice. */
	if (flock(fd, LOCK_SH) != 0 || fstat(fd, &st) != 0 || (size_t)st.st_size != len ||
	    (base = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED ||
	    !layout_ok(base, nvalues))
		goto out;
	for (i = 0; i < METRICS_SLOTS; i++) {
		s = slot_at(base, nvalues, i);
		if ((pid = __atomic_load_n(&s->pid, __ATOMIC_ACQUIRE)) == 0)
			continue;
		for (k = 0; k < nvalues; k++)
			out->values[k] += __atomic_load_n(&s->v[k], __ATOMIC_RELAXED);
		if (i > 0 && alive(pid)) {
			g = __atomic_load_n(&s->group, __ATOMIC_RELAXED) % METRICS_GROUPS;
			out->live[g]++;
			out->busy[g] += __atomic_load_n(&s->busy, __ATOMIC_RELAXED) != 0;
		}
	}
	rc = 0;
out:
	if (base != MAP_FAILED)
		munmap(base, len);
	flock(fd, LOCK_UN);
	close(fd);
	return rc;
}
