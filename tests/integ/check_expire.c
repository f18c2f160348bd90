/*
 * POST /api/v1/payment/sessions/{id}/expire on the real stack: an open session ends at
 * once (the page says so, session.expired is delivered, no money moves) and is answered as
 * GET shows it; every refusal (400 not open, 404, 401) leaves the database as it was, each
 * beside its positive control; Idempotency-Key replays the 200.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "checkout_form.h"
#include "fixture.h"
#include "http.h"
#include "outbox.h"
#include "receiver.h"
#include "refunds.h"
#include "transfers.h"

#define NOT_FOUND "payment session not found"
#define FOUND "\"message\":\"Payment session found.\""
#define EXPIRED "\"message\":\"Payment session expired.\""

static struct merchant shop;
static char secret[128];

static const char *
expire_path(const char *sid)
{
	static char path[128];

	snprintf(path, sizeof(path), "/api/v1/payment/sessions/%s/expire", sid);
	return path;
}

/* The ledger and the accounts: what an expiry must never change. */
static const char *
money(void)
{
	return db_value("SELECT (SELECT count(*) FROM ledger_transactions) || '/' ||"
	    " (SELECT count(*) FROM ledger_entries) || '/' || (SELECT md5(string_agg(id || ':' ||"
	    " balance, ',' ORDER BY id)) FROM accounts)", NULL);
}

/* The 200 of an expiry of sid: the session as GET shows it, status expired. */
static void
assert_expired(const struct http_resp *r, const char *sid)
{
	struct json_object *v, *items;
	char url[256];

	ck_assert_msg(r->status == 200, "%ld %s", r->status, r->body);
	ck_assert(json_object_object_get_ex(r->json, "status_code", &v) &&
	    json_object_get_int(v) == 10);
	ck_assert(json_object_object_get_ex(r->json, "success", &v) &&
	    json_object_get_boolean(v));
	ck_assert_str_eq(jstr(r->json, "message"), "Payment session expired.");
	ck_assert_str_eq(jstr(r->json, "session_id"), sid);
	ck_assert_str_eq(jstr(r->json, "status"), "expired");
	ck_assert_str_eq(jstr(r->json, "amount"), "10.00");
	ck_assert_str_eq(jstr(r->json, "currency"), "AFN");
	ck_assert_str_eq(jstr(r->json, "amount_refunded"), "0.00");
	ck_assert(json_object_object_get_ex(r->json, "items", &items));
	ck_assert_int_eq(json_object_array_length(items), 1);
	ck_assert(matches(jstr(r->json, "expires_at"), ISO_UTC));
	snprintf(url, sizeof(url), "/checkout/%s", sid);
	ck_assert_ptr_nonnull(strstr(jstr(r->json, "url"), url));
}

/* The positive control: sid, still open, is expired by auth (an empty POST). */
static void
expire_ok(const char *auth, const char *sid)
{
	struct http_resp r;

	ck_assert_str_eq(status_of(sid), "open");
	api("POST", auth, NULL, NULL, &r, "%s", expire_path(sid));
	assert_expired(&r, sid);
	http_free(&r);
	ck_assert_str_eq(status_of(sid), "expired");
}

/* An open session becomes expired at once: stored, its page, its event; no money moves. */
START_TEST(test_expire)
{
	const char *h[] = { shop.auth, NULL };
	struct json_object *payload, *data;
	char sid[37], before[256], acct[16], want[4096];
	const char *found;
	struct http_resp r, g;

	new_customer("50.00", acct);
	open_session(shop.auth, "10.00", "expire-1", sid);
	snprintf(before, sizeof(before), "%s", money());
	/* No body, no Content-Type: an empty POST. */
	ck_assert_int_eq(http_do("POST", expire_path(sid), h, NULL, -1, &r), 0);
	assert_expired(&r, sid);
	ck_assert_str_eq(db_value("SELECT status || ' ' || (closed_at <= now()) || ' ' ||"
	    " (expires_at > now()) FROM payment_sessions WHERE id = $1::uuid", sid),
	    "expired true true");
	ck_assert_str_eq(money(), before);
	/* GET reads the same session, but for the message: byte for byte and as JSON. */
	api("GET", shop.auth, NULL, NULL, &g, "/api/v1/payment/sessions/%s", sid);
	ck_assert_int_eq(g.status, 200);
	ck_assert_ptr_nonnull(found = strstr(g.body, FOUND));
	snprintf(want, sizeof(want), "%.*s%s%s", (int)(found - g.body), g.body, EXPIRED,
	    found + strlen(FOUND));
	ck_assert_str_eq(r.body, want);
	json_object_object_del(g.json, "message");
	json_object_object_del(r.json, "message");
	ck_assert(json_object_equal(g.json, r.json));
	http_free(&g);
	http_free(&r);
	assert_page_expired(sid, acct);
	/* One session.expired, delivered and signed. */
	ck_assert_str_eq(db_value("SELECT count(*) FROM webhook_events WHERE type ="
	    " 'session.expired' AND body::json->'data'->>'session_id' = $1", sid), "1");
	payload = receiver_event(db_value("SELECT id FROM webhook_events WHERE type ="
	    " 'session.expired' AND body::json->'data'->>'session_id' = $1", sid), secret,
	    "session.expired", &data);
	ck_assert_str_eq(jstr(data, "session_id"), sid);
	ck_assert_str_eq(jstr(data, "user_id"), "expire-1");
	ck_assert_str_eq(jstr(data, "status"), "expired");
	json_object_put(payload);
	ck_assert_str_eq(money(), before);
	assert_ledger_ok();
}
END_TEST

/* A JSON body is accepted and ignored. */
START_TEST(test_expire_with_body)
{
	char sid[37];
	struct http_resp r;

	open_session(shop.auth, "10.00", "expire-2", sid);
	api("POST", shop.auth, NULL, "{}", &r, "%s", expire_path(sid));
	assert_expired(&r, sid);
	http_free(&r);
	ck_assert_str_eq(status_of(sid), "expired");
}
END_TEST

/* Sends sig to the stack's marketpay-webhookd and its senders (its process group). */
static int
sweeper(int sig)
{
	FILE *f = fopen(stack_file("webhookd.pid"), "r");
	long pid = 0;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid > 0 ? kill(-(pid_t)pid, sig) : -1;
}

/* Whatever a failed case left behind: the stack's daemon runs. */
static void
teardown(void)
{
	sweeper(SIGCONT);
}

static const char *const closed[] = { "paid", "failed", "canceled", "expired", "refunded",
	"expired" };

/*
 * Not open: 400 naming the status as GET shows it (the last: an open session past its
 * expires_at, which reads expired), and nothing changes; a paid one stays refundable.
 */
START_TEST(test_not_open)
{
	char sid[37], needle[128];
	struct http_resp r;

	if (_i == 0 || _i == 4)
		paid_session(shop.auth, "10.00", "closed", NULL, sid);
	else
		open_session(shop.auth, "10.00", "closed", sid);
	if (_i == 1)
		pay_card(sid, "4000000000000002", &r);
	else if (_i == 2)
		post_form(sid, "action=cancel", &r);
	else if (_i == 3)
		api("POST", shop.auth, NULL, NULL, &r, "%s", expire_path(sid));
	else if (_i == 4)
		refund_post(shop.auth, sid, "{}", &r);
	if (_i >= 1 && _i <= 4)
		http_free(&r);
	if (_i == 5) {
		/* Past its time, still stored open: the sweep must not come in between. */
		ck_assert_int_eq(sweeper(SIGSTOP), 0);
		ck_assert_ptr_nonnull(db_value("UPDATE payment_sessions SET created_at = now() -"
		    " interval '2 hours', expires_at = now() - interval '1 hour' WHERE id = $1::uuid"
		    " RETURNING 1", sid));
	}
	ck_assert_str_eq(db_value("SELECT mp_session_status(status, expires_at) FROM"
	    " payment_sessions WHERE id = $1::uuid", sid), closed[_i]);
	snprintf(needle, sizeof(needle), "the payment session is %s, not open: only an open"
	    " session can be expired", closed[_i]);
	assert_refused(shop.auth, expire_path(sid), "{}", 400, needle);
	assert_refused(shop.auth, expire_path(sid), NULL, 400, needle);
	if (_i == 5) {
		ck_assert_str_eq(status_of(sid), "open");
		ck_assert_int_eq(sweeper(SIGCONT), 0);
		wait_value("SELECT status FROM payment_sessions WHERE id = $1::uuid", sid, "expired",
		    5000);
	}
	if (_i == 0) {
		refund_post(shop.auth, sid, "{}", &r);
		refund_of(&r, "Refund succeeded.");
		http_free(&r);
	}
}
END_TEST

/* Unknown, malformed and another merchant's: 404, nothing changes; the owner then can. */
START_TEST(test_not_found)
{
	char sid[37];

	open_session(shop.auth, "10.00", "other", sid);
	assert_refused(fx.auth_b, expire_path(sid), "{}", 404, NOT_FOUND);
	assert_refused(shop.auth, expire_path("7f3c1e9a-0000-4000-8000-000000000000"), "{}", 404,
	    NOT_FOUND);
	assert_refused(shop.auth, expire_path("not-a-uuid"), "{}", 404, NOT_FOUND);
	expire_ok(shop.auth, sid);
}
END_TEST

/* Without a valid key: 401 with the sessions' text, nothing changes; GET is 405's Allow. */
START_TEST(test_denied)
{
	const char *bad[3] = { NULL, "Authorization: API-KEY mp_test_nope", NULL };
	char sid[37], before[FOOTPRINT_LEN], revoked[200];
	struct http_resp r;
	size_t i;

	snprintf(revoked, sizeof(revoked), "Authorization: API-KEY %s", fx.key_revoked);
	bad[2] = revoked;
	open_session(fx.auth_a, "10.00", "denied", sid);
	for (i = 0; i < 3; i++) {
		snprintf(before, sizeof(before), "%s", db_footprint(sid, NULL));
		api("POST", bad[i], NULL, NULL, &r, "%s", expire_path(sid));
		ck_assert_int_eq(r.status, 401);
		ck_assert_str_eq(jstr(r.json, "detail"), "Invalid or missing API key.");
		http_free(&r);
		ck_assert_str_eq(db_footprint(sid, NULL), before);
	}
	api("GET", fx.auth_a, NULL, NULL, &r, "%s", expire_path(sid));
	ck_assert_int_eq(r.status, 405);
	http_free(&r);
	expire_ok(fx.auth_a, sid);
}
END_TEST

/* Idempotency-Key: the 200 replays (where a second expiry would be a 400), 422, 409. */
START_TEST(test_idempotent)
{
	char sid[37];
	struct http_resp r;

	open_session(shop.auth, "10.00", "idem", sid);
	assert_idempotent(shop.id, shop.auth, expire_path(sid), "expire", "{}", "{\"x\":1}", &r);
	assert_expired(&r, sid);
	http_free(&r);
	ck_assert_str_eq(db_value("SELECT count(*) FROM webhook_events WHERE type ="
	    " 'session.expired' AND body::json->'data'->>'session_id' = $1", sid), "1");
	assert_refused(shop.auth, expire_path(sid), "{}", 400,
	    "the payment session is expired, not open");
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
	Suite *s = suite_one("expire", "expire endpoint", 60, &t);

	tcase_add_test(t, test_expire);
	tcase_add_test(t, test_expire_with_body);
	tcase_add_loop_test(t, test_not_open, 0, NELEM(closed));
	tcase_add_test(t, test_not_found);
	tcase_add_test(t, test_denied);
	tcase_add_test(t, test_idempotent);
	return fixture_main(s, setup, teardown);
}
