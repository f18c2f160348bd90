/* The webhook outbox as the webhook suites see it. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <check.h>

#include "fixture.h"
#include "outbox.h"
#include "receiver.h"

/* Inserts an event as the payment code does; returns its id (static buffer). */
const char *
insert_event(const char *merchant_id, const char *body)
{
	static char id[64];
	const char *p[2] = { merchant_id, body };
	const char *v = db_valuev("INSERT INTO webhook_events (id, merchant_id, type, body)"
	    " VALUES ('evt_' || md5(random()::text), $1, 'payment.succeeded', $2) RETURNING id",
	    2, p);

	ck_assert_ptr_nonnull(v);
	snprintf(id, sizeof(id), "%s", v);
	return id;
}

/* Polls sql (one parameter) until it gives want; fails the test after ms. */
void
wait_value(const char *sql, const char *param, const char *want, long ms)
{
	long long end = now_ms() + ms;
	const char *v;

	for (;;) {
		v = db_value(sql, param);
		if (v != NULL && strcmp(v, want) == 0)
			return;
		ck_assert_msg(now_ms() < end, "%s [%s]: still \"%s\" after %ld ms, want \"%s\"",
		    sql, param ? param : "", v ? v : "(error)", ms, want);
		usleep(20000);
	}
}

void
wait_status(const char *id, const char *status)
{
	wait_value("SELECT status FROM webhook_events WHERE id = $1", id, status, WAIT_MS);
}

/* No event is due or in hand: a case that stops the stack's daemon must not catch one. */
void
quiet(void)
{
	wait_value("SELECT count(*) FROM webhook_events WHERE status = 'pending'", NULL, "0",
	    WAIT_MS);
}

int
loopback_listener(int *port, int backlog)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int s, one = 1;

	ck_assert_int_ge(s = socket(AF_INET, SOCK_STREAM, 0), 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(s, backlog), 0);
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return s;
}

const char *
env(const char *name)
{
	const char *v = getenv(name);

	if (v == NULL || v[0] == '\0') {
		fprintf(stderr, "%s: %s is not set: run me from tests/integration.sh\n",
		    program_invocation_short_name, name);
		exit(1);
	}
	return v;
}

/* True when file holds needle, waiting up to ms. */
int
file_has(const char *path, const char *needle, long ms)
{
	long long end = now_ms() + ms;
	char line[4096];
	FILE *f;
	int found;

	for (;;) {
		found = 0;
		if ((f = fopen(path, "r")) != NULL) {
			while (!found && fgets(line, sizeof(line), f) != NULL)
				found = strstr(line, needle) != NULL;
			fclose(f);
		}
		if (found || now_ms() >= end)
			return found;
		usleep(20000);
	}
}

/* The stack's config with line added (a later key wins) as file name; its path, static. */
const char *
config_plus(const char *name, const char *line)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s", stack_file(name));
	ck_assert_int_eq(sh("(cat \"$MARKETPAY_CONFIG\"; echo '%s') >'%s'", line, path), 0);
	return path;
}
