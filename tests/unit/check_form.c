/* Unit tests of form decoding and checking, HTML escaping, URL encoding and the Luhn check. */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "form.h"
#include "html.h"
#include "pay.h"
#include "runner.h"

struct form_case {
	const char *body;
	const char *name;
	long len;            /* -1: absent or malformed */
	const char *value;
};

static const struct form_case form_cases[] = {
	{ "a=1&b=2", "a", 1, "1" },
	{ "a=1&b=2", "b", 1, "2" },
	{ "a=1&b=2", "c", -1, NULL },
	{ "ab=1&b=2", "b", 1, "2" },            /* "ab" is not "b" */
	{ "a=x+y%2Bz", "a", 5, "x y+z" },
	{ "a=%C3%A9", "a", 2, "\xc3\xa9" },
	{ "a=", "a", 0, "" },
	{ "a", "a", -1, NULL },
	{ "a=%4", "a", -1, NULL },              /* truncated escape */
	{ "a=%zz", "a", -1, NULL },
	{ "a=%00", "a", -1, NULL },             /* a decoded NUL */
	{ "a=1&a=2", "a", 1, "1" },             /* the first one counts */
	{ "", "a", -1, NULL },
	{ "csrf=abc&pin=1234&", "pin", 4, "1234" },
};

START_TEST(test_form_get)
{
	const struct form_case *c = &form_cases[_i];
	char out[64];
	long n = form_get(c->body, strlen(c->body), c->name, out, sizeof(out));

	ck_assert_int_eq(n, c->len);
	if (c->value != NULL)
		ck_assert_str_eq(out, c->value);
}
END_TEST

START_TEST(test_form_too_long)
{
	char out[4];

	ck_assert_int_eq(form_get("a=1234", 6, "a", out, sizeof(out)), -1);
	ck_assert_int_eq(form_get("a=123", 5, "a", out, sizeof(out)), 3);
	/* The length bounds the scan: bytes after it are not part of the body. */
	ck_assert_int_eq(form_get("a=12&b=3", 4, "b", out, sizeof(out)), -1);
}
END_TEST

/* A checkout field and whether form_check takes it (NULL) or which words refuse it. */
struct check_case {
	const char *name;
	const char *value;
	const char *problem;  /* a word of the message; NULL: accepted */
};

static const struct check_case check_cases[] = {
	{ "account_number", "CU0123456789", NULL },
	{ "account_number", "\xff\xfe", "not text" },
	{ "account_number", "CU01234\xc0\xae" "6789", "not text" },       /* overlong '.' */
	{ "account_number", "cu0123456789", "two capital letters" },
	{ "account_number", "CU012345678", "two capital letters" },
	{ "account_number", "CU01234567890", "two capital letters" },
	{ "account_number", "C10123456789", "two capital letters" },
	{ "account_number", "CU012345678 ", "two capital letters" },
	{ "account_number", "CU012345678\xd9\xa3", "two capital letters" }, /* Arabic-Indic 3 */
	{ "account_number", "\xef\xbc\xa3" "U0123456789", "two capital letters" }, /* full-width C */
	{ "account_number", "", "two capital letters" },
	{ "pin", "1234", NULL },
	{ "pin", "123456789012", NULL },
	{ "pin", "123", "4 to 12 digits" },
	{ "pin", "1234567890123", "4 to 12 digits" },
	{ "pin", "12a4", "4 to 12 digits" },
	{ "pin", "\xff", "not text" },
	{ "pin", "12\xed\xa0\x80", "not text" },                         /* a surrogate */
	{ "card_number", "4242424242424242", NULL },
	{ "card_number", "4242 4242 4242 4242", NULL },
	{ "card_number", "4242-4242-4242-4242", "card number" },
	{ "card_number", "42424242", "card number" },
	{ "card_number", "42424242424242424242", "card number" },
	{ "card_number", "4242424242424242\xff", "not text" },
	{ "card_expiry", "12/99", NULL },
	{ "card_expiry", "01/30", NULL },
	{ "card_expiry", "00/30", "MM/YY" },
	{ "card_expiry", "13/30", "MM/YY" },
	{ "card_expiry", "1/30", "MM/YY" },
	{ "card_expiry", "12-99", "MM/YY" },
	{ "card_expiry", "\xf4\x90\x80\x80", "not text" },             /* above U+10FFFF */
	{ "card_cvc", "123", NULL },
	{ "card_cvc", "1234", NULL },
	{ "card_cvc", "12", "3 or 4 digits" },
	{ "card_cvc", "12a", "3 or 4 digits" },
	{ "card_cvc", "\xff\xfe\xfd", "not text" },
	/* Fields without a shape: any valid UTF-8. */
	{ "method", "wallet", NULL },
	{ "action", "caf\xc3\xa9 \xe2\x82\xac", NULL },
	{ "action", "\xe2\x82", "not text" },                            /* cut short */
	{ "csrf", "\x80", "not text" },
};

START_TEST(test_form_check)
{
	const struct check_case *c = &check_cases[_i];
	const char *got = form_check(c->name, c->value);

	if (c->problem == NULL)
		ck_assert_msg(got == NULL, "%s: refused: %s", c->name, got);
	else
		ck_assert_msg(got != NULL && strstr(got, c->problem) != NULL,
		    "%s case %d: '%s' lacks '%s'", c->name, _i, got, c->problem);
}
END_TEST

START_TEST(test_html_text)
{
	struct html h = { 0 };

	html_raw(&h, "<p title=\"");
	html_text(&h, "a&b<c>d\"e'f");
	html_raw(&h, "\">%d</p>", 42);
	ck_assert_str_eq(h.p, "<p title=\"a&amp;b&lt;c&gt;d&quot;e&#39;f\">42</p>");
	html_free(&h);
	html_text(&h, "");
	ck_assert_ptr_null(h.p);
	html_free(&h);
}
END_TEST

START_TEST(test_html_grows)
{
	struct html h = { 0 };
	int i;

	for (i = 0; i < 5000; i++)
		html_text(&h, "<>");
	ck_assert_int_eq(h.len, 5000 * 8);
	ck_assert_int_eq(h.failed, 0);
	html_free(&h);
}
END_TEST

START_TEST(test_url_encode)
{
	char *s = html_url_encode("order 7&x=é/~._-");

	ck_assert_str_eq(s, "order%207%26x%3D%C3%A9%2F~._-");
	free(s);
}
END_TEST

START_TEST(test_luhn)
{
	ck_assert(pay_luhn("4242424242424242"));
	ck_assert(pay_luhn("4000000000000002"));
	ck_assert(pay_luhn("79927398713"));
	ck_assert(!pay_luhn("4242424242424241"));
	ck_assert(!pay_luhn("79927398710"));
	ck_assert(!pay_luhn("4242 4242"));
	ck_assert(!pay_luhn("0"));
	ck_assert(!pay_luhn(""));
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("form", "form", 0, &t);

	tcase_add_loop_test(t, test_form_get, 0, NELEM(form_cases));
	tcase_add_test(t, test_form_too_long);
	tcase_add_loop_test(t, test_form_check, 0, NELEM(check_cases));
	tcase_add_test(t, test_html_text);
	tcase_add_test(t, test_html_grows);
	tcase_add_test(t, test_url_encode);
	tcase_add_test(t, test_luhn);
	return run_suite(s);
}
