/*
 * Unit tests of the hosted page's languages: Accept-Language negotiation, the digits a
 * customer types (either set), numbers as each language shows them, and switching catalogs
 * from one request to the next (the build's po/locale).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "form.h"
#include "html.h"
#include "i18n.h"
#include "runner.h"

/* An Accept-Language header and the catalog it gets (NULL: none of ours; the page: en). */
static const struct {
	const char *header;
	const char *want;
} negotiations[] = {
	{ "fa-AF, ps", "fa_AF" },
	{ "fa-AF,ps;q=0.9,en;q=0.8", "fa_AF" },
	{ "ps, fa-AF", "ps" },
	{ "en;q=0.5, ps;q=0.9", "ps" },             /* q-values, not order */
	{ "en;q=0.9, fa;q=0.9", "en" },             /* a tie: the earlier entry */
	{ "fa", "fa_AF" },                          /* a range matches its longer tags */
	{ "fa-IR", NULL },                          /* Iranian Persian is not Dari */
	{ "ps-AF", "ps" },                          /* a tag matches its shorter range */
	{ "PS-af", "ps" },                          /* case does not matter */
	{ "fa_AF", "fa_AF" },
	{ "en-US,en;q=0.9", "en" },
	{ "de-DE, fr;q=0.8", NULL },
	{ "de, ps;q=0.1", "ps" },
	{ "ps;q=0, en", "en" },                     /* q=0: not acceptable */
	{ "ps;q=0", NULL },
	{ "ps;q=0.000, fa-AF;q=0.001", "fa_AF" },
	{ " ps ; q=0.7 , fa-AF ; q=0.6", "ps" },     /* spaces around the parts */
	{ "ps;q=1.0", "ps" },
	{ "ps;q=2", NULL },                          /* malformed q: not acceptable ... */
	{ "ps;q=x, en;q=0.1", "en" },               /* ... the others still count */
	{ "*", NULL },
	{ "*;q=0.5, ps", "ps" },
	{ "", NULL },
	{ ",,,", NULL },
	{ "p", NULL },
	{ "pst", NULL },
	{ "en-", "en" },
	{ NULL, NULL },
};

START_TEST(test_negotiate)
{
	const struct i18n_lang *l = i18n_negotiate(negotiations[_i].header);

	if (negotiations[_i].want == NULL)
		ck_assert_msg(l == NULL, "%s: got %s", negotiations[_i].header, l ? l->code : "");
	else {
		ck_assert_msg(l != NULL, "%s: got none", negotiations[_i].header);
		ck_assert_str_eq(l->code, negotiations[_i].want);
	}
}
END_TEST

START_TEST(test_find)
{
	ck_assert_str_eq(i18n_find("fa-AF")->code, "fa_AF");
	ck_assert_str_eq(i18n_find("fa_af")->code, "fa_AF");
	ck_assert_str_eq(i18n_find("EN")->code, "en");
	ck_assert_str_eq(i18n_find("ps")->tag, "ps");
	ck_assert(i18n_find("fa") == NULL);
	ck_assert(i18n_find("en-US") == NULL);
	ck_assert(i18n_find("") == NULL);
	ck_assert(i18n_find(NULL) == NULL);
	ck_assert(i18n_find("fa-AFx") == NULL);
	ck_assert(i18n_find("ps")->rtl && i18n_find("fa-AF")->rtl && !i18n_find("en")->rtl);
}
END_TEST

/* What a customer types and what validation then sees. */
static const struct {
	const char *typed;
	const char *ascii;
} typed[] = {
	{ "1234", "1234" },
	{ "\xdb\xb1\xdb\xb2\xdb\xb3\xdb\xb4", "1234" },                 /* Persian ۱۲۳۴ */
	{ "\xd9\xa1\xd9\xa2\xd9\xa3\xd9\xa4", "1234" },                 /* Arabic-Indic ١٢٣٤ */
	{ "\xdb\xb0\xdb\xb9\xd9\xa0\xd9\xa9", "0909" },                 /* the ends of both */
	{ "1\xdb\xb2" "3\xd9\xa4", "1234" },                            /* mixed */
	{ "CU\xdb\xb7\xdb\xb2\xdb\xb4\xdb\xb1\xdb\xb6\xdb\xb4\xdb\xb9\xdb\xb5\xdb\xb0\xdb\xb3",
	  "CU7241649503" },
	{ "\xdb\xb4\xdb\xb2 \xdb\xb4\xdb\xb2", "42 42" },               /* card groups */
	{ "\xdb\xb0\xdb\xb1/\xdb\xb3\xdb\xb0", "01/30" },               /* expiry */
	{ "\xdb\xaf\xdb\xba\xd9\x9f\xd9\xaa", "\xdb\xaf\xdb\xba\xd9\x9f\xd9\xaa" },  /* neighbours */
	{ "\xd9\xab", "\xd9\xab" },                                     /* a decimal separator */
	{ "\xdb", "\xdb" },                                             /* a cut sequence */
	{ "", "" },
};

START_TEST(test_ascii_digits)
{
	char s[64];

	snprintf(s, sizeof(s), "%s", typed[_i].typed);
	i18n_ascii_digits(s);
	ck_assert_str_eq(s, typed[_i].ascii);
}
END_TEST

/* The checkout's fields take either digit set once normalised, and nothing else more. */
START_TEST(test_typed_fields)
{
	char pin[] = "\xdb\xb1\xdb\xb2\xdb\xb3\xdb\xb4", acct[] = "CU\xd9\xa1\xd9\xa2\xd9\xa3"
	    "\xd9\xa4\xd9\xa5\xd9\xa6\xd9\xa7\xd9\xa8\xd9\xa9\xd9\xa0";

	ck_assert_ptr_nonnull(form_check("pin", pin));   /* refused as typed ... */
	i18n_ascii_digits(pin);
	ck_assert_ptr_null(form_check("pin", pin));      /* ... taken once normalised */
	i18n_ascii_digits(acct);
	ck_assert_str_eq(acct, "CU1234567890");
	ck_assert_ptr_null(form_check("account_number", acct));
}
END_TEST

START_TEST(test_number)
{
	char out[64];

	ck_assert_str_eq(i18n_number(i18n_find("en"), "1250.50", out, sizeof(out)), "1250.50");
	ck_assert_str_eq(i18n_number(i18n_find("fa-AF"), "1,250.50", out, sizeof(out)),
	    "\xdb\xb1\xd9\xac\xdb\xb2\xdb\xb5\xdb\xb0\xd9\xab\xdb\xb5\xdb\xb0");
	ck_assert_str_eq(i18n_number(i18n_find("ps"), "2026-11-25 16:05", out, sizeof(out)),
	    "\xdb\xb2\xdb\xb0\xdb\xb2\xdb\xb6-\xdb\xb1\xdb\xb1-\xdb\xb2\xdb\xb5 "
	    "\xdb\xb1\xdb\xb6:\xdb\xb0\xdb\xb5");
	/* Cut at a whole character: 5 bytes hold two digits of two bytes each. */
	ck_assert_str_eq(i18n_number(i18n_find("ps"), "123", out, 5), "\xdb\xb1\xdb\xb2");
	ck_assert_str_eq(i18n_number(i18n_find("en"), "123", out, 3), "12");
}
END_TEST

/*
 * One process serves one language after another: each request gets its own catalog's text,
 * never the one before's (glibc caches translations per locale, and the locale stays
 * C.UTF-8), and a text missing from a catalog is the English one, never "".
 */
START_TEST(test_switch)
{
	const char *top = getenv("top_builddir");
	char dir[4096];
	static const char *order[] = { "fa-AF", "ps", "en", "ps", "fa-AF", "en", "fa-AF" };
	static const struct { const char *code, *total; } want[] = {
		{ "en", "Total" }, { "fa_AF", "مجموع" }, { "ps", "ټولټال" },
	};
	size_t i, j;

	snprintf(dir, sizeof(dir), "%s/po/locale", top != NULL ? top : ".");
	for (i = 0; i < NELEM(order); i++) {
		const struct i18n_lang *l = i18n_find(order[i]);

		ck_assert_ptr_eq(i18n_use(l, dir), l);
		ck_assert_ptr_eq(i18n_current(), l);
		for (j = 0; strcmp(want[j].code, l->code) != 0; j++)
			;
		ck_assert_str_eq(_("Total"), want[j].total);
		ck_assert_str_eq(_("no such message in any catalog"), "no such message in any catalog");
		/* A context with no translation falls back to the English text. */
		ck_assert_str_eq(P_("no such context", "Total"), "Total");
	}
	/* The page's title and heading are one English text with two translations. */
	i18n_use(i18n_find("ps"), dir);
	ck_assert_str_ne(P_("title", "Pay %s"), _("Pay %s"));
	ck_assert_str_ne(P_("title", "Pay %s"), "Pay %s");
}
END_TEST

/* Without its catalog a language is served as English, lang and all: never a mixed page. */
START_TEST(test_missing_catalog)
{
	const struct i18n_lang *l = i18n_use(i18n_find("ps"), "/nonexistent/locale");

	ck_assert_str_eq(l->code, "en");
	ck_assert_ptr_eq(i18n_current(), l);
	ck_assert_str_eq(_("Total"), "Total");
	ck_assert_str_eq(i18n_use(i18n_find("fa-AF"), "/nonexistent/locale")->code, "en");
}
END_TEST

START_TEST(test_html_msg)
{
	struct html h = { 0 };

	html_msg(&h, "a <b> %s & c %s", "<bdi>x</bdi>");
	ck_assert_str_eq(h.p, "a &lt;b&gt; <bdi>x</bdi> &amp; c %s");
	html_free(&h);
	html_msg(&h, "no placeholder <", "<i>");
	ck_assert_str_eq(h.p, "no placeholder &lt;");
	html_free(&h);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("i18n", "i18n", 0, &t);

	tcase_add_loop_test(t, test_negotiate, 0, NELEM(negotiations));
	tcase_add_test(t, test_find);
	tcase_add_loop_test(t, test_ascii_digits, 0, NELEM(typed));
	tcase_add_test(t, test_typed_fields);
	tcase_add_test(t, test_number);
	tcase_add_test(t, test_switch);
	tcase_add_test(t, test_missing_catalog);
	tcase_add_test(t, test_html_msg);
	return run_suite(s);
}
