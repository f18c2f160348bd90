/* The webhook outbox as the webhook suites see it. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
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
