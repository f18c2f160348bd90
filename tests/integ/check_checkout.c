/* Integration tests of the hosted checkout page and its payments, against the real stack. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <curl/curl.h>

#include "crypto.h"
#include "checkout_form.h"
#include "fixture.h"
#include "pin.h"
#include "http.h"

#define SUCCESS_URL "https://shop.example/done?a=1#top"
#define FAILURE_URL "https://shop.example/failed"

/* A new session of merchant A for amount (JSON number text); its id into id[37]. */
static void
new_session(const char *price, bool urls, char id[37])
{
	char body[1024];
	const char *h[] = { "Content-Type: application/json", fx.auth_a, NULL };
	struct http_resp r;

	snprintf(body, sizeof(body), "{\"items\":[{\"id\":\"sku-1\",\"name\":\"Tea <b>&</b>\","
	    "\"price\":%s}],\"user_id\":\"order 7&x\",\"email\":\"buyer@example.com\"%s}", price,
	    urls ? ",\"redirect_success_url\":\"" SUCCESS_URL "\",\"redirect_failure_url\":\""
	    FAILURE_URL "\"" : "");
	ck_assert_int_eq(http_do("POST", "/api/v1/payment/create-session", h, body, -1, &r), 0);
	ck_assert_int_eq(r.status, 200);
	snprintf(id, 37, "%s", http_json_str(&r, "session_id"));
	http_free(&r);
}

/* A customer account holding balance (text), with PIN 1234; its number into acct[16]. */
static void
new_customer(const char *balance, char acct[16])
{
	snprintf(acct, 16, "%s", ctl("account create --kind customer"));
	ck_assert(strlen(acct) == 12);
	if (balance != NULL)
		ck_assert_ptr_nonnull(ctl("account deposit %s %s", acct, balance));
	ck_assert_int_eq(sh("echo 1234 | \"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" account pin %s"
	    " >/dev/null", acct), 0);
}



static void
pay_wallet(const char *id, const char *acct, const char *pin, struct http_resp *r)
{
	char fields[256];

	snprintf(fields, sizeof(fields), "method=wallet&action=pay&account_number=%s&pin=%s", acct,
	    pin);
	post_form(id, fields, r);
}

static const char *
status_of(const char *id)
{
	return db_value("SELECT status FROM payment_sessions WHERE id = $1::uuid", id);
}

static const char *
balance_of(const char *acct)
{
	return db_value("SELECT balance FROM accounts WHERE account_number = $1", acct);
}

static void
assert_ledger_ok(void)
{
	ck_assert_int_eq(sh("\"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" ledger verify >/dev/null"), 0);
}

START_TEST(test_page)
{
	struct http_resp r;
	char id[37], path[128], buf[512];

	new_session("12.50", true, id);
	snprintf(path, sizeof(path), "/checkout/%s", id);
	ck_assert_int_eq(http_do("GET", path, NULL, NULL, 0, &r), 0);
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
	new_session("15.50", true, id);
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	snprintf(buf + 256, 256, "https://shop.example/done?a=1&session_id=%s&user_id=order%%207%%26x#top", id);
	ck_assert_str_eq(http_header(&r, "Location", buf, 256), buf + 256);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
	ck_assert_str_eq(balance_of(acct), "8450");
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
	ck_assert_str_eq(balance_of(acct), "8450");
}
END_TEST

START_TEST(test_wrong_pin_then_right)
{
	char id[37], acct[16];
	struct http_resp r;

	new_customer("50.00", acct);
	new_session("10", true, id);
	pay_wallet(id, acct, "9999", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "wrong PIN"));
	http_free(&r);
	ck_assert_str_eq(status_of(id), "open");
	ck_assert_str_eq(db_value("SELECT pin_failures FROM accounts WHERE account_number = $1",
	    acct), "1");
	ck_assert_str_eq(balance_of(acct), "5000");
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
	ck_assert_str_eq(db_value("SELECT pin_failures FROM accounts WHERE account_number = $1",
	    acct), "0");
	ck_assert_str_eq(balance_of(acct), "4000");
}
END_TEST

START_TEST(test_pin_lockout)
{
	char id[37], acct[16];
	struct http_resp r;
	int i;

	new_customer("50.00", acct);
	new_session("10", true, id);
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
	ck_assert_str_eq(balance_of(acct), "5000");
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
	new_session("10", true, id);
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
	ck_assert_int_eq(sh("\"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" account unlock %s"
	    " >/dev/null", acct), 0);
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
	ck_assert_int_eq(sh("printf %%s 1234 | \"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" merchant"
	    " pin %s >/dev/null", fx.merchant_b), 0);
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
	new_session("10", true, id);
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
	new_session("10", true, id);
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	ck_assert_ptr_nonnull(strstr(http_header(&r, "Location", buf, sizeof(buf)),
	    FAILURE_URL "?session_id="));
	http_free(&r);
	ck_assert_str_eq(status_of(id), "failed");
	ck_assert_str_eq(balance_of(acct), "100");
	ck_assert_str_eq(db_value("SELECT count(*) FROM webhook_events WHERE body LIKE '%' || $1"
	    " || '%'", id), "0");
	assert_ledger_ok();
}
END_TEST

START_TEST(test_expired)
{
	char id[37], acct[16], path[128];
	struct http_resp r;

	new_customer("50.00", acct);
	new_session("10", true, id);
	ck_assert_ptr_nonnull(db_value("UPDATE payment_sessions SET created_at = now() - interval"
	    " '2 hours', expires_at = now() - interval '1 hour' WHERE id = $1::uuid RETURNING 1", id));
	snprintf(path, sizeof(path), "/checkout/%s", id);
	ck_assert_int_eq(http_do("GET", path, NULL, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 410);
	ck_assert_ptr_nonnull(strstr(r.body, "expired"));
	ck_assert_ptr_null(strstr(r.body, "name=\"csrf\""));
	http_free(&r);
	/* A form kept open in a tab cannot pay it either. */
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 410);
	http_free(&r);
	ck_assert_str_eq(balance_of(acct), "5000");
	ck_assert_str_eq(db_value("SELECT mp_session_status(status, expires_at) FROM"
	    " payment_sessions WHERE id = $1::uuid", id), "expired");
}
END_TEST

START_TEST(test_cancel)
{
	char id[37], acct[16], buf[256];
	struct http_resp r;

	new_customer("50.00", acct);
	new_session("10", true, id);
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
	ck_assert_str_eq(balance_of(acct), "5000");
}
END_TEST

START_TEST(test_csrf)
{
	const char *h[] = { FORM_CT, NULL };
	char id[37], acct[16], path[128], body[256];
	struct http_resp r;

	new_customer("50.00", acct);
	new_session("10", true, id);
	snprintf(path, sizeof(path), "/checkout/%s", id);
	snprintf(body, sizeof(body), "method=wallet&action=pay&account_number=%s&pin=1234", acct);
	ck_assert_int_eq(http_do("POST", path, h, body, -1, &r), 0);
	ck_assert_int_eq(r.status, 403);
	http_free(&r);
	/* Another session's token does not fit this one. */
	new_session("10", true, body + 200);
	snprintf(body, sizeof(body), "csrf=%s&method=wallet&action=pay&account_number=%s&pin=1234",
	    csrf_of(body + 200), acct);
	ck_assert_int_eq(http_do("POST", path, h, body, -1, &r), 0);
	ck_assert_int_eq(r.status, 403);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "open");
	ck_assert_str_eq(balance_of(acct), "5000");
	/* A form post needs the form content type. */
	h[0] = "Content-Type: application/json";
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
	new_session("30", true, id);
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
	ck_assert_str_eq(balance_of(acct), "7000");
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
	char id[37], fields[256], buf[256];
	struct http_resp r;

	new_session("12.34", true, id);
	snprintf(fields, sizeof(fields), "method=test_card&action=pay&card_number=%s"
	    "&card_expiry=12%%2F99&card_cvc=123", c->number);
	post_form(id, fields, &r);
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

	new_session("5", true, id);
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

/* What a refused form post leaves as it was: session, customer, ledger and outbox. */
static const char *
pay_footprint(const char *id, const char *acct)
{
	const char *p[2] = { id, acct };

	return db_valuev("SELECT (SELECT status || '/' || coalesce(payment_method, '-') FROM"
	    " payment_sessions WHERE id = $1::uuid) || '/' || (SELECT balance || '/' ||"
	    " pin_failures FROM accounts WHERE account_number = $2) || '/' || (SELECT count(*)"
	    " FROM ledger_transactions) || '/' || (SELECT count(*) FROM webhook_events)", 2, p);
}

START_TEST(test_malformed_fields)
{
	char id[37], acct[16], fields[512], before[256];
	const char *at = strstr(malformed[_i].fields, "{acct}");
	struct http_resp r;

	new_customer("50.00", acct);
	new_session("10", true, id);
	if (at != NULL)
		snprintf(fields, sizeof(fields), "%.*s%s%s", (int)(at - malformed[_i].fields),
		    malformed[_i].fields, acct, at + 6);
	else
		snprintf(fields, sizeof(fields), "%s", malformed[_i].fields);
	snprintf(before, sizeof(before), "%s", pay_footprint(id, acct));
	ck_assert_ptr_nonnull(strstr(before, "open/-/5000/0/"));
	post_form(id, fields, &r);
	ck_assert_msg(r.status == 200, "%s: %ld", fields, r.status);
	ck_assert_msg(strstr(r.body, malformed[_i].message) != NULL, "%s: no '%s'", fields,
	    malformed[_i].message);
	ck_assert_ptr_nonnull(strstr(r.body, "p class=\"error\""));
	ck_assert_ptr_nonnull(strstr(r.body, csrf_of(id)));   /* the forms again */
	ck_assert_ptr_null(strstr(r.body, "\xff"));
	http_free(&r);
	ck_assert_str_eq(pay_footprint(id, acct), before);
	/* The positive control: the same session, the fields well-formed, pays. */
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
	ck_assert_str_eq(balance_of(acct), "4000");
}
END_TEST

START_TEST(test_own_result_page)
{
	char id[37], acct[16];
	struct http_resp r;

	new_customer("20.00", acct);
	new_session("10", false, id);
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "Payment received"));
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
}
END_TEST

static const char *const tampering[] = {
	"UPDATE ledger_entries SET amount = amount + 1",
	"DELETE FROM ledger_entries",
	"TRUNCATE ledger_entries CASCADE",
	"UPDATE ledger_transactions SET kind = 'adjustment'",
	"DELETE FROM ledger_transactions",
	"UPDATE accounts SET balance = balance + 100 WHERE kind = 'customer'",
	"INSERT INTO ledger_transactions (kind) VALUES ('adjustment');"
	" INSERT INTO ledger_entries (transaction_id, account_id, amount, balance_before,"
	" balance_after, version) SELECT currval('ledger_transactions_id_seq'), id, 5, balance,"
	" balance + 5, version + 1 FROM accounts WHERE kind = 'customer' LIMIT 1",
	"INSERT INTO accounts (account_number, kind, currency, balance) VALUES"
	" ('CU0000000001', 'customer', 'AFN', -5)",
};

START_TEST(test_ledger_refuses_tampering)
{
	char acct[16], cmd[1024];

	new_customer("10.00", acct);
	snprintf(cmd, sizeof(cmd), "psql -v ON_ERROR_STOP=1 -q -1 -c \"%s\" >/dev/null 2>&1",
	    tampering[_i]);
	ck_assert_msg(sh("%s", cmd) != 0, "the database accepted: %s", tampering[_i]);
	ck_assert_str_eq(balance_of(acct), "1000");
	assert_ledger_ok();
}
END_TEST

/* What the workers' role may not do at all, even balanced: only mp_post() moves money. */
static const char *const app_forbidden[] = {
	"INSERT INTO ledger_transactions (kind) VALUES ('adjustment')",
	"INSERT INTO ledger_entries (transaction_id, account_id, amount, balance_before,"
	" balance_after, version) SELECT max(transaction_id), account_id, 1, 0, 1, 999"
	" FROM ledger_entries GROUP BY account_id LIMIT 1",
	"UPDATE accounts SET balance = balance + 100 WHERE kind = 'customer'",
	"UPDATE accounts SET status = 'active'",
	"INSERT INTO accounts (account_number, kind, currency) VALUES ('CU0000000002',"
	" 'customer', 'AFN')",
	"DELETE FROM payment_sessions",
	"UPDATE payment_sessions SET amount = 1",
	"UPDATE api_keys SET revoked_at = NULL",
	"SELECT set_config('marketpay.posting', 'on', false); UPDATE accounts SET balance = 0",
};

START_TEST(test_app_role_cannot_write_ledger)
{
	char acct[16];

	new_customer("10.00", acct);
	/* The role works for what it is for: reading, and posting through mp_post(). */
	ck_assert_int_eq(sh("psql -v ON_ERROR_STOP=1 -q -c 'SET ROLE marketpay_app'"
	    " -c 'SELECT count(*) FROM ledger_entries' >/dev/null 2>&1"), 0);
	ck_assert_msg(sh("psql -v ON_ERROR_STOP=1 -q -1 -c 'SET ROLE marketpay_app' -c \"%s\""
	    " >/dev/null 2>&1", app_forbidden[_i]) != 0, "marketpay_app may: %s",
	    app_forbidden[_i]);
	ck_assert_str_eq(balance_of(acct), "1000");
	assert_ledger_ok();
}
END_TEST

START_TEST(test_ledger_verify_finds_damage)
{
	char acct[16], out[4096] = "";
	const char *id;
	FILE *p;
	size_t n;
	int rc;

	new_customer("10.00", acct);
	id = db_value("SELECT e.id FROM ledger_entries e JOIN accounts a ON a.id = e.account_id"
	    " WHERE a.account_number = $1", acct);
	ck_assert_ptr_nonnull(id);
	/* Damage one entry behind the triggers' back, as only a superuser could. */
	ck_assert_int_eq(sh("psql -q -1 -c 'ALTER TABLE ledger_entries DISABLE TRIGGER USER'"
	    " -c 'UPDATE ledger_entries SET amount = amount + 1, balance_after = balance_after + 1"
	    " WHERE id = %s' -c 'ALTER TABLE ledger_entries ENABLE TRIGGER USER' >/dev/null", id), 0);
	p = popen("\"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" ledger verify 2>&1", "r");
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	rc = pclose(p);
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(strstr(out, "unbalanced transaction") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "balance differs from its entries") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "trial balance not zero") != NULL, "%s", out);
	/* Put it back: verify is clean again. */
	ck_assert_int_eq(sh("psql -q -1 -c 'ALTER TABLE ledger_entries DISABLE TRIGGER USER'"
	    " -c 'UPDATE ledger_entries SET amount = amount - 1, balance_after = balance_after - 1"
	    " WHERE id = %s' -c 'ALTER TABLE ledger_entries ENABLE TRIGGER USER' >/dev/null", id), 0);
	assert_ledger_ok();
}
END_TEST

START_TEST(test_account_commands)
{
	char acct[16], out[4096] = "";
	FILE *p;
	size_t n;

	new_customer("12.30", acct);
	ck_assert_ptr_nonnull(ctl("account deposit %s 0.05", acct));
	ck_assert_str_eq(balance_of(acct), "1235");
	/* Bad amounts and accounts are refused and move nothing. */
	ck_assert_ptr_null(ctl("account deposit %s 1.234", acct));
	ck_assert_ptr_null(ctl("account deposit %s -5", acct));
	ck_assert_ptr_null(ctl("account deposit %s 0", acct));
	ck_assert_ptr_null(ctl("account deposit CU0000000000 5"));
	ck_assert_ptr_null(ctl("account create --kind merchant"));
	ck_assert_ptr_null(ctl("account create --kind alien"));
	ck_assert_int_ne(sh("echo 12 | \"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" account pin %s"
	    " 2>/dev/null", acct), 0);
	ck_assert_str_eq(balance_of(acct), "1235");
	snprintf(out, sizeof(out), "\"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" account show %s",
	    acct);
	p = popen(out, "r");
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_msg(strstr(out, "balance\t12.35\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "kind\tcustomer\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "pin\tset\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "\tdeposit\tdeposit\t0.05\t12.35\n") != NULL, "%s", out);
	/* The PIN is stored as a 32-byte digest, never as digits. */
	ck_assert_str_eq(db_value("SELECT length(pin_digest) FROM accounts WHERE account_number ="
	    " $1", acct), "32");
}
END_TEST

static Suite *
checkout_suite(void)
{
	Suite *s = suite_create("checkout");
	TCase *t = tcase_create("page");

	tcase_set_timeout(t, 60);
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
	tcase_add_test(t, test_csrf);
	tcase_add_test(t, test_double_submit_race);
	tcase_add_loop_test(t, test_test_cards, 0, sizeof(cards) / sizeof(cards[0]));
	tcase_add_test(t, test_card_form_errors);
	tcase_add_loop_test(t, test_malformed_fields, 0, sizeof(malformed) / sizeof(malformed[0]));
	tcase_add_test(t, test_own_result_page);
	tcase_add_loop_test(t, test_ledger_refuses_tampering, 0,
	    sizeof(tampering) / sizeof(tampering[0]));
	tcase_add_loop_test(t, test_app_role_cannot_write_ledger, 0,
	    sizeof(app_forbidden) / sizeof(app_forbidden[0]));
	tcase_add_test(t, test_ledger_verify_finds_damage);
	tcase_add_test(t, test_account_commands);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	fixture_init();
	rc = run_suite(checkout_suite());
	curl_global_cleanup();
	return rc;
}
