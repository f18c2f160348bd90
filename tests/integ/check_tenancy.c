/*
 * One merchant walled off from another, against the real stack (tests/integration.sh):
 * B reads nothing of A's sessions, replays none of A's Idempotency-Keys, sees nothing of A
 * on a checkout page or through A's form token, and B's transfers neither pay into nor
 * draw on A's account.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "../load/seal.h"
#include "checkout_form.h"
#include "fixture.h"
#include "http.h"
#include "session_body.h"
#include "transfers.h"

/* Merchant B's view of A's session is exactly its view of a session that does not exist. */
START_TEST(test_cross_merchant_read)
{
	char id[37], path[128], unknown[128], acct[16];
	const char *b[] = { fx.auth_b, NULL }, *a[] = { fx.auth_a, NULL };
	struct http_resp r1, r2;
	char *body = body_with(F_USER, "secret-order-of-a", 17);

	new_session(fx.auth_a, body, id);
	free(body);
	snprintf(path, sizeof(path), "/api/v1/payment/sessions/%s", id);
	snprintf(unknown, sizeof(unknown), "/api/v1/payment/sessions/%.35s%c", id,
	    id[35] == '0' ? '1' : '0');
	ck_assert_int_eq(http_do("GET", path, b, NULL, 0, &r1), 0);
	ck_assert_int_eq(http_do("GET", unknown, b, NULL, 0, &r2), 0);
	assert_fail(&r1, 404, "payment session not found");
	ck_assert_int_eq(r1.status, r2.status);
	ck_assert_str_eq(r1.body, r2.body);
	ck_assert_ptr_null(strstr(r1.body, "secret-order-of-a"));
	http_free(&r1);
	http_free(&r2);
	/* Also once it is paid; A of course sees it. */
	new_customer("10.00", acct);
	pay_wallet(id, acct, "1234", &r1);
	ck_assert_int_eq(r1.status, 303);
	http_free(&r1);
	ck_assert_int_eq(http_do("GET", path, b, NULL, 0, &r1), 0);
	assert_fail(&r1, 404, "payment session not found");
	http_free(&r1);
	ck_assert_int_eq(http_do("GET", path, a, NULL, 0, &r1), 0);
	ck_assert_int_eq(r1.status, 200);
	ck_assert_str_eq(http_json_str(&r1, "status"), "paid");
	http_free(&r1);
	/* The PIN key is the service's, one for all: nothing of A's in it. */
	ck_assert_int_eq(http_do("GET", PUBKEY, a, NULL, 0, &r1), 0);
	ck_assert_int_eq(http_do("GET", PUBKEY, b, NULL, 0, &r2), 0);
	ck_assert_int_eq(r1.status, 200);
	ck_assert_str_eq(http_json_str(&r1, "public_key"), http_json_str(&r2, "public_key"));
	http_free(&r1);
	http_free(&r2);
}
END_TEST

/* An Idempotency-Key of A's never replays A's reply to B. */
START_TEST(test_cross_merchant_idempotency)
{
	const char *ha[] = { JSON_CT, fx.auth_a, "Idempotency-Key: sec-shared-key", NULL };
	const char *hb[] = { JSON_CT, fx.auth_b, "Idempotency-Key: sec-shared-key", NULL };
	char *body = body_with(F_USER, "a-only", 6);
	struct http_resp ra, rb;
	char buf[16];

	ck_assert_int_eq(http_do("POST", CREATE, ha, body, -1, &ra), 0);
	ck_assert_int_eq(ra.status, 200);
	ck_assert_int_eq(http_do("POST", CREATE, hb, body, -1, &rb), 0);
	ck_assert_int_eq(rb.status, 200);
	ck_assert_ptr_null(http_header(&rb, "Idempotent-Replayed", buf, sizeof(buf)));
	ck_assert_str_ne(http_json_str(&ra, "session_id"), http_json_str(&rb, "session_id"));
	ck_assert_str_eq(db_value("SELECT merchant_id FROM payment_sessions WHERE id = $1::uuid",
	    http_json_str(&rb, "session_id")), fx.merchant_b);
	http_free(&ra);
	http_free(&rb);
	free(body);
}
END_TEST

/* The checkout page of A's session shows A's data and nothing of B's. */
START_TEST(test_cross_merchant_page)
{
	char ida[37], idb[37], path[128];
	char *ba = body_with(F_NAME, "Item-Of-Shop-A-7d1", 18);
	char *bb = body_with(F_NAME, "Item-Of-Shop-B-3c9", 18);
	struct http_resp r;

	new_session(fx.auth_a, ba, ida);
	new_session(fx.auth_b, bb, idb);
	free(ba);
	free(bb);
	get_page(ida, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "Shop A"));
	ck_assert_ptr_nonnull(strstr(r.body, "Item-Of-Shop-A-7d1"));
	ck_assert_ptr_null(strstr(r.body, "Shop B"));
	ck_assert_ptr_null(strstr(r.body, "Item-Of-Shop-B-3c9"));
	/* Neither the customer's e-mail nor the merchant's reference is on the page. */
	ck_assert_ptr_null(strstr(r.body, "buyer@example.com"));
	ck_assert_ptr_null(strstr(r.body, "order-1"));
	http_free(&r);
	get_page(idb, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "Shop B"));
	ck_assert_ptr_null(strstr(r.body, "Shop A"));
	ck_assert_ptr_null(strstr(r.body, "Item-Of-Shop-A-7d1"));
	http_free(&r);
	/* B's form token does not open A's session. */
	{
		const char *h[] = { FORM_CT, NULL };
		char body[256];

		snprintf(path, sizeof(path), "/checkout/%s", ida);
		snprintf(body, sizeof(body), "csrf=%s&action=cancel", csrf_of(idb));
		ck_assert_int_eq(http_do("POST", path, h, body, -1, &r), 0);
		ck_assert_int_eq(r.status, 403);
		http_free(&r);
		ck_assert_str_eq(status_of(ida), "open");
	}
}
END_TEST

/* B's transfers can neither pay into A's account nor draw on it. */
START_TEST(test_cross_merchant_transfer)
{
	const char *h[] = { JSON_CT, fx.auth_b, NULL };
	char acct_a[16], acct_b[16], vendor[16], pin[1024], body[2048];
	long long a0, b0;
	struct http_resp r;

	/* A's settlement account holds money (A has none of B's PIN or settlement). */
	const char *v = db_value("SELECT coalesce(min(account_number), '') FROM accounts"
	    " WHERE merchant_id = $1::bigint AND kind = 'merchant'", fx.merchant_a);

	ck_assert_ptr_nonnull(v);
	snprintf(acct_a, sizeof(acct_a), "%s", v);
	if (acct_a[0] == '\0')
		snprintf(acct_a, sizeof(acct_a), "%s", ctl("account create --kind merchant"
		    " --merchant %s", fx.merchant_a));
	ck_assert_uint_eq(strlen(acct_a), 12);
	ck_assert_ptr_nonnull(ctl("account deposit %s 10", acct_a));
	ck_assert_int_eq(sh("printf %%s 2468 | " CTL "merchant pin %s >/dev/null",
	    fx.merchant_b), 0);
	ck_assert_int_eq(sh(CTL "merchant settlement %s on >/dev/null", fx.merchant_b), 0);
	snprintf(acct_b, sizeof(acct_b), "%s", ctl("account create --kind merchant --merchant %s",
	    fx.merchant_b));
	ck_assert_ptr_nonnull(ctl("account deposit %s 10", acct_b));
	snprintf(vendor, sizeof(vendor), "%s", ctl("account create --kind vendor"));
	a0 = balance_of(acct_a);
	b0 = balance_of(acct_b);
	sealed("2468", pin);
	/* Paying A's merchant account as if it were a vendor. */
	snprintf(body, sizeof(body), "{\"pin\":\"%s\",\"vendors\":[{\"account_number\":\"%s\","
	    "\"amount\":1.00}]}", pin, acct_a);
	ck_assert_int_eq(http_do("POST", SEND, h, body, -1, &r), 0);
	assert_fail(&r, 400, "vendors[0].account_number is not a vendor account");
	http_free(&r);
	/* A real transfer of B's draws on B's account only, whatever A holds. */
	sealed("2468", pin);
	snprintf(body, sizeof(body), "{\"pin\":\"%s\",\"vendors\":[{\"account_number\":\"%s\","
	    "\"amount\":1.00}]}", pin, vendor);
	ck_assert_int_eq(http_do("POST", SEND, h, body, -1, &r), 0);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	http_free(&r);
	ck_assert_int_eq(balance_of(acct_a), a0);
	ck_assert_int_eq(balance_of(acct_b), b0 - 100);
	ck_assert_int_eq(balance_of(vendor), 100);
	/* More than B holds is refused although A could cover it. */
	sealed("2468", pin);
	snprintf(body, sizeof(body), "{\"pin\":\"%s\",\"vendors\":[{\"account_number\":\"%s\","
	    "\"amount\":%lld.00}]}", pin, vendor, b0 / 100 + 1);
	ck_assert_int_eq(http_do("POST", SEND, h, body, -1, &r), 0);
	assert_fail(&r, 400, "exceeds the available balance");
	http_free(&r);
	ck_assert_int_eq(balance_of(acct_a), a0);
	assert_ledger_ok();
}
END_TEST

/* The service's PIN key, for B's transfers (B has no PIN yet: the cases set it). */
static void
tenancy_setup(void)
{
	service_key_load(fx.auth_b);
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("tenancy", "tenancy", 60, &t);

	tcase_add_test(t, test_cross_merchant_read);
	tcase_add_test(t, test_cross_merchant_idempotency);
	tcase_add_test(t, test_cross_merchant_page);
	tcase_add_test(t, test_cross_merchant_transfer);
	return fixture_main(s, tenancy_setup, service_key_free);
}
