/*
 * The events API on the real stack: GET events (the list convention, filters type and
 * delivery_status, the payload exactly as sent, the delivery and its attempts), GET
 * events/{id}, and POST events/{id}/redeliver: the receiver gets the event again with the
 * same webhook-id and a valid signature; the rate limit holds under a race (the database
 * counts, under the merchant's row lock); an event being delivered is a 409, a merchant
 * without an endpoint a 400; another merchant's event is a 404; every refusal leaves the
 * database as it was; Idempotency-Key replays the 200 without a second redelivery. Events
 * of a type the endpoint does not subscribe to are recorded as skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "checkout_form.h"
#include "fixture.h"
#include "http.h"
#include "lists.h"
#include "outbox.h"
#include "receiver.h"
#include "refunds.h"
#include "transfers.h"

#define EVENTS "/api/v1/payment/events"
#define NOT_FOUND "event not found"
#define DECLINED "4000000000000002"
#define LIMIT 10        /* redeliveries_per_minute of the stack: the default */

static struct merchant shop;
static char secret[128];

static const char *
redeliver_path(const char *evt)
{
	static char path[128];

	snprintf(path, sizeof(path), EVENTS "/%.64s/redeliver", evt);
	return path;
}

/* A canceled session of m (user_id user): its session.canceled event's id (static). */
static const char *
canceled_event(const struct merchant *m, const char *user)
{
	static char evt[64];
	char sid[37];
	struct http_resp r;

	open_session(m->auth, "10.00", user, sid);
	post_form(sid, "action=cancel", &r);
	http_free(&r);
	snprintf(evt, sizeof(evt), "%s", db_value("SELECT id FROM webhook_events WHERE type ="
	    " 'session.canceled' AND body::json->'data'->>'session_id' = $1", sid));
	ck_assert(strncmp(evt, "evt_", 4) == 0);
	return evt;
}

/* The event's delivery object of r (a 200 of GET one or of a redelivery). */
static struct json_object *
delivery_of(const struct http_resp *r, const char *message, const char *evt)
{
	struct json_object *e, *d;

	ck_assert_msg(r->status == 200, "%ld %s", r->status, r->body);
	ck_assert_str_eq(jstr(r->json, "message"), message);
	ck_assert(json_object_object_get_ex(r->json, "event", &e));
	ck_assert_str_eq(jstr(e, "id"), evt);
	ck_assert(json_object_object_get_ex(e, "delivery", &d));
	return d;
}

static long
jint(struct json_object *o, const char *key)
{
	struct json_object *v;

	ck_assert_msg(json_object_object_get_ex(o, key, &v) && json_object_is_type(v,
	    json_type_int), "%s is not an integer", key);
	return (long)json_object_get_int64(v);
}

/*
 * Every field of an event item as stored: id, type, created_at, payload (the body sent,
 * byte for byte the same JSON), the delivery's status, attempt count, attempts (each's
 * number, time, URL, HTTP status, error, duration) and redeliveries.
 */
static void
check_event(struct json_object *e)
{
	const char *id = jstr(e, "id");
	struct json_object *payload, *d, *attempts, *a, *body;
	char q[64];
	size_t i;

	ck_assert(matches(id, "^evt_[0-9a-f]{32}$"));
	ck_assert_str_eq(jstr(e, "type"), db_value("SELECT type FROM webhook_events WHERE"
	    " id = $1", id));
	ck_assert(matches(jstr(e, "created_at"), ISO_UTC));
	ck_assert(json_object_object_get_ex(e, "payload", &payload));
	body = json_tokener_parse(db_value("SELECT body FROM webhook_events WHERE id = $1", id));
	ck_assert(json_object_equal(payload, body));
	json_object_put(body);
	ck_assert(json_object_object_get_ex(e, "delivery", &d));
	ck_assert_str_eq(jstr(d, "status"), db_value("SELECT status FROM webhook_events WHERE"
	    " id = $1", id));
	snprintf(q, sizeof(q), "%ld", jint(d, "attempt_count"));
	ck_assert_str_eq(q, db_value("SELECT count(*) FROM webhook_attempts WHERE event_id = $1",
	    id));
	snprintf(q, sizeof(q), "%ld", jint(d, "redeliveries"));
	ck_assert_str_eq(q, db_value("SELECT count(*) FROM webhook_redeliveries WHERE"
	    " event_id = $1", id));
	ck_assert(json_object_object_get_ex(d, "attempts", &attempts));
	ck_assert_int_eq((long)json_object_array_length(attempts), jint(d, "attempt_count"));
	for (i = 0; i < json_object_array_length(attempts); i++) {
		a = json_object_array_get_idx(attempts, i);
		ck_assert_int_eq(jint(a, "attempt"), (long)i + 1);
		ck_assert(matches(jstr(a, "attempted_at"), ISO_UTC));
		ck_assert_str_eq(jstr(a, "url"), getenv("MARKETPAY_WEBHOOK_RECEIVER"));
		ck_assert_int_eq(jint(a, "http_status"), 204);
		ck_assert_ptr_null(jstr(a, "error"));
		ck_assert(jint(a, "duration_ms") >= 0);
	}
	if (strcmp(jstr(d, "status"), "delivered") == 0) {
		ck_assert(matches(jstr(d, "delivered_at"), ISO_UTC));
		ck_assert_ptr_null(jstr(d, "next_attempt_at"));
	}
}

/* Each lifecycle event is listed newest first with every field; filters; one by id. */
START_TEST(test_list)
{
	struct merchant m;
	char sid[37], evt[3][64], want[256], back[256], whsec[128];
	struct json_object *data, *e;
	struct http_resp r;
	size_t i;

	new_merchant(&m, "1234", "10.00", false);
	merchant_webhook(&m, whsec);
	snprintf(evt[0], sizeof(evt[0]), "%s", canceled_event(&m, "list-1"));
	open_session(m.auth, "10.00", "list-2", sid);
	pay_card(sid, DECLINED, &r);
	http_free(&r);
	snprintf(evt[1], sizeof(evt[1]), "%s", db_value("SELECT id FROM webhook_events WHERE"
	    " type = 'payment.failed' AND body::json->'data'->>'session_id' = $1", sid));
	open_session(m.auth, "10.00", "list-3", sid);
	api("POST", m.auth, NULL, NULL, &r, "/api/v1/payment/sessions/%s/expire", sid);
	ck_assert_int_eq(r.status, 200);
	http_free(&r);
	snprintf(evt[2], sizeof(evt[2]), "%s", db_value("SELECT id FROM webhook_events WHERE"
	    " type = 'session.expired' AND body::json->'data'->>'session_id' = $1", sid));
	for (i = 0; i < 3; i++)
		wait_status(evt[i], "delivered");

	snprintf(want, sizeof(want), "%s %s %s", evt[2], evt[1], evt[0]);
	data = list_page(m.auth, &r, "events");
	ck_assert_str_eq(list_ids(data, "id"), want);
	ck_assert(!list_has_more(&r));
	for (i = 0; i < json_object_array_length(data); i++)
		check_event(json_object_array_get_idx(data, i));
	e = json_object_array_get_idx(data, 1);
	ck_assert_str_eq(jstr(e, "type"), "payment.failed");
	http_free(&r);
	/* Paged one at a time, both ways: the same. */
	ck_assert_str_eq(list_walk(m.auth, "events", "id", 1, NULL, NULL, NULL), want);
	snprintf(back, sizeof(back), "%s %s", evt[2], evt[1]);
	ck_assert_str_eq(list_walk(m.auth, "events", "id", 1, evt[0], NULL, NULL), back);
	list_expect(m.auth, "id", evt[1], "events?type=payment.failed");
	list_expect(m.auth, "id", want, "events?delivery_status=delivered");
	list_expect(m.auth, "id", "", "events?delivery_status=pending");
	list_expect(m.auth, "id", evt[2], "events?type=session.expired&delivery_status=delivered");
	list_expect(m.auth, "id", evt[0], "events?starting_after=%s", evt[1]);
	list_expect(m.auth, "id", evt[2], "events?ending_before=%s", evt[1]);
	/* One by id: the same item. */
	api("GET", m.auth, NULL, NULL, &r, EVENTS "/%s", evt[1]);
	delivery_of(&r, "Event found.", evt[1]);
	ck_assert(json_object_object_get_ex(r.json, "event", &e));
	check_event(e);
	http_free(&r);
}
END_TEST

/* Another merchant's events: not listed, not found, not redelivered, not a cursor. */
START_TEST(test_isolation)
{
	struct merchant other;
	char evt[64], path[128], before[FOOTPRINT_LEN], osecret[128];
	struct http_resp r;

	snprintf(evt, sizeof(evt), "%s", canceled_event(&shop, "iso-1"));
	new_merchant(&other, "1234", "10.00", false);
	merchant_webhook(&other, osecret);
	list_expect(other.auth, "id", "", "events");
	api("GET", other.auth, NULL, NULL, &r, EVENTS "/%s", evt);
	assert_fail(&r, 404, NOT_FOUND);
	http_free(&r);
	wait_status(evt, "delivered");
	snprintf(before, sizeof(before), "%s", db_value("SELECT status || attempts ||"
	    " next_attempt_at FROM webhook_events WHERE id = $1", evt));
	assert_refused(other.auth, redeliver_path(evt), NULL, 404, NOT_FOUND);
	ck_assert_str_eq(db_value("SELECT status || attempts || next_attempt_at FROM"
	    " webhook_events WHERE id = $1", evt), before);
	snprintf(path, sizeof(path), "events?starting_after=%s", evt);
	list_refused(other.auth, path, 400, "starting_after: no such event");
	/* The form of an id is checked before the database is asked. */
	api("GET", shop.auth, NULL, NULL, &r, EVENTS "/evt_XYZ");
	assert_fail(&r, 404, NOT_FOUND);
	http_free(&r);
	assert_refused(shop.auth, redeliver_path("re_0123"), NULL, 404, NOT_FOUND);
	api("GET", NULL, NULL, NULL, &r, EVENTS);
	ck_assert_int_eq(r.status, 401);
	http_free(&r);
	api("POST", NULL, NULL, NULL, &r, "%s", redeliver_path(evt));
	ck_assert_int_eq(r.status, 401);
	http_free(&r);
}
END_TEST

/* Bad parameters: a 400 naming each. */
START_TEST(test_bad_parameters)
{
	list_refused(shop.auth, "events?type=payment.refunded", 400, "type must be one of");
	list_refused(shop.auth, "events?delivery_status=failed", 400,
	    "delivery_status must be one of pending, delivered, dead, skipped");
	list_refused(shop.auth, "events?limit=0", 400, "limit");
	list_refused(shop.auth, "events?status=delivered", 400, "status");
	list_refused(shop.auth, "events?starting_after=evt_1", 400, "starting_after: no such event");
}
END_TEST

/*
 * A redelivery: 200 with the event pending; the receiver gets it a second time with the
 * same webhook-id and body and a valid signature; the attempts go on from 1 to 2.
 */
START_TEST(test_redeliver)
{
	struct json_object **reqs, *d;
	struct http_resp r;
	char evt[64];
	int n;

	snprintf(evt, sizeof(evt), "%s", canceled_event(&shop, "again-1"));
	json_object_put(receiver_event(evt, secret, "session.canceled", NULL));
	wait_status(evt, "delivered");
	api("POST", shop.auth, NULL, NULL, &r, "%s", redeliver_path(evt));
	d = delivery_of(&r, "Event queued for redelivery.", evt);
	ck_assert_str_eq(jstr(d, "status"), "pending");
	ck_assert_int_eq(jint(d, "redeliveries"), 1);
	ck_assert_ptr_null(jstr(d, "delivered_at"));
	http_free(&r);
	ck_assert_int_eq(receiver_wait(evt, 2, WAIT_MS), 2);
	wait_status(evt, "delivered");
	reqs = receiver_requests(evt, &n);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(receiver_field(reqs[1], "id"), evt);
	ck_assert_str_eq(receiver_field(reqs[1], "body"), receiver_field(reqs[0], "body"));
	ck_assert_int_eq(receiver_signature_ok(secret, reqs[1]), 1);
	receiver_free(reqs);
	api("GET", shop.auth, NULL, NULL, &r, EVENTS "/%s", evt);
	d = delivery_of(&r, "Event found.", evt);
	ck_assert_int_eq(jint(d, "attempt_count"), 2);
	ck_assert_str_eq(jstr(d, "status"), "delivered");
	http_free(&r);
	ck_assert_str_eq(db_value("SELECT string_agg(attempt::text, ',' ORDER BY attempt) FROM"
	    " webhook_attempts WHERE event_id = $1", evt), "1,2");
}
END_TEST

/*
 * LIMIT + 4 redeliveries of distinct events at once, lined up behind the merchant's row:
 * exactly LIMIT are made, the rest 429 with Retry-After; one more is refused leaving the
 * database as it was; once the window has passed (moved back from psql) one is made again.
 */
START_TEST(test_rate_limit)
{
	enum { N = LIMIT + 4 };
	struct merchant m;
	struct http_req reqs[N];
	struct http_resp out[N];
	const char *h[] = { NULL, NULL };
	char evt[N + 1][64], path[N][128], whsec[128], buf[16];
	const char *p[1];
	PGconn *held;
	int i, ok = 0, limited = 0;

	new_merchant(&m, "1234", "10.00", false);
	merchant_webhook(&m, whsec);
	h[0] = m.auth;
	for (i = 0; i < N + 1; i++) {
		snprintf(evt[i], sizeof(evt[i]), "%s", canceled_event(&m, "rate"));
		wait_status(evt[i], "delivered");
	}
	for (i = 0; i < N; i++) {
		snprintf(path[i], sizeof(path[i]), "%s", redeliver_path(evt[i]));
		reqs[i].method = "POST";
		reqs[i].path = path[i];
		reqs[i].headers = h;
		reqs[i].body = NULL;
	}
	p[0] = m.id;
	held = db_hold("SELECT 1 FROM merchants WHERE id = $1::bigint FOR NO KEY UPDATE", 1, p);
	ck_assert_int_ge(http_parallel_held(held, N, N, reqs, out), 2);
	for (i = 0; i < N; i++) {
		if (out[i].status == 200)
			ok++;
		else {
			assert_fail(&out[i], 429, "too many redeliveries: at most 10 in any 60 seconds;"
			    " retry after ");
			ck_assert(matches(http_header(&out[i], "Retry-After", buf, sizeof(buf)),
			    "^[1-9][0-9]?$"));
			ck_assert_int_le(atoi(buf), 60);
			limited++;
		}
		http_free(&out[i]);
	}
	ck_assert_int_eq(ok, LIMIT);
	ck_assert_int_eq(limited, N - LIMIT);
	ck_assert_str_eq(db_value("SELECT count(*) FROM webhook_redeliveries WHERE merchant_id ="
	    " $1::bigint", m.id), "10");
	assert_refused(m.auth, redeliver_path(evt[N]), NULL, 429, "too many redeliveries");
	ck_assert_str_eq(db_value("SELECT status FROM webhook_events WHERE id = $1", evt[N]),
	    "delivered");
	ck_assert_str_eq(db_value("WITH u AS (UPDATE webhook_redeliveries SET requested_at ="
	    " requested_at - interval '61 seconds' WHERE merchant_id = $1::bigint RETURNING 1)"
	    " SELECT count(*) FROM u", m.id), "10");
	api("POST", m.auth, NULL, NULL, &out[0], "%s", redeliver_path(evt[N]));
	ck_assert_msg(out[0].status == 200, "%ld %s", out[0].status, out[0].body);
	http_free(&out[0]);
	ck_assert_int_eq(receiver_wait(evt[N], 2, WAIT_MS), 2);
}
END_TEST

/* An event marketpay-webhookd holds (being sent): 409, nothing changes; then 200. */
START_TEST(test_in_flight)
{
	const char *p[1];
	char evt[64];
	struct http_resp r;
	PGconn *held;

	snprintf(evt, sizeof(evt), "%s", canceled_event(&shop, "flight-1"));
	wait_status(evt, "delivered");
	p[0] = evt;
	held = db_hold("SELECT 1 FROM webhook_events WHERE id = $1 FOR UPDATE", 1, p);
	assert_refused(shop.auth, redeliver_path(evt), NULL, 409,
	    "the event is being delivered right now");
	db_release(held);
	/* A sender's live lease on it is in flight too: 409, nothing changed. */
	db_value("UPDATE webhook_events SET lease_owner = 'test:1', lease_until = now() +"
	    " interval '1 minute' WHERE id = $1 RETURNING id", evt);
	assert_refused(shop.auth, redeliver_path(evt), NULL, 409,
	    "the event is being delivered right now");
	ck_assert_str_eq(db_value("SELECT status || ' ' || (SELECT count(*) FROM"
	    " webhook_redeliveries WHERE event_id = $1) FROM webhook_events WHERE id = $1", evt),
	    "delivered 0");
	/* A lease that ran out (its sender died) does not hold it; it is dropped. */
	db_value("UPDATE webhook_events SET lease_until = now() - interval '1 s' WHERE id = $1"
	    " RETURNING id", evt);
	api("POST", shop.auth, NULL, NULL, &r, "%s", redeliver_path(evt));
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	http_free(&r);
	/*
	 * The running daemon may lease it again at once, so the stale lease is shown dropped by
	 * the delivery that follows, which leaves no lease behind.
	 */
	ck_assert_int_eq(receiver_wait(evt, 2, WAIT_MS), 2);
	wait_status(evt, "delivered");
	ck_assert_str_eq(db_value("SELECT count(*) FROM webhook_events WHERE id = $1 AND"
	    " lease_owner IS NULL AND lease_until IS NULL", evt), "1");
}
END_TEST

/* A merchant without a webhook endpoint: its events are listed, never redelivered (400). */
START_TEST(test_no_endpoint)
{
	struct merchant m;
	char evt[64];

	new_merchant(&m, "1234", "10.00", false);
	snprintf(evt, sizeof(evt), "%s", canceled_event(&m, "nourl-1"));
	list_expect(m.auth, "id", evt, "events");
	assert_refused(m.auth, redeliver_path(evt), NULL, 400,
	    "no webhook endpoint is configured for this merchant");
}
END_TEST

/*
 * An endpoint subscribed to session.canceled alone: a decline's payment.failed is recorded
 * skipped and never sent; redelivered on request, it is sent, signed, and delivered.
 */
START_TEST(test_skipped)
{
	struct merchant m;
	char sid[37], evt[64], whsec[128];
	struct http_resp r;

	new_merchant(&m, "1234", "10.00", false);
	merchant_webhook(&m, whsec);
	ck_assert_str_eq(ctl("merchant webhook %s --events session.canceled", m.id),
	    "session.canceled");
	open_session(m.auth, "10.00", "skip-1", sid);
	pay_card(sid, DECLINED, &r);
	http_free(&r);
	snprintf(evt, sizeof(evt), "%s", db_value("SELECT id FROM webhook_events WHERE"
	    " type = 'payment.failed' AND body::json->'data'->>'session_id' = $1", sid));
	ck_assert_str_eq(db_value("SELECT status || '/' || attempts FROM webhook_events WHERE"
	    " id = $1", evt), "skipped/0");
	list_expect(m.auth, "id", evt, "events?delivery_status=skipped");
	ck_assert_int_eq(receiver_wait(evt, 1, 1500), 0);
	ck_assert_str_eq(db_value("SELECT status FROM webhook_events WHERE id = $1", evt),
	    "skipped");
	api("POST", m.auth, NULL, NULL, &r, "%s", redeliver_path(evt));
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	http_free(&r);
	json_object_put(receiver_event(evt, whsec, "payment.failed", NULL));
	wait_status(evt, "delivered");
}
END_TEST

/* Idempotency-Key: the 200 replayed, one redelivery made; 422 and 409 as everywhere. */
START_TEST(test_idempotent)
{
	char evt[64];
	struct http_resp r;

	snprintf(evt, sizeof(evt), "%s", canceled_event(&shop, "idem-1"));
	wait_status(evt, "delivered");
	assert_idempotent(shop.id, shop.auth, redeliver_path(evt), "redeliver", "{}",
	    "{\"x\":1}", &r);
	http_free(&r);
	ck_assert_str_eq(db_value("SELECT count(*) FROM webhook_redeliveries WHERE event_id = $1",
	    evt), "1");
}
END_TEST

/*
 * An endpoint that refuses connections: the event is pending with its next attempt's time,
 * the failed attempt's error and no HTTP status; once the URL is right, a redelivery (the
 * error still shown) delivers it at once instead of at the schedule's next attempt.
 */
START_TEST(test_failing_endpoint)
{
	struct merchant m;
	struct json_object *d, *a;
	struct http_resp r;
	char evt[64], whsec[128];
	int s, port;

	new_merchant(&m, "1234", "10.00", false);
	s = loopback_listener(&port, 1);
	close(s);      /* nothing listens there now */
	ck_assert_ptr_nonnull(ctl("merchant webhook %s --url http://127.0.0.1:%d/hook", m.id,
	    port));
	snprintf(evt, sizeof(evt), "%s", canceled_event(&m, "down-1"));
	wait_value("SELECT attempts FROM webhook_events WHERE id = $1", evt, "1", WAIT_MS);
	api("GET", m.auth, NULL, NULL, &r, EVENTS "/%s", evt);
	d = delivery_of(&r, "Event found.", evt);
	ck_assert_str_eq(jstr(d, "status"), "pending");
	ck_assert(matches(jstr(d, "next_attempt_at"), ISO_UTC));
	ck_assert_ptr_nonnull(jstr(d, "last_error"));
	ck_assert_ptr_null(jstr(d, "delivered_at"));
	ck_assert(json_object_object_get_ex(d, "attempts", &a));
	a = json_object_array_get_idx(a, 0);
	ck_assert_ptr_null(jstr(a, "http_status"));
	ck_assert_str_eq(jstr(a, "error"), jstr(d, "last_error"));
	http_free(&r);
	/* The list carries the same failure. */
	api("GET", m.auth, NULL, NULL, &r, EVENTS "?limit=1");
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	ck_assert(json_object_object_get_ex(r.json, "data", &a));
	ck_assert(json_object_object_get_ex(json_object_array_get_idx(a, 0), "delivery", &d));
	ck_assert_ptr_nonnull(jstr(d, "last_error"));
	ck_assert(json_object_object_get_ex(d, "attempts", &a));
	ck_assert_str_eq(jstr(json_object_array_get_idx(a, 0), "error"), jstr(d, "last_error"));
	http_free(&r);
	merchant_webhook(&m, whsec);
	api("POST", m.auth, NULL, NULL, &r, "%s", redeliver_path(evt));
	d = delivery_of(&r, "Event queued for redelivery.", evt);
	ck_assert_str_eq(jstr(d, "status"), "pending");
	ck_assert_ptr_nonnull(jstr(d, "last_error"));
	http_free(&r);
	json_object_put(receiver_event(evt, whsec, "session.canceled", NULL));
	wait_status(evt, "delivered");
	ck_assert_str_eq(db_value("SELECT count(*) FROM webhook_attempts WHERE event_id = $1",
	    evt), "2");
}
END_TEST

static void
setup(void)
{
	new_merchant(&shop, "1234", "100.00", false);
	merchant_webhook(&shop, secret);
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("event_api", "the events API", 90, &t);

	tcase_add_test(t, test_list);
	tcase_add_test(t, test_isolation);
	tcase_add_test(t, test_bad_parameters);
	tcase_add_test(t, test_redeliver);
	tcase_add_test(t, test_rate_limit);
	tcase_add_test(t, test_in_flight);
	tcase_add_test(t, test_no_endpoint);
	tcase_add_test(t, test_skipped);
	tcase_add_test(t, test_failing_endpoint);
	tcase_add_test(t, test_idempotent);
	return fixture_main(s, setup, NULL);
}
