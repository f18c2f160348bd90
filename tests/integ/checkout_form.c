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
form_post(const char *id, const char *fields, struct form_post *f)
{
	static const char *const h[] = { FORM_CT, NULL };

	snprintf(f->path, sizeof(f->path), "/checkout/%s", id);
	snprintf(f->body, sizeof(f->body), "csrf=%s&%s", csrf_of(id), fields);
	f->req = (struct http_req){ "POST", f->path, h, f->body };
}

void
post_form(const char *id, const char *fields, struct http_resp *r)
{
	struct form_post f;

	form_post(id, fields, &f);
	ck_assert_int_eq(http_do("POST", f.path, f.req.headers, f.body, -1, r), 0);
}

const char *
wallet_fields(const char *acct, const char *pin, char out[256])
{
	snprintf(out, 256, "method=wallet&action=pay&account_number=%s&pin=%s", acct, pin);
	return out;
}

void
pay_wallet(const char *id, const char *acct, const char *pin, struct http_resp *r)
{
	char fields[256];

	post_form(id, wallet_fields(acct, pin, fields), r);
}

void
pay_card(const char *id, const char *number, struct http_resp *r)
{
	char fields[256];

	post_form(id, card_fields(number, fields), r);
}

const char *
card_fields(const char *number, char out[256])
{
	snprintf(out, 256, "method=test_card&action=pay&card_number=%s&card_expiry=12%%2F99"
	    "&card_cvc=123", number);
	return out;
}

const char *
pay_fields(const char *acct, char out[256])
{
	return acct != NULL ? wallet_fields(acct, "1234", out) : card_fields(TEST_CARD, out);
}

void
open_session(const char *auth, const char *price, const char *user, char id[37])
{
	char body[512];

	snprintf(body, sizeof(body), "{\"items\":[{\"id\":\"sku-1\",\"name\":\"Tea\","
	    "\"price\":%s}],\"user_id\":\"%s\",\"email\":\"buyer@example.com\"}", price, user);
	new_session(auth, body, id);
}

void
assert_paid(const struct http_resp *r, const char *id)
{
	ck_assert_msg(r->status == 200 && strstr(r->body, "Payment received") != NULL,
	    "paying %s: %ld", id, r->status);
	ck_assert_str_eq(status_of(id), "paid");
}

void
paid_session(const char *auth, const char *price, const char *user, const char *acct,
    char id[37])
{
	char fields[256];
	struct http_resp r;

	open_session(auth, price, user, id);
	post_form(id, pay_fields(acct, fields), &r);
	assert_paid(&r, id);
	http_free(&r);
}

void
assert_page_expired(const char *id, const char *acct)
{
	struct http_resp r;

	get_page(id, &r);
	ck_assert_int_eq(r.status, 410);
	ck_assert_ptr_nonnull(strstr(r.body, "expired"));
	ck_assert_ptr_null(strstr(r.body, "name=\"csrf\""));
	http_free(&r);
	/* A form kept open in a tab cannot pay it either. */
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 410);
	http_free(&r);
	ck_assert_int_eq(balance_of(acct), 5000);
}
