/*
 * Every lifecycle event on the real stack: each type made by the action a customer, a
 * merchant or the clock takes (the checkout page's forms, the transfer, refund and reversal
 * endpoints, the expiry sweep of marketpay-webhookd), delivered to the stack's receiver,
 * its signature verified and its data read as a merchant reads it; the sweep racing a
 * payment; the subscriptions of marketpayctl merchant webhook --events. The expire endpoint:
 * check_expire.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "checkout_form.h"
#include "event_type.h"
#include "fixture.h"
#include "http.h"
#include "outbox.h"
#include "receiver.h"
#include "refunds.h"
#include "transfers.h"

#define DECLINED "4000000000000002"
#define SHORT_CARD "4000000000009995"

static struct merchant shop;       /* every type, its webhooks to the receiver */
static char secret[128];

/* The id of the one event of type whose data's key is value (the case fails otherwise). */
static const char *
event_about(const char *type, const char *key, const char *value)
{
	static char evt[64];
	char v[128];
	const char *p[3] = { type, key, v };
	const char *n;

	/* value may be db_value's buffer, which the queries below write over. */
	snprintf(v, sizeof(v), "%s", value);
	n = db_valuev("SELECT count(*) FROM webhook_events WHERE type = $1 AND"
	    " body::json->'data'->>$2 = $3", 3, p);

	ck_assert_msg(n != NULL && strcmp(n, "1") == 0, "%s events of %s %s: %s", type, key,
	    v, n ? n : "(error)");
	snprintf(evt, sizeof(evt), "%s", db_valuev("SELECT id FROM webhook_events WHERE type = $1"
	    " AND body::json->'data'->>$2 = $3", 3, p));
	return evt;
}

/* How many events of type session sid has (any merchant). */
static const char *
events_of(const char *type, const char *sid)
{
	const char *p[2] = { type, sid };

	return db_valuev("SELECT count(*) FROM webhook_events WHERE type = $1 AND"
	    " body::json->'data'->>'session_id' = $2", 2, p);
}

/*
 * The session event of type about sid, delivered and verified (receiver_event: signed,
 * 204, id, type, livemode), with the envelope's created_at and the data every session
 * event carries: sid, user, amount 10.00 AFN, one item, status, reason, payment_method
 * (NULL: JSON null), expires_at and closed_at as stored. Returns the payload (put it).
 */
static struct json_object *
session_event(const char *type, const char *sid, const char *user, const char *status,
    const char *reason, const char *method)
{
	struct json_object *payload, *data, *items;
	const char *stored;

	payload = receiver_event(event_about(type, "session_id", sid), secret, type, &data);
	ck_assert(matches(jstr(payload, "created_at"), ISO_UTC));
	ck_assert_str_eq(jstr(data, "session_id"), sid);
	ck_assert_str_eq(jstr(data, "user_id"), user);
	ck_assert_str_eq(jstr(data, "email"), "buyer@example.com");
	ck_assert_str_eq(jstr(data, "amount"), "10.00");
	ck_assert_str_eq(jstr(data, "currency"), "AFN");
	ck_assert(json_object_object_get_ex(data, "items", &items));
	ck_assert_int_eq(json_object_array_length(items), 1);
	ck_assert_str_eq(jstr(json_object_array_get_idx(items, 0), "price"), "10.00");
	ck_assert_str_eq(jstr(data, "status"), status);
	if (reason == NULL)
		ck_assert_ptr_null(jstr(data, "reason"));
	else
		ck_assert_str_eq(jstr(data, "reason"), reason);
	if (method == NULL)
		ck_assert_ptr_null(jstr(data, "payment_method"));
	else
		ck_assert_str_eq(jstr(data, "payment_method"), method);
	stored = db_value("SELECT mp_iso(expires_at) || ' ' || mp_iso(closed_at) || ' ' || status"
	    " FROM payment_sessions WHERE id = $1::uuid", sid);
	ck_assert_ptr_nonnull(stored);
	ck_assert_msg(strncmp(stored, jstr(data, "expires_at"), 25) == 0 &&
	    strncmp(stored + 26, jstr(data, "closed_at"), 25) == 0, "stored %s", stored);
	ck_assert_str_eq(stored + 52, status);
	return payload;
}

/* The C list of event types is the database's (mp_event_types, the subscription CHECK). */
START_TEST(test_types_agree)
{
	char list[EVENT_TYPES_ARRAY_MAX] = "";
	size_t i;

	for (i = 0; i < event_ntypes; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "," : "",
		    event_types[i]);
	ck_assert_str_eq(db_value("SELECT array_to_string(mp_event_types(), ',')", NULL), list);
}
END_TEST

/* payment.failed: both declining test cards, each with its reason. */
START_TEST(test_card_declined)
{
	static const char *const cards[] = { DECLINED, SHORT_CARD };
	static const char *const reasons[] = { "Card declined.",
	    "Card declined: insufficient funds." };
	char sid[37], user[32];
	struct http_resp r;

	snprintf(user, sizeof(user), "decline-%d", _i);
	open_session(shop.auth, "10.00", user, sid);
	pay_card(sid, cards[_i], &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, reasons[_i]));
	http_free(&r);
	json_object_put(session_event("payment.failed", sid, user, "failed", reasons[_i],
	    "test_card"));
	ck_assert_str_eq(events_of("payment.succeeded", sid), "0");
	ck_assert_str_eq(db_value("SELECT card_brand || ' ' || card_last4 FROM payment_sessions"
	    " WHERE id = $1::uuid", sid), _i == 0 ? "visa 0002" : "visa 9995");
}
END_TEST

/* payment.failed: a wallet short of the amount; the wallet keeps its money. */
START_TEST(test_wallet_short)
{
	char sid[37], acct[16];
	struct http_resp r;

	new_customer("1.00", acct);
	open_session(shop.auth, "10.00", "wallet-short", sid);
	pay_wallet(sid, acct, "1234", &r);
	ck_assert_int_eq(r.status, 200);
	http_free(&r);
	json_object_put(session_event("payment.failed", sid, "wallet-short", "failed",
	    "insufficient funds", "wallet"));
	ck_assert_int_eq(balance_of(acct), 100);
	assert_ledger_ok();
}
END_TEST

/* session.canceled: the customer cancels on the page. */
START_TEST(test_canceled)
{
	char sid[37];
	struct http_resp r;

	open_session(shop.auth, "10.00", "cancel-1", sid);
	post_form(sid, "action=cancel", &r);
	ck_assert_int_lt(r.status, 400);
	http_free(&r);
	json_object_put(session_event("session.canceled", sid, "cancel-1", "canceled", NULL, NULL));
	/* Canceled once: a second cancel changes nothing and queues nothing. */
	post_form(sid, "action=cancel", &r);
	http_free(&r);
	ck_assert_str_eq(events_of("session.canceled", sid), "1");
}
END_TEST

/* payment.succeeded through the same helper's queue: its body is as before. */
START_TEST(test_paid)
{
	struct json_object *payload, *data;
	char sid[37];

	paid_session(shop.auth, "10.00", "paid-1", NULL, sid);
	payload = receiver_event(event_about("payment.succeeded", "session_id", sid), secret,
	    "payment.succeeded", &data);
	ck_assert_str_eq(jstr(data, "user_id"), "paid-1");
	ck_assert_str_eq(jstr(data, "payment_method"), "test_card");
	ck_assert_str_eq(jstr(data, "transaction_id"), db_value("SELECT transaction_id FROM"
	    " payment_sessions WHERE id = $1::uuid", sid));
	ck_assert(matches(jstr(data, "paid_at"), ISO_UTC));
	json_object_put(payload);
}
END_TEST

/*
 * transfer.succeeded: one for the request, its transfers in request order with their
 * vendors and amounts, and the ledger transaction that moved them.
 */
START_TEST(test_transfer)
{
	static const char *const amounts[] = { "12.00", "24.50" };
	struct json_object *payload, *data, *list, *t;
	char accts[2][16], ids[2][40];
	const char *tx;
	int i;

	new_account(accts[0], "--kind vendor");
	new_account(accts[1], "--kind vendor");
	transfer_ok(&shop, 2, accts, amounts, ids);
	tx = db_value("SELECT ledger_transaction_id FROM transfers WHERE id = $1", ids[0]);
	ck_assert_ptr_nonnull(tx);
	payload = receiver_event(event_about("transfer.succeeded", "transaction_id", tx), secret,
	    "transfer.succeeded", &data);
	ck_assert_str_eq(jstr(data, "amount"), "36.50");
	ck_assert_str_eq(jstr(data, "currency"), "AFN");
	ck_assert(json_object_object_get_ex(data, "transfers", &list));
	ck_assert_int_eq(json_object_array_length(list), 2);
	for (i = 0; i < 2; i++) {
		t = json_object_array_get_idx(list, i);
		ck_assert_str_eq(jstr(t, "id"), ids[i]);
		ck_assert_str_eq(jstr(t, "account_number"), accts[i]);
		ck_assert_str_eq(jstr(t, "amount"), amounts[i]);
		ck_assert(matches(jstr(t, "created_at"), ISO_UTC));
	}
	json_object_put(payload);
}
END_TEST

/* refund.succeeded and transfer.reversed, made by their endpoints, carry whose they are. */
START_TEST(test_refund_reversal)
{
	struct json_object *payload, *data;
	char sid[37], vendor[16], tr[40], rid[40];
	struct http_resp r;

	paid_session(shop.auth, "10.00", "refund-1", NULL, sid);
	refund_post(shop.auth, sid, "{\"amount\":4.00}", &r);
	snprintf(rid, sizeof(rid), "%s", jstr(refund_of(&r, "Refund succeeded."), "id"));
	http_free(&r);
	payload = receiver_event(event_of("refund.succeeded", rid), secret, "refund.succeeded",
	    &data);
	ck_assert_str_eq(jstr(data, "session_id"), sid);
	ck_assert_str_eq(jstr(data, "user_id"), "refund-1");
	ck_assert_str_eq(jstr(data, "amount_refundable"), "6.00");
	json_object_put(payload);
	new_account(vendor, "--kind vendor");
	new_transfer(&shop, vendor, "5.00", tr);
	reversal_post(shop.auth, tr, "{\"amount\":2.00}", &r);
	payload = receiver_event(event_of("transfer.reversed", jstr(reversal_of(&r), "id")),
	    secret, "transfer.reversed", &data);
	http_free(&r);
	ck_assert_str_eq(jstr(data, "transfer_id"), tr);
	ck_assert_str_eq(jstr(data, "vendor_account_number"), vendor);
	ck_assert_str_eq(jstr(data, "amount_reversible"), "3.00");
	json_object_put(payload);
}
END_TEST

/* Moves sid's expiry to secs seconds from now (negative: past), as the owner. */
static void
expire_in(const char *sid, int secs)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "UPDATE payment_sessions SET created_at = now() - interval"
	    " '2 hours', expires_at = now() + make_interval(secs => %d) WHERE id = $1::uuid"
	    " RETURNING 1", secs);
	ck_assert_ptr_nonnull(db_value(sql, sid));
}

/*
 * The sweep: a session past its expires_at is stored expired within a few seconds
 * (expire_interval = 1 in tests/stack.sh), closed at its expires_at, with one
 * session.expired; its page says so and takes no payment.
 */
START_TEST(test_swept)
{
	struct json_object *payload;
	char sid[37], acct[16];

	new_customer("50.00", acct);
	open_session(shop.auth, "10.00", "sweep-1", sid);
	ck_assert_str_eq(status_of(sid), "open");
	expire_in(sid, -60);
	wait_value("SELECT status FROM payment_sessions WHERE id = $1::uuid", sid, "expired", 5000);
	payload = session_event("session.expired", sid, "sweep-1", "expired", NULL, NULL);
	ck_assert_str_eq(db_value("SELECT closed_at = expires_at FROM payment_sessions WHERE id ="
	    " $1::uuid", sid), "t");
	json_object_put(payload);
	assert_page_expired(sid, acct);
	/* Later sweeps leave it be: one event, ever. */
	sleep(2);
	ck_assert_str_eq(events_of("session.expired", sid), "1");
}
END_TEST

/*
 * A payment under way when the time runs out: it holds the session's row (here, a
 * transaction of the owner's that locked it before expires_at), the sweeps skip the row
 * rather than wait (a session expiring after it is swept meanwhile), the payment then
 * completes as begun, and no sweep ever expires the paid session.
 */
START_TEST(test_sweep_skips_payment)
{
	const char *p[1];
	char sid[37], next[37];
	PGconn *c;
	PGresult *res;

	open_session(shop.auth, "10.00", "race-late", sid);
	open_session(shop.auth, "10.00", "race-next", next);
	expire_in(sid, 2);
	expire_in(next, 3);
	p[0] = sid;
	c = db_hold("SELECT 1 FROM payment_sessions WHERE id = $1::uuid FOR UPDATE", 1, p);
	sleep(5);   /* past both expires_at, and several sweeps */
	ck_assert_str_eq(db_value("SELECT status || ' ' || mp_session_status(status, expires_at)"
	    " FROM payment_sessions WHERE id = $1::uuid", sid), "open expired");
	/* The sweeps went past the held row (SKIP LOCKED) to the one after it. */
	ck_assert_str_eq(status_of(next), "expired");
	res = PQexecParams(c, "SELECT outcome FROM mp_pay_test_card($1::uuid, 'visa', '4242',"
	    " NULL)", 1, NULL, p, NULL, NULL, 0);
	ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
	ck_assert_str_eq(PQgetvalue(res, 0, 0), "paid");
	PQclear(res);
	db_release(c);
	sleep(2);
	ck_assert_str_eq(status_of(sid), "paid");
	ck_assert_str_eq(events_of("session.expired", sid), "0");
	ck_assert_str_eq(events_of("payment.succeeded", sid), "1");
	assert_ledger_ok();
}
END_TEST

/*
 * Payments racing the sweep just past expires_at: the session is expired once, whoever
 * stores it (a sweep, or the first payment to lock the row), no payment goes through,
 * and there is exactly one session.expired.
 */
START_TEST(test_sweep_races_payments)
{
	struct form_post f[6];
	struct http_req reqs[6];
	struct http_resp out[6];
	char sid[37], acct[16], fields[256];
	int i;

	new_customer("100.00", acct);
	open_session(shop.auth, "10.00", "race-pay", sid);
	expire_in(sid, 1);
	for (i = 0; i < 6; i++) {
		form_post(sid, wallet_fields(acct, "1234", fields), &f[i]);
		reqs[i] = f[i].req;
	}
	usleep(900000);
	ck_assert_int_eq(http_parallel_reqs(6, reqs, out, NULL, NULL), 0);
	for (i = 0; i < 6; i++) {
		ck_assert_msg(out[i].status == 410 || out[i].status == 303 || out[i].status == 200,
		    "%ld", out[i].status);
		http_free(&out[i]);
	}
	/* Paid before the time ran out, or expired: never both, never twice. */
	wait_value("SELECT status IN ('paid', 'expired') FROM payment_sessions WHERE id ="
	    " $1::uuid", sid, "t", 5000);
	if (strcmp(status_of(sid), "paid") == 0) {
		ck_assert_str_eq(events_of("session.expired", sid), "0");
		ck_assert_int_eq(balance_of(acct), 9000);
	} else {
		ck_assert_str_eq(events_of("session.expired", sid), "1");
		ck_assert_str_eq(events_of("payment.succeeded", sid), "0");
		ck_assert_int_eq(balance_of(acct), 10000);
	}
	sleep(2);
	ck_assert_str_eq(db_valuev("SELECT count(*) FROM webhook_events WHERE type IN"
	    " ('session.expired', 'payment.succeeded') AND body::json->'data'->>'session_id' = $1",
	    1, (const char *const[]){ sid }), "1");
	assert_ledger_ok();
}
END_TEST

/* The merchant's subscription column, as text ("" for NULL: every type). */
static const char *
subscription(const char *merchant)
{
	return db_value("SELECT coalesce(array_to_string(webhook_event_types, ','), '')"
	    " FROM merchants WHERE id = $1::bigint", merchant);
}

/*
 * --events: only the chosen types are queued, the others recorded skipped; "all" again lifts
 * the filter. Malformed lists are refused by marketpayctl before any SQL, unknown types by
 * the database's CHECK too; each refusal leaves the subscription as it was.
 */
START_TEST(test_subscriptions)
{
	static const char *const bad[] = { "payment.refunded", "", "session.canceled,",
	    "session.canceled,session.canceled", "all,session.canceled", "SESSION.CANCELED" };
	struct merchant m;
	char sid[37], sid2[37], sec[128], state[6], skipped[64];
	struct http_resp r;
	PGconn *c;
	size_t i;

	new_merchant(&m, "1234", "10.00", false);
	ck_assert_str_eq(subscription(m.id), "");
	ck_assert_str_eq(ctl("merchant webhook %s --events session.canceled", m.id),
	    "session.canceled");
	for (i = 0; i < NELEM(bad); i++) {
		ck_assert_int_ne(sh(CTL "merchant webhook %s --events '%s' 2>/dev/null", m.id,
		    bad[i]), 0);
		ck_assert_str_eq(subscription(m.id), "session.canceled");
	}
	ck_assert_int_ne(sh(CTL "merchant webhook %s --keep-secret --events all 2>/dev/null",
	    m.id), 0);
	ck_assert_int_ne(sh(CTL "merchant webhook 999999999 --events all 2>/dev/null"), 0);
	c = db_connect_as(NULL);
	ck_assert_str_eq(db_state(c, "UPDATE merchants SET webhook_event_types ="
	    " '{payment.refunded}' WHERE id = 1", 0, NULL, state), "23514");
	ck_assert_str_eq(db_state(c, "UPDATE merchants SET webhook_event_types = '{}'"
	    " WHERE id = 1", 0, NULL, state), "23514");
	PQfinish(c);
	ck_assert_str_eq(subscription(m.id), "session.canceled");

	/* Without a webhook URL every event is recorded skipped (GET events lists it), never
	 * sent, subscribed or not (sql/025). */
	open_session(m.auth, "10.00", "sub-1", sid);
	pay_card(sid, DECLINED, &r);
	http_free(&r);
	ck_assert_str_eq(status_of(sid), "failed");
	open_session(m.auth, "10.00", "sub-2", sid2);
	post_form(sid2, "action=cancel", &r);
	http_free(&r);
	ck_assert_str_eq(db_value("SELECT string_agg(type || ' ' || status, ',' ORDER BY type)"
	    " FROM webhook_events WHERE merchant_id = $1::bigint", m.id),
	    "payment.failed skipped,session.canceled skipped");
	/* Nor tried: longer than the daemon's poll, and no attempt recorded (before sql/025
	 * such events were pending and went through every attempt to dead). */
	usleep(1500 * 1000);
	ck_assert_str_eq(db_value("SELECT count(*) || ' ' || count(a.id) FROM webhook_events e"
	    " LEFT JOIN webhook_attempts a ON a.event_id = e.id WHERE e.merchant_id = $1::bigint"
	    " AND e.status = 'skipped'", m.id), "2 0");
	snprintf(skipped, sizeof(skipped), "%s", db_value("SELECT id FROM webhook_events WHERE"
	    " merchant_id = $1::bigint AND type = 'payment.failed'", m.id));

	/* With a URL: the secret first, the types stored with it; then every type again. */
	snprintf(sec, sizeof(sec), "%s", ctl("merchant webhook %s --url %s --events"
	    " payment.failed,session.expired", m.id, getenv("MARKETPAY_WEBHOOK_RECEIVER")));
	ck_assert(strncmp(sec, "whsec_", 6) == 0);
	ck_assert_str_eq(subscription(m.id), "payment.failed,session.expired");
	/* With the URL: a decline's event (subscribed) is queued, a cancel's is skipped. */
	open_session(m.auth, "10.00", "sub-4", sid2);
	post_form(sid2, "action=cancel", &r);
	http_free(&r);
	open_session(m.auth, "10.00", "sub-5", sid);
	pay_card(sid, DECLINED, &r);
	http_free(&r);
	ck_assert_str_eq(db_value("SELECT string_agg(type || ' ' || (status = 'skipped'), ','"
	    " ORDER BY type, created_at) FROM webhook_events WHERE merchant_id = $1::bigint",
	    m.id), "payment.failed true,payment.failed false,session.canceled true,"
	    "session.canceled true");
	/* The skipped decline goes out once redelivered, now that there is a URL. */
	ck_assert_str_eq(ctl("webhook redeliver %s", skipped), skipped);
	wait_value("SELECT status FROM webhook_events WHERE id = $1", skipped, "delivered", 10000);
	ck_assert_str_eq(ctl("merchant webhook %s --events all", m.id), "all");
	ck_assert_str_eq(subscription(m.id), "");
	open_session(m.auth, "10.00", "sub-3", sid);
	pay_card(sid, DECLINED, &r);
	http_free(&r);
	ck_assert_str_eq(events_of("payment.failed", sid), "1");
}
END_TEST

static void
setup(void)
{
	new_merchant(&shop, "1234", "1000.00", true);
	merchant_webhook(&shop, secret);
	service_key_load(shop.auth);
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("events", "lifecycle events", 60, &t);

	tcase_add_test(t, test_types_agree);
	tcase_add_loop_test(t, test_card_declined, 0, 2);
	tcase_add_test(t, test_wallet_short);
	tcase_add_test(t, test_canceled);
	tcase_add_test(t, test_paid);
	tcase_add_test(t, test_transfer);
	tcase_add_test(t, test_refund_reversal);
	tcase_add_test(t, test_swept);
	tcase_add_test(t, test_sweep_skips_payment);
	tcase_add_test(t, test_sweep_races_payments);
	tcase_add_test(t, test_subscriptions);
	return fixture_main(s, setup, service_key_free);
}
