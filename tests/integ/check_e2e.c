/*
 * The whole path of the spec's section 1: a merchant creates a session, the customer pays
 * on the hosted page, and the merchant receives a signed payment.succeeded webhook carrying
 * its own user_id, delivered by marketpay-webhookd from the outbox.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "crypto.h"
#include "checkout_form.h"
#include "fixture.h"
#include "http.h"
#include "receiver.h"

static char merchant[32], key[160], secret[128], customer[16];

static void
setup_merchant(void)
{
	snprintf(merchant, sizeof(merchant), "%s", ctl("merchant create --name 'E2E Shop'"));
	snprintf(key, sizeof(key), "%s", ctl("key create %s", merchant));
	snprintf(secret, sizeof(secret), "%s", ctl("merchant webhook %s --url %s", merchant,
	    getenv("MARKETPAY_WEBHOOK_RECEIVER")));
	snprintf(customer, sizeof(customer), "%s", ctl("account create --kind customer"));
	need(strncmp(secret, "whsec_", 6) == 0 && strlen(customer) == 12 &&
	    ctl("account deposit %s 500", customer) != NULL &&
	    sh("echo 4321 | " CTL "account pin %s >/dev/null", customer) == 0, "setup");
}

START_TEST(test_payment_to_webhook)
{
	const char *api[] = { JSON_CT, NULL, NULL };
	const char *form[] = { FORM_CT, NULL };
	char auth[200], sid[37], path[128], body[512], event[64];
	struct json_object *payload, *data, *v;
	struct http_resp r;

	snprintf(auth, sizeof(auth), "Authorization: API-KEY %s", key);
	api[1] = auth;
	ck_assert_int_eq(http_do("POST", CREATE, api,
	    "{\"items\":[{\"id\":\"tea-1\",\"name\":\"Jasmine \\\"pearls\\\"\",\"price\":40.00},"
	    "{\"id\":\"cup-2\",\"name\":\"Caf\xc3\xa9 cup\",\"price\":2.55}],\"user_id\":\"ord-9001\","
	    "\"email\":\"kim@example.com\"}", -1, &r), 0);
	ck_assert_int_eq(r.status, 200);
	snprintf(sid, sizeof(sid), "%s", http_json_str(&r, "session_id"));
	http_free(&r);

	snprintf(path, sizeof(path), "/checkout/%s", sid);
	snprintf(body, sizeof(body), "csrf=%s&method=wallet&action=pay&account_number=%s&pin=4321",
	    csrf_of(sid), customer);
	ck_assert_int_eq(http_do("POST", path, form, body, -1, &r), 0);
	ck_assert_int_eq(r.status, 200);   /* no redirect URL: our own result page */
	ck_assert_ptr_nonnull(strstr(r.body, "Payment received"));
	http_free(&r);

	snprintf(event, sizeof(event), "%s", db_value("SELECT id FROM webhook_events WHERE"
	    " body::json->'data'->>'session_id' = $1", sid));
	/* Delivered once, signed; the body as the merchant reads it. */
	payload = receiver_event(event, secret, "payment.succeeded", &data);
	ck_assert(json_object_object_get_ex(data, "user_id", &v));
	ck_assert_str_eq(json_object_get_string(v), "ord-9001");
	ck_assert(json_object_object_get_ex(data, "session_id", &v));
	ck_assert_str_eq(json_object_get_string(v), sid);
	ck_assert(json_object_object_get_ex(data, "email", &v));
	ck_assert_str_eq(json_object_get_string(v), "kim@example.com");
	ck_assert(json_object_object_get_ex(data, "amount", &v));
	ck_assert_str_eq(json_object_get_string(v), "42.55");
	ck_assert(json_object_object_get_ex(data, "currency", &v));
	ck_assert_str_eq(json_object_get_string(v), "AFN");
	ck_assert(json_object_object_get_ex(data, "payment_method", &v));
	ck_assert_str_eq(json_object_get_string(v), "wallet");
	ck_assert(json_object_object_get_ex(data, "items", &v));
	ck_assert_int_eq(json_object_array_length(v), 2);
	ck_assert(json_object_object_get_ex(json_object_array_get_idx(v, 1), "name", &v));
	ck_assert_str_eq(json_object_get_string(v), "Caf\xc3\xa9 cup");
	ck_assert(json_object_object_get_ex(data, "transaction_id", &v));
	ck_assert_str_eq(json_object_get_string(v), db_value("SELECT transaction_id FROM"
	    " payment_sessions WHERE id = $1::uuid", sid));
	json_object_put(payload);
	ck_assert_str_eq(db_value("SELECT status FROM webhook_events WHERE id = $1", event),
	    "delivered");
	assert_ledger_ok();
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("e2e", "payment to webhook", 60, &t);

	tcase_add_test(t, test_payment_to_webhook);
	return fixture_main(s, setup_merchant, NULL);
}
