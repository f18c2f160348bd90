/*
 * The hosted page's languages against the real stack (tests/integration.sh): create-session's
 * locale (an extension of the spec) refused with nothing stored when it is not one of ours,
 * stored as its catalog's name when it is, and then the page's language whatever the
 * browser asks; Accept-Language and the ?lang= links; a wallet paid with digits typed in
 * Eastern Arabic-Indic. In a browser, with the audit: tests/browser/i18n.test.mjs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "checkout_form.h"
#include "fixture.h"
#include "http.h"

#define ITEMS "\"items\":[{\"id\":\"sku-1\",\"name\":\"Green tea\",\"price\":12.50}]"

/* locale values that are not one of the page's languages, and the words that refuse them. */
static const struct {
	const char *json;
	const char *needle;
} refused[] = {
	{ "\"de\"", "locale must be one of the hosted page's languages: en, fa-AF or ps" },
	{ "\"fa\"", "locale must be one of" },          /* a range is not a language */
	{ "\"en-US\"", "locale must be one of" },
	{ "\"fa-AF-x\"", "locale must be one of" },
	{ "\"fa AF\"", "locale must be one of" },
	{ "\"\"", "locale" },
	{ "\"pspspspspspspspsps\"", "locale" },           /* longer than 16 characters */
	{ "42", "locale" },
	{ "[\"ps\"]", "locale" },
};

START_TEST(test_refused)
{
	char body[256], before[FOOTPRINT_LEN];
	struct http_resp r;

	snprintf(body, sizeof(body), "{" ITEMS ",\"locale\":%s}", refused[_i].json);
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	ck_assert_int_eq(create(fx.auth_a, body, -1, NULL, &r), 0);
	assert_fail(&r, 400, refused[_i].needle);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	http_free(&r);
}
END_TEST

/* A shipped language as sent, what is stored, and the page's <html> for it. */
static const struct {
	const char *json;
	const char *stored;     /* "-": none */
	const char *html;
} kept[] = {
	{ "\"fa-AF\"", "fa_AF", "<html lang=\"fa-AF\" dir=\"rtl\">" },
	{ "\"FA_af\"", "fa_AF", "<html lang=\"fa-AF\" dir=\"rtl\">" },
	{ "\"ps\"", "ps", "<html lang=\"ps\" dir=\"rtl\">" },
	{ "\"en\"", "en", "<html lang=\"en\" dir=\"ltr\">" },
	{ "null", "-", "<html lang=\"fa-AF\" dir=\"rtl\">" },    /* the browser's, then */
};

/* GETs path with an Accept-Language header; the reply (status want) into r. */
static void
get_with(const char *path, const char *accept_language, long want, struct http_resp *r)
{
	char h[128];
	const char *headers[] = { h, NULL };

	snprintf(h, sizeof(h), "Accept-Language: %s", accept_language);
	ck_assert_int_eq(http_do("GET", path, headers, NULL, 0, r), 0);
	ck_assert_int_eq(r->status, want);
}

/* Session id's page (with query, "" for none) in accept_language: status want, holds text. */
static void
page_has(const char *id, const char *query, const char *accept_language, long want,
    const char *text)
{
	char path[128];
	struct http_resp r;

	snprintf(path, sizeof(path), "/checkout/%s%s", id, query);
	get_with(path, accept_language, want, &r);
	ck_assert_msg(strstr(r.body, text) != NULL, "%s (%s) lacks %s", path, accept_language,
	    text);
	http_free(&r);
}

START_TEST(test_kept)
{
	char body[256], id[37];
	const char *stored;

	snprintf(body, sizeof(body), "{" ITEMS ",\"locale\":%s}", kept[_i].json);
	new_session(fx.auth_a, body, id);
	stored = db_value("SELECT coalesce(locale, '-') FROM payment_sessions WHERE id = $1::uuid",
	    id);
	ck_assert_ptr_nonnull(stored);
	ck_assert_str_eq(stored, kept[_i].stored);
	/* The merchant's locale wins over the browser's language, which counts without one. */
	page_has(id, "", "fa-AF, en;q=0.5", 200, kept[_i].html);
	/* The customer's own choice wins over both. */
	page_has(id, "?lang=ps", "fa-AF", 200, "<html lang=\"ps\" dir=\"rtl\">");
}
END_TEST

/* Accept-Language: q-values, not order; Vary says the page depends on it; English else. */
START_TEST(test_accept_language)
{
	char id[37], path[128], vary[128];
	struct http_resp r;

	open_session(fx.auth_a, "12.50", "loc-al", id);
	snprintf(path, sizeof(path), "/checkout/%s", id);
	get_with(path, "en;q=0.4, ps;q=0.8, fa-AF;q=0.9", 200, &r);
	ck_assert_ptr_nonnull(strstr(r.body, "<html lang=\"fa-AF\" dir=\"rtl\">"));
	ck_assert_ptr_nonnull(http_header(&r, "Vary", vary, sizeof(vary)));
	ck_assert_ptr_nonnull(strstr(vary, "Accept-Language"));
	http_free(&r);
	page_has(id, "", "de-DE, fr;q=0.9", 200, "<html lang=\"en\" dir=\"ltr\">");
	page_has(id, "", "de-DE", 200, "Cancel and return to the shop");
	/* The 404 page speaks the browser's language too. */
	page_has("00000000-0000-4000-8000-000000000000", "", "ps", 404,
	    "<html lang=\"ps\" dir=\"rtl\">");
}
END_TEST

/* The wallet form takes Persian digits in the account number and Arabic-Indic in the PIN. */
START_TEST(test_digits_typed)
{
	char id[37], acct[16], typed[128];
	struct http_resp r;
	size_t i, o;

	new_customer("50.00", acct);
	open_session(fx.auth_a, "12.50", "loc-digits", id);
	/* Two letters, then ten digits as U+06F0-U+06F9 (UTF-8 DB B0-B9), percent-encoded as a
	 * browser posts them. */
	o = (size_t)snprintf(typed, sizeof(typed), "%.2s", acct);
	for (i = 2; acct[i] != '\0'; i++)
		o += (size_t)snprintf(typed + o, sizeof(typed) - o, "%%DB%%B%c", acct[i]);
	/* PIN 1234 as U+0661-U+0664 (UTF-8 D9 A1-A4). */
	pay_wallet(id, typed, "%D9%A1%D9%A2%D9%A3%D9%A4", &r);
	assert_paid(&r, id);
	ck_assert_int_eq(balance_of(acct), 3750);
	http_free(&r);
	assert_ledger_ok();
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("locale", "locale", 60, &t);

	tcase_add_loop_test(t, test_refused, 0, NELEM(refused));
	tcase_add_loop_test(t, test_kept, 0, NELEM(kept));
	tcase_add_test(t, test_accept_language);
	tcase_add_test(t, test_digits_typed);
	return fixture_main(s, NULL, NULL);
}
