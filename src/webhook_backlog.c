/*
 * A merchant's backlog: which claimed deliveries came from one, so that the sender claims
 * again as soon as they are recorded. Between two claims the sender otherwise waits a few
 * milliseconds, so that deliveries finishing one by one do not each cost a claim; but an
 * endpoint that answers at once would then get at most its in-flight limit per gap, however
 * many of its events are due.
 */
#include "webhook_backlog.h"

static bool
known(const struct webhook_backlog *b, long long merchant)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (b->merchant[i] == merchant)
			return true;
	return false;
}

void
webhook_backlog_recorded(struct webhook_backlog *b, long long merchant)
{
	/* A merchant past the table loses only the quick claim, not a delivery. */
	if (!known(b, merchant) && b->n < WEBHOOK_BACKLOG_MAX)
		b->merchant[b->n++] = merchant;
}

bool
webhook_backlog_pending(const struct webhook_backlog *b)
{
	return b->n > 0;
}

void
webhook_backlog_claimed(struct webhook_backlog *b, const long long *merchant, size_t n,
    long per, bool *from_backlog)
{
	size_t i, j;
	long same;

	/* n is at most a claim's batch: counting pairwise costs microseconds. */
	for (i = 0; i < n; i++) {
		for (same = 0, j = 0; j < n; j++)
			same += merchant[j] == merchant[i];
		from_backlog[i] = same >= per || known(b, merchant[i]);
	}
	b->n = 0;
}
