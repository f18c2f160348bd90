/* The checkout page's forms, posted as a browser would. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "checkout_form.h"
#include "crypto.h"
#include "fixture.h"

/* HMAC-SHA256 of "csrf:<id>" under the stack's secrets key, in hex. */
const char *
csrf_of(const char *id)
{
	static char token[65];
	unsigned char key[CRYPTO_KEY_LEN], md[CRYPTO_SHA256_LEN];
	char path[1024], msg[64];

	snprintf(path, sizeof(path), "%s/secrets.key", getenv("MARKETPAY_STACK_DIR"));
	ck_assert_int_eq(crypto_load_key(path, key), 0);
	snprintf(msg, sizeof(msg), "csrf:%s", id);
	ck_assert_int_eq(crypto_hmac_sha256(key, sizeof(key), msg, strlen(msg), md), 0);
	crypto_hex(md, sizeof(md), token);
	return token;
}

void
get_page(const char *id, struct http_resp *r)
{
	char path[128];

	snprintf(path, sizeof(path), "/checkout/%s", id);
	ck_assert_int_eq(http_do("GET", path, NULL, NULL, 0, r), 0);
}

void
post_form(const char *id, const char *fields, struct http_resp *r)
{
	const char *h[] = { FORM_CT, NULL };
	char path[128], body[2048];

	snprintf(path, sizeof(path), "/checkout/%s", id);
	snprintf(body, sizeof(body), "csrf=%s&%s", csrf_of(id), fields);
	ck_assert_int_eq(http_do("POST", path, h, body, -1, r), 0);
}

void
pay_wallet(const char *id, const char *acct, const char *pin, struct http_resp *r)
{
	char fields[256];

	snprintf(fields, sizeof(fields), "method=wallet&action=pay&account_number=%s&pin=%s", acct,
	    pin);
	post_form(id, fields, r);
}

void
pay_card(const char *id, const char *number, struct http_resp *r)
{
	char fields[256];

	snprintf(fields, sizeof(fields), "method=test_card&action=pay&card_number=%s"
	    "&card_expiry=12%%2F99&card_cvc=123", number);
	post_form(id, fields, r);
}

void
paid_session(const char *auth, const char *price, const char *user, const char *acct,
    char id[37])
{
	char body[512];
	struct http_resp r;

	snprintf(body, sizeof(body), "{\"items\":[{\"id\":\"sku-1\",\"name\":\"Tea\","
	    "\"price\":%s}],\"user_id\":\"%s\",\"email\":\"buyer@example.com\"}", price, user);
	new_session(auth, body, id);
	if (acct != NULL)
		pay_wallet(id, acct, "1234", &r);
	else
		pay_card(id, "4242424242424242", &r);
	ck_assert_msg(r.status == 200 && strstr(r.body, "Payment received") != NULL,
	    "paying %s: %ld", id, r.status);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
}
