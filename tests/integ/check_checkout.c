/*
 * Integration tests of the hosted checkout page and its payments, against the real stack.
 * What guards the ledger the payments post to: check_ledger.c.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "crypto.h"
#include "checkout_form.h"
#include "fixture.h"
#include "pin.h"
#include "http.h"

#define SUCCESS_URL "https://shop.example/done?a=1#top"
#define FAILURE_URL "https://shop.example/failed"

/* A new session of merchant A for price (JSON number text); its id into id[37]. */
static void
checkout_session(const char *price, bool urls, char id[37])
{
	char body[1024];

	snprintf(body, sizeof(body), "{\"items\":[{\"id\":\"sku-1\",\"name\":\"Tea <b>&</b>\","
	    "\"price\":%s}],\"user_id\":\"order 7&x\",\"email\":\"buyer@example.com\"%s}", price,
	    urls ? ",\"redirect_success_url\":\"" SUCCESS_URL "\",\"redirect_failure_url\":\""
	    FAILURE_URL "\"" : "");
	new_session(fx.auth_a, body, id);
}

START_TEST(test_page)
{
	struct http_resp r;
	char id[37], buf[512];

	checkout_session("12.50", true, id);
	get_page(id, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(http_header(&r, "Content-Type", buf, sizeof(buf)), "text/html; charset=utf-8");
	ck_assert_ptr_nonnull(strstr(http_header(&r, "Content-Security-Policy", buf, sizeof(buf)),
	    "default-src 'none'"));
	ck_assert_ptr_nonnull(strstr(buf, "form-action 'self' https://shop.example"));
	ck_assert_str_eq(http_header(&r, "X-Frame-Options", buf, sizeof(buf)), "DENY");
	ck_assert_str_eq(http_header(&r, "Referrer-Policy", buf, sizeof(buf)), "no-referrer");
	ck_assert_str_eq(http_header(&r, "Cache-Control", buf, sizeof(buf)), "no-store");
	ck_assert_str_eq(http_header(&r, "X-Content-Type-Options", buf, sizeof(buf)), "nosniff");
	ck_assert_ptr_null(strstr(strstr(r.headers, "nosniff") + 1, "nosniff"));  /* once */
	ck_assert_ptr_nonnull(strstr(r.body, "Tea &lt;b&gt;&amp;&lt;/b&gt;"));
	ck_assert_ptr_null(strstr(r.body, "<b>"));
	ck_assert_ptr_nonnull(strstr(r.body, "Shop A"));
	ck_assert_ptr_nonnull(strstr(r.body, "12.50 AFN"));
	ck_assert_ptr_nonnull(strstr(r.body, csrf_of(id)));
	ck_assert_ptr_null(strstr(r.body, "<script"));
	http_free(&r);
}
END_TEST

START_TEST(test_not_found)
{
	static const char *const paths[] = { "/checkout/00000000-0000-4000-8000-000000000000",
	    "/checkout/nope", "/checkout/'%20OR%201=1--" };
	struct http_resp r;
	char buf[128];
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		ck_assert_int_eq(http_do("GET", paths[i], NULL, NULL, 0, &r), 0);
		ck_assert_int_eq(r.status, 404);
		ck_assert_str_eq(http_header(&r, "Content-Type", buf, sizeof(buf)),
		    "text/html; charset=utf-8");
		ck_assert_ptr_nonnull(strstr(r.body, "Page not found"));
		ck_assert_ptr_null(strstr(r.body, "ERROR"));
		http_free(&r);
	}
}
END_TEST

START_TEST(test_wallet_success)
{
	char id[37], acct[16], buf[512], merchant_before[32];
	struct http_resp r;

	snprintf(merchant_before, sizeof(merchant_before), "%s", db_value("SELECT coalesce((SELECT"
	    " balance FROM accounts WHERE merchant_id = $1::bigint AND kind = 'merchant'), 0)",
	    fx.merchant_a));
	new_customer("100.00", acct);
	checkout_session("15.50", true, id);
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	snprintf(buf + 256, 256, "https://shop.example/done?a=1&session_id=%s&user_id=order%%207%%26x#top", id);
	ck_assert_str_eq(http_header(&r, "Location", buf, 256), buf + 256);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
	ck_assert_int_eq(balance_of(acct), 8450);
	ck_assert_int_eq(atoll(db_value("SELECT balance FROM accounts WHERE merchant_id = $1::bigint"
	    " AND kind = 'merchant'", fx.merchant_a)), atoll(merchant_before) + 1550);
	/* The webhook event committed with the payment carries the merchant's user_id. */
	ck_assert_str_eq(db_value("SELECT e.body::json->'data'->>'user_id' || '|' ||"
	    " (e.body::json->'data'->>'amount') || '|' || (e.body::json->'data'->>'email') || '|' ||"
	    " (e.body::json->'data'->'items'->0->>'name') || '|' || (e.body::json->>'type')"
	    " FROM webhook_events e JOIN payment_sessions s ON e.body::json->'data'->>'session_id'"
	    " = s.id::text WHERE s.id = $1::uuid", id),
	    "order 7&x|15.50|buyer@example.com|Tea <b>&</b>|payment.succeeded");
	assert_ledger_ok();
	/* Paying again (a retry) moves nothing and lands where the payment did. */
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	ck_assert_ptr_nonnull(strstr(r.headers, "session_id="));
	http_free(&r);
	ck_assert_int_eq(balance_of(acct), 8450);
}
END_TEST

START_TEST(test_wrong_pin_then_right)
{
	char id[37], acct[16];
	struct http_resp r;

	new_customer("50.00", acct);
	checkout_session("10", true, id);
	pay_wallet(id, acct, "9999", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "wrong PIN"));
	http_free(&r);
	ck_assert_str_eq(status_of(id), "open");
	ck_assert_str_eq(db_value("SELECT pin_failures FROM accounts WHERE account_number = $1",
	    acct), "1");
	ck_assert_int_eq(balance_of(acct), 5000);
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
	ck_assert_str_eq(db_value("SELECT pin_failures FROM accounts WHERE account_number = $1",
	    acct), "0");
	ck_assert_int_eq(balance_of(acct), 4000);
}
END_TEST

START_TEST(test_pin_lockout)
{
	char id[37], acct[16];
	struct http_resp r;
	int i;

	new_customer("50.00", acct);
	checkout_session("10", true, id);
	for (i = 0; i < 5; i++) {
		pay_wallet(id, acct, "0000", &r);
		ck_assert_int_eq(r.status, 200);
		http_free(&r);
	}
	/* Locked: even the right PIN is refused, and nothing moves. */
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "locked"));
	http_free(&r);
	ck_assert_str_eq(status_of(id), "open");
	ck_assert_int_eq(balance_of(acct), 5000);
	/* When the lock has run out, the right PIN works again. */
	ck_assert_ptr_nonnull(db_value("UPDATE accounts SET pin_locked_until = now() - interval"
	    " '1 second' WHERE account_number = $1 RETURNING 1", acct));
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
}
END_TEST

/* After pin_max_locks timed locks the next is for good: only the operator lifts it. */
START_TEST(test_pin_hard_lock)
{
	char id[37], acct[16];
	struct http_resp r;
	int i;

	new_customer("50.00", acct);
	checkout_session("10", true, id);
	/* Three timed locks already behind it (escalation itself: check_transfer_race). */
	ck_assert_ptr_nonnull(db_value("UPDATE accounts SET pin_locks = 3 WHERE account_number ="
	    " $1 RETURNING 1", acct));
	for (i = 0; i < 5; i++) {
		pay_wallet(id, acct, "0000", &r);
		ck_assert_int_eq(r.status, 200);
		if (i == 4)
			ck_assert_msg(strstr(r.body, "locked until the service") != NULL, "%s", r.body);
		http_free(&r);
	}
	ck_assert_str_eq(db_value("SELECT pin_locked_until = 'infinity' FROM accounts WHERE"
	    " account_number = $1", acct), "t");
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "locked until the service"));
	http_free(&r);
	ck_assert_str_eq(status_of(id), "open");
	ck_assert_int_eq(sh(CTL "account unlock %s >/dev/null", acct), 0);
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
	ck_assert_str_eq(db_value("SELECT pin_failures || '/' || pin_locks FROM accounts WHERE"
	    " account_number = $1", acct), "0/0");
}
END_TEST

/*
 * Equal PINs of different owners have different digests; a digest of the older scheme (the
 * PIN alone) still opens the wallet, is counted when wrong, and is replaced by the
 * per-owner digest on the first right PIN.
 */
START_TEST(test_pin_digest_per_owner)
{
	char id[37], acct[16], other[16], digest[PIN_DIGEST_LEN], legacy[PIN_DIGEST_LEN];
	char pepper[512], owner[64];
	struct http_resp r;

	new_customer("50.00", acct);
	new_customer(NULL, other);
	ck_assert_int_eq(sh("printf %%s 1234 | " CTL "merchant pin %s >/dev/null",
	    fx.merchant_b), 0);
	ck_assert_str_eq(db_valuev("SELECT count(DISTINCT d) || '/' || count(*) FROM (SELECT"
	    " pin_digest d FROM accounts WHERE account_number IN ($1, $2) UNION ALL SELECT"
	    " pin_digest FROM merchants WHERE id = $3::bigint) x", 3,
	    (const char *const[]){ acct, other, fx.merchant_b }), "3/3");
	/* The wallet's PIN as the older scheme stored it. */
	snprintf(pepper, sizeof(pepper), "%s/pin-pepper", getenv("MARKETPAY_STACK_DIR"));
	snprintf(owner, sizeof(owner), "account:%s", acct);
	ck_assert_int_eq(pin_digest(pepper, owner, "1234", digest, legacy), 0);
	ck_assert_str_eq(db_valuev("SELECT pin_digest = $2::bytea FROM accounts WHERE"
	    " account_number = $1", 2, (const char *const[]){ acct, digest }), "t");
	ck_assert_ptr_nonnull(db_valuev("UPDATE accounts SET pin_digest = $2::bytea, pin_scheme = 1"
	    " WHERE account_number = $1 RETURNING 1", 2, (const char *const[]){ acct, legacy }));
	checkout_session("10", true, id);
	pay_wallet(id, acct, "9999", &r);
	ck_assert_int_eq(r.status, 200);
	http_free(&r);
	ck_assert_str_eq(db_value("SELECT pin_failures || '/' || pin_scheme FROM accounts WHERE"
	    " account_number = $1", acct), "1/1");
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
	ck_assert_str_eq(db_valuev("SELECT pin_scheme || '/' || pin_failures || '/' ||"
	    " (pin_digest = $2::bytea) FROM accounts WHERE account_number = $1", 2,
	    (const char *const[]){ acct, digest }), "2/0/true");
	crypto_wipe(legacy, sizeof(legacy));
}
END_TEST

START_TEST(test_insufficient_funds)
{
	char id[37], acct[16], buf[256];
	struct http_resp r;

	new_customer("1.00", acct);
	checkout_session("10", true, id);
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	ck_assert_ptr_nonnull(strstr(http_header(&r, "Location", buf, sizeof(buf)),
	    FAILURE_URL "?session_id="));
	http_free(&r);
	ck_assert_str_eq(status_of(id), "failed");
	ck_assert_int_eq(balance_of(acct), 100);
	/* No payment.succeeded: the failure's own event alone (check_events has its body). */
	ck_assert_str_eq(db_value("SELECT string_agg(type, ',') FROM webhook_events WHERE body"
	    " LIKE '%' || $1 || '%'", id), "payment.failed");
	assert_ledger_ok();
}
END_TEST

START_TEST(test_expired)
{
	char id[37], acct[16];

	new_customer("50.00", acct);
	checkout_session("10", true, id);
	ck_assert_ptr_nonnull(db_value("UPDATE payment_sessions SET created_at = now() - interval"
	    " '2 hours', expires_at = now() - interval '1 hour' WHERE id = $1::uuid RETURNING 1", id));
	assert_page_expired(id, acct);
	ck_assert_str_eq(db_value("SELECT mp_session_status(status, expires_at) FROM"
	    " payment_sessions WHERE id = $1::uuid", id), "expired");
}
END_TEST

START_TEST(test_cancel)
{
	char id[37], acct[16], buf[256];
	struct http_resp r;

	new_customer("50.00", acct);
	checkout_session("10", true, id);
	post_form(id, "action=cancel", &r);
	ck_assert_int_eq(r.status, 303);
	ck_assert_ptr_nonnull(strstr(http_header(&r, "Location", buf, sizeof(buf)),
	    FAILURE_URL "?session_id="));
	http_free(&r);
	ck_assert_str_eq(status_of(id), "canceled");
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "canceled"));
	http_free(&r);
	ck_assert_int_eq(balance_of(acct), 5000);
}
END_TEST

/* A session refunded in full was paid: its page says so, and it cannot be paid again. */
START_TEST(test_refunded)
{
	char id[37], acct[16];
	struct http_resp r;

	new_customer("50.00", acct);
	checkout_session("10", true, id);
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	http_free(&r);
	ck_assert_int_eq(balance_of(acct), 4000);
	ck_assert_ptr_nonnull(db_valuev("SELECT mp_refund_session(merchant_id, id, NULL, NULL,"
	    " NULL, NULL) FROM payment_sessions WHERE id = $1::uuid", 1,
	    (const char *const[]){ id }));
	ck_assert_str_eq(status_of(id), "refunded");
	ck_assert_int_eq(balance_of(acct), 5000);
	get_page(id, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "Payment refunded"));
	ck_assert_ptr_null(strstr(r.body, "name=\"csrf\""));
	http_free(&r);
	/* A form kept open in a tab lands on the result and moves nothing. */
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_lt(r.status, 500);
	http_free(&r);
	ck_assert_int_eq(balance_of(acct), 5000);
	ck_assert_str_eq(status_of(id), "refunded");
	assert_ledger_ok();
}
END_TEST

START_TEST(test_csrf)
{
	const char *h[] = { FORM_CT, NULL };
	char id[37], acct[16], path[128], body[256];
	struct http_resp r;

	new_customer("50.00", acct);
	checkout_session("10", true, id);
	snprintf(path, sizeof(path), "/checkout/%s", id);
	snprintf(body, sizeof(body), "method=wallet&action=pay&account_number=%s&pin=1234", acct);
	ck_assert_int_eq(http_do("POST", path, h, body, -1, &r), 0);
	ck_assert_int_eq(r.status, 403);
	http_free(&r);
	/* Another session's token does not fit this one. */
	checkout_session("10", true, body + 200);
	snprintf(body, sizeof(body), "csrf=%s&method=wallet&action=pay&account_number=%s&pin=1234",
	    csrf_of(body + 200), acct);
	ck_assert_int_eq(http_do("POST", path, h, body, -1, &r), 0);
	ck_assert_int_eq(r.status, 403);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "open");
	ck_assert_int_eq(balance_of(acct), 5000);
	/* A form post needs the form content type. */
	h[0] = JSON_CT;
	ck_assert_int_eq(http_do("POST", path, h, "{}", -1, &r), 0);
	ck_assert_int_eq(r.status, 415);
	http_free(&r);
}
END_TEST

START_TEST(test_double_submit_race)
{
	enum { N = 16 };
	const char *h[] = { FORM_CT, NULL };
	char id[37], acct[16], path[128], body[512];
	struct http_resp r[N];
	int i, redirects = 0;

	new_customer("100.00", acct);
	checkout_session("30", true, id);
	snprintf(path, sizeof(path), "/checkout/%s", id);
	snprintf(body, sizeof(body), "csrf=%s&method=wallet&action=pay&account_number=%s&pin=1234",
	    csrf_of(id), acct);
	ck_assert_int_eq(http_parallel(N, path, h, body, r), 0);
	for (i = 0; i < N; i++) {
		ck_assert(r[i].status == 303 || r[i].status == 200);
		redirects += r[i].status == 303;
		http_free(&r[i]);
	}
	/*
	 * Exactly one payment: one debit, one ledger transaction; every submit, the one that
	 * paid and those that found it paid, lands on the success page.
	 */
	ck_assert_int_eq(redirects, N);
	ck_assert_int_eq(balance_of(acct), 7000);
	ck_assert_str_eq(db_value("SELECT count(*) FROM ledger_transactions WHERE reference ="
	    " 'session ' || $1", id), "1");
	ck_assert_str_eq(status_of(id), "paid");
	assert_ledger_ok();
}
END_TEST

struct card_case {
	const char *number;
	int http_status;
	const char *status;   /* the session's afterwards */
	const char *needle;   /* in the Location (303) or the page (200) */
};

static const struct card_case cards[] = {
	{ "4242+4242+4242+4242", 303, "paid", "https://shop.example/done?a=1&session_id=" },
	{ "4000000000000002", 303, "failed", FAILURE_URL "?session_id=" },
	{ "4000000000009995", 303, "failed", FAILURE_URL "?session_id=" },
	{ "4242424242424241", 200, "open", "card number is not valid" },
	{ "5555555555554444", 200, "open", "not a sandbox test card" },
	{ "42424242", 200, "open", "card number is not valid" },
};

START_TEST(test_test_cards)
{
	const struct card_case *c = &cards[_i];
	char id[37], buf[256];
	struct http_resp r;

	checkout_session("12.34", true, id);
	pay_card(id, c->number, &r);
	ck_assert_int_eq(r.status, c->http_status);
	if (r.status == 303)
		ck_assert_ptr_nonnull(strstr(http_header(&r, "Location", buf, sizeof(buf)), c->needle));
	else
		ck_assert_ptr_nonnull(strstr(r.body, c->needle));
	http_free(&r);
	ck_assert_str_eq(status_of(id), c->status);
	/* Only brand and last four are kept: the number is nowhere in the session row. */
	ck_assert_str_eq(db_value("SELECT count(*) FROM payment_sessions s WHERE"
	    " row_to_json(s)::text LIKE '%4242424242%' OR row_to_json(s)::text LIKE '%00000002%'",
	    NULL), "0");
	if (strcmp(c->status, "paid") == 0)
		ck_assert_str_eq(db_value("SELECT payment_method || ' ' || card_brand || ' ' ||"
		    " card_last4 FROM payment_sessions WHERE id = $1::uuid", id), "test_card visa 4242");
}
END_TEST

START_TEST(test_card_form_errors)
{
	static const char *const bad[][2] = {
		{ "card_expiry=01%2F20&card_cvc=123", "expiry date" },
		{ "card_expiry=13%2F99&card_cvc=123", "expiry date" },
		{ "card_expiry=12%2F99&card_cvc=12", "security code" },
		{ "card_expiry=12%2F99&card_cvc=12a", "security code" },
	};
	char id[37], fields[256];
	struct http_resp r;
	size_t i;

	checkout_session("5", true, id);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(fields, sizeof(fields), "method=test_card&action=pay"
		    "&card_number=4242424242424242&%s", bad[i][0]);
		post_form(id, fields, &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_msg(strstr(r.body, bad[i][1]) != NULL, "%s: no '%s'", bad[i][0], bad[i][1]);
		http_free(&r);
	}
	ck_assert_str_eq(status_of(id), "open");
}
END_TEST

/*
 * Form fields that are not valid UTF-8, or not of their field's shape, are refused before
 * any query: the page again with the reason, the session open, nothing stored or counted.
 * {acct} in fields is the customer's account number.
 */
static const struct {
	const char *fields;
	const char *message;
} malformed[] = {
	{ "method=wallet&action=pay&account_number=%ff%fe&pin=1234", "not text" },
	{ "method=wallet&action=pay&account_number=%c0%ae%c0%ae&pin=1234", "not text" },
	{ "method=wallet&action=pay&account_number={acct}%ed%a0%80&pin=1234", "not text" },
	{ "method=wallet&action=pay&account_number=%ef%bc%a3%ef%bc%b5&pin=1234",
	  "two capital letters" },
	{ "method=wallet&action=pay&account_number=cu0123456789&pin=1234", "two capital letters" },
	{ "method=wallet&action=pay&account_number={acct}&pin=%ff%fe", "not text" },
	{ "method=wallet&action=pay&account_number={acct}&pin=12a4", "4 to 12 digits" },
	{ "method=%ff&action=pay&account_number={acct}&pin=1234", "not text" },
	{ "method=wallet&action=%fe&account_number={acct}&pin=1234", "not text" },
	{ "method=test_card&action=pay&card_number=4242424242424242%ff&card_expiry=12%2F99"
	  "&card_cvc=123", "not text" },
	{ "method=test_card&action=pay&card_number=4242424242424242&card_expiry=%ed%a0%80"
	  "&card_cvc=123", "not text" },
	{ "method=test_card&action=pay&card_number=4242424242424242&card_expiry=12%2F99"
	  "&card_cvc=%ff%fe%fd", "not text" },
};

START_TEST(test_malformed_fields)
{
	char id[37], acct[16], fields[512], before[FOOTPRINT_LEN];
	const char *at = strstr(malformed[_i].fields, "{acct}");
	struct http_resp r;

	new_customer("50.00", acct);
	checkout_session("10", true, id);
	if (at != NULL)
		snprintf(fields, sizeof(fields), "%.*s%s%s", (int)(at - malformed[_i].fields),
		    malformed[_i].fields, acct, at + 6);
	else
		snprintf(fields, sizeof(fields), "%s", malformed[_i].fields);
	snprintf(before, sizeof(before), "%s", db_footprint(id, acct));
	ck_assert_ptr_nonnull(strstr(before, "open/-/5000/0/"));
	post_form(id, fields, &r);
	ck_assert_msg(r.status == 200, "%s: %ld", fields, r.status);
	ck_assert_msg(strstr(r.body, malformed[_i].message) != NULL, "%s: no '%s'", fields,
	    malformed[_i].message);
	ck_assert_ptr_nonnull(strstr(r.body, "p class=\"error\""));
	ck_assert_ptr_nonnull(strstr(r.body, csrf_of(id)));   /* the forms again */
	ck_assert_ptr_null(strstr(r.body, "\xff"));
	http_free(&r);
	ck_assert_str_eq(db_footprint(id, acct), before);
	/* The positive control: the same session, the fields well-formed, pays. */
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
	ck_assert_int_eq(balance_of(acct), 4000);
}
END_TEST

START_TEST(test_own_result_page)
{
	char id[37], acct[16];
	struct http_resp r;

	new_customer("20.00", acct);
	checkout_session("10", false, id);
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "Payment received"));
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("checkout", "page", 60, &t);

	tcase_add_test(t, test_page);
	tcase_add_test(t, test_not_found);
	tcase_add_test(t, test_wallet_success);
	tcase_add_test(t, test_wrong_pin_then_right);
	tcase_add_test(t, test_pin_lockout);
	tcase_add_test(t, test_pin_hard_lock);
	tcase_add_test(t, test_pin_digest_per_owner);
	tcase_add_test(t, test_insufficient_funds);
	tcase_add_test(t, test_expired);
	tcase_add_test(t, test_cancel);
	tcase_add_test(t, test_refunded);
	tcase_add_test(t, test_csrf);
	tcase_add_test(t, test_double_submit_race);
	tcase_add_loop_test(t, test_test_cards, 0, sizeof(cards) / sizeof(cards[0]));
	tcase_add_test(t, test_card_form_errors);
	tcase_add_loop_test(t, test_malformed_fields, 0, sizeof(malformed) / sizeof(malformed[0]));
	tcase_add_test(t, test_own_result_page);
	return fixture_main(s, NULL, NULL);
}
