/*
 * One merchant's webhook endpoint hangs (accepts connections, never answers): the other
 * merchants' events still go out at once. Holds because webhookd runs several senders, lets
 * at most two deliveries of one merchant be in flight, and makes a failing merchant's other
 * events wait for the failed one's retry (see marketpay-webhookd(8)). Run by
 * tests/integration.sh, whose stack has webhook_timeout = 3 and webhook_retry_schedule = 1,1,1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "fixture.h"
#include "outbox.h"
#include "receiver.h"

#define HANGING_EVENTS 6

START_TEST(test_hanging_endpoint_holds_back_only_its_merchant)
{
	char hang[32], fine[32], ids[2048] = "", ev[64];
	const char *p[2];
	/* Completes connections (the kernel's backlog) and never answers. */
	int port, hole = loopback_listener(&port, 64), i;

	quiet();
	snprintf(hang, sizeof(hang), "%s", ctl("merchant create --name 'Hanging shop'"));
	ck_assert_ptr_nonnull(ctl("merchant webhook %s --url http://127.0.0.1:%d/hook", hang,
	    port));
	snprintf(fine, sizeof(fine), "%s", ctl("merchant create --name 'Healthy shop'"));
	ck_assert_ptr_nonnull(ctl("merchant webhook %s --url %s", fine,
	    getenv("MARKETPAY_WEBHOOK_RECEIVER")));
	for (i = 0; i < HANGING_EVENTS; i++) {
		snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%s", i ? " " : "",
		    insert_event(hang, "{\"hanging\":true}"));
	}
	usleep(200000);   /* the hanging merchant's events are the oldest due */
	snprintf(ev, sizeof(ev), "%s", insert_event(fine, "{\"healthy\":true}"));
	wait_status(ev, "delivered");
	ck_assert_int_eq(receiver_wait(ev, 1, 5000), 1);

	/* Wait for the hanging merchant's first attempts to time out and be recorded. */
	wait_value("SELECT count(*) > 0 FROM webhook_attempts WHERE event_id ="
	    " ANY(string_to_array($1, ' '))", ids, "t", WAIT_MS);
	p[0] = ids;
	p[1] = ev;
	/* The healthy event went out before the first hanging attempt even ended. */
	ck_assert_str_eq(db_valuev("SELECT (SELECT delivered_at FROM webhook_events WHERE id = $2)"
	    " < min(attempted_at + make_interval(secs => duration_ms / 1000.0))::timestamptz"
	    " FROM webhook_attempts WHERE event_id = ANY(string_to_array($1, ' '))", 2, p), "t");
	/* At most two of its deliveries were in flight at once... */
	ck_assert_str_eq(db_value("WITH a AS (SELECT attempted_at, attempted_at +"
	    " make_interval(secs => duration_ms / 1000.0) AS ended FROM webhook_attempts"
	    " WHERE event_id = ANY(string_to_array($1, ' ')))"
	    " SELECT count(*) <= 2 FROM a WHERE attempted_at < (SELECT min(ended) FROM a)", ids), "t");
	/* ... and the rest waited for the retry instead of each taking its own timeout. */
	ck_assert_str_eq(db_value("SELECT count(*) > 0 FROM webhook_events WHERE id ="
	    " ANY(string_to_array($1, ' ')) AND attempts = 0 AND next_attempt_at > created_at +"
	    " interval '1 second'", ids), "t");

	/* The endpoint is fixed: every event of that merchant is delivered, none lost. */
	ck_assert_int_eq(sh(CTL "merchant webhook %s --url"
	    " \"$MARKETPAY_WEBHOOK_RECEIVER\" --keep-secret >/dev/null", hang), 0);
	wait_value("SELECT count(*) FROM webhook_events WHERE id = ANY(string_to_array($1, ' '))"
	    " AND status = 'delivered'", ids, "6", 30000);
	close(hole);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("webhook isolation", "hanging endpoint", 90, &t);

	env("MARKETPAY_WEBHOOK_RECEIVER");
	tcase_add_test(t, test_hanging_endpoint_holds_back_only_its_merchant);
	return run_suite(s);
}
