/*
 * libFuzzer target: the checkout form body (application/x-www-form-urlencoded) as
 * checkout_post reads it: form_get for every field it asks for, into its 128-byte fields and
 * into tight buffers, form_check on each (what it takes is valid UTF-8; a shaped field taken
 * is plain ASCII), then the checks that need no database: the PIN's form, the sandbox
 * test card (number, expiry, CVC; its database steps answer "unavailable" here), and the
 * account number echoed back into the page through html_text and html_url_encode.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "form.h"
#include "html.h"
#include "pay.h"
#include "pin.h"
#include "valid.h"
#include "fuzz.h"

#define FIELD_MAX 128 /* as checkout.c */
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* A session id of the right form: pay_test_card passes it to the database only. */
#define SESSION_ID "123e4567-e89b-12d3-a456-426614174000"

enum field { F_CSRF, F_ACTION, F_METHOD, F_ACCOUNT, F_PIN, F_CARD, F_EXPIRY, F_CVC, F__MAX };

static const char *const names[F__MAX] = {
	"csrf",           /* F_CSRF */
	"action",         /* F_ACTION */
	"method",         /* F_METHOD */
	"account_number", /* F_ACCOUNT */
	"pin",            /* F_PIN */
	"card_number",    /* F_CARD */
	"card_expiry",    /* F_EXPIRY */
	"card_cvc",       /* F_CVC */
};

/* form_get's contract: -1, or the decoded length with out NUL-terminated and no NUL inside. */
static void
get(const uint8_t *data, size_t size, const char *name, char *out, size_t outlen)
{
	long n = form_get((const char *)data, size, name, out, outlen);

	FUZZ_ASSERT(n >= -1);
	if (n < 0) {
		out[0] = '\0';
		return;
	}
	FUZZ_ASSERT((size_t)n < outlen && strlen(out) == (size_t)n);
}

static void
check_echo(const char *account)
{
	struct html h = { 0 };
	char *url;
	size_t i;

	html_text(&h, account);
	FUZZ_ASSERT(!h.failed);
	FUZZ_ASSERT(h.p == NULL || strpbrk(h.p, "<>\"'") == NULL);
	html_free(&h);
	FUZZ_ASSERT((url = html_url_encode(account)) != NULL);
	for (i = 0; url[i] != '\0'; i++)
		FUZZ_ASSERT(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789-._~%", url[i]) != NULL);
	free(url);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char f[F__MAX][FIELD_MAX], tight[4];
	struct pay_outcome out;
	size_t i;

	for (i = 0; i < NELEM(names); i++) {
		get(data, size, names[i], f[i], FIELD_MAX);
		get(data, size, names[i], tight, sizeof(tight));
		get(data, size, names[i], tight, 1);
		if (form_check(names[i], f[i]) == NULL) {
			FUZZ_ASSERT(valid_utf8(f[i], strlen(f[i])));
			FUZZ_ASSERT(i < F_ACCOUNT ||
			    strspn(f[i], "0123456789 /ABCDEFGHIJKLMNOPQRSTUVWXYZ") == strlen(f[i]));
		}
	}
	(void)pin_format_ok(f[F_PIN]);
	pay_test_card(&fuzz_app, SESSION_ID, f[F_CARD], f[F_EXPIRY], f[F_CVC], &out);
	FUZZ_ASSERT(out.result >= 0 && out.result < PAY__MAX);
	FUZZ_ASSERT(memchr(out.message, '\0', sizeof(out.message)) != NULL);
	if (out.result == PAY_RETRY)
		FUZZ_ASSERT(out.message[0] != '\0');
	check_echo(f[F_ACCOUNT]);
	return 0;
}
