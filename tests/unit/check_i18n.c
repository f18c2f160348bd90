/*
 * Unit tests of the hosted page's languages: Accept-Language negotiation, the digits a
 * customer types (either set), numbers as each language shows them, and switching catalogs
 * from one request to the next (the build's po/locale), and a language added by putting its
 * catalog in locale_dir with no change to the code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "checkout_page.h"
#include "form.h"
#include "html.h"
#include "i18n.h"
#include "runner.h"
#include "session.h"

/* The build's catalogs (po/locale), where make compiled po/LINGUAS's languages. */
static const char *
build_locale(void)
{
	static char dir[4096];
	const char *top = getenv("top_builddir");

	snprintf(dir, sizeof(dir), "%s/po/locale", top != NULL ? top : ".");
	return dir;
}

/* Every case starts (in its own process) with the languages a worker would find there. */
static void
setup(void)
{
	ck_assert_uint_eq(i18n_init(build_locale()), 3);
}

/*
 * test_added_catalog's own locale_dir, made and removed by the runner's process around the
 * cases (so also when the case failed).
 */
static char tmpdir[512];

static void
make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/marketpay-i18n-unit.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		perror(tmpdir);
		exit(EXIT_FAILURE);
	}
}

static void
remove_tmpdir(void)
{
	char cmd[600];

	if (tmpdir[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
}

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
	static const char *order[] = { "fa-AF", "ps", "en", "ps", "fa-AF", "en", "fa-AF" };
	static const struct { const char *code, *total; } want[] = {
		{ "en", "Total" }, { "fa_AF", "مجموع" }, { "ps", "ټولټال" },
	};
	size_t i, j;

	for (i = 0; i < NELEM(order); i++) {
		const struct i18n_lang *l = i18n_find(order[i]);

		ck_assert_ptr_eq(i18n_use(l), l);
		ck_assert_ptr_eq(i18n_current(), l);
		for (j = 0; strcmp(want[j].code, l->code) != 0; j++)
			;
		ck_assert_str_eq(_("Total"), want[j].total);
		ck_assert_str_eq(_("no such message in any catalog"), "no such message in any catalog");
		/* A context with no translation falls back to the English text. */
		ck_assert_str_eq(P_("no such context", "Total"), "Total");
	}
	/* The page's title and heading are one English text with two translations. */
	i18n_use(i18n_find("ps"));
	ck_assert_str_ne(P_("title", "Pay %s"), _("Pay %s"));
	ck_assert_str_ne(P_("title", "Pay %s"), "Pay %s");
}
END_TEST

/* Without catalogs the page is English only, and no other language is offered. */
START_TEST(test_missing_catalog)
{
	ck_assert_uint_eq(i18n_init("/nonexistent/locale"), 1);
	ck_assert_ptr_null(i18n_find("ps"));
	ck_assert_ptr_null(i18n_negotiate("ps, fa-AF"));
	ck_assert_str_eq(i18n_current()->code, "en");
	ck_assert_str_eq(_("Total"), "Total");
}
END_TEST

/* The metadata of the shipped catalogs, read from the catalogs themselves. */
START_TEST(test_shipped_meta)
{
	const struct i18n_lang *fa = i18n_find("fa-AF"), *ps = i18n_find("ps");

	ck_assert_str_eq(fa->name, "دری");
	ck_assert_str_eq(ps->name, "پښتو");
	ck_assert(fa->rtl && ps->rtl && !i18n_find("en")->rtl);
	ck_assert(fa->digits == I18N_DIGITS_PERSIAN && ps->digits == I18N_DIGITS_PERSIAN);
	ck_assert_str_eq(i18n_current()->code, "en");   /* reading them leaves English current */
}
END_TEST

/* Writes text to the file name in tmpdir; fails the test otherwise. */
static void
put_file(const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

#define PO_HEADER "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=UTF-8\\n\"\n\n"

/*
 * A language added the documented way, by its catalog alone: a German one compiled here, Dari
 * copied under another name (prs, its ISO 639-3 code), and an Italian one without the three
 * metadata texts. The worker offers them: Accept-Language, ?lang=, the links with their
 * names, the page's direction, create-session's locale. Directories that are not catalog
 * names, or hold no marketpay.mo, are not languages.
 */
START_TEST(test_added_catalog)
{
	char cmd[16384], msg[512], tags[256];
	static const char *not_langs[] = { "EN_us", "de-DE", "x", "abcd", "de_de", "de_DEU" };
	const struct i18n_lang *de, *prs, *it;
	struct session_in in;
	struct json_object *body;
	struct html h = { 0 };
	struct req req = { 0 };
	size_t i;

	put_file("de.po", PO_HEADER
	    "msgctxt \"language name\"\nmsgid \"English\"\nmsgstr \"Deutsch & Co\"\n\n"
	    "msgctxt \"text direction\"\nmsgid \"ltr\"\nmsgstr \"ltr\"\n\n"
	    "msgctxt \"digits\"\nmsgid \"latin\"\nmsgstr \"latin\"\n\n"
	    "msgid \"Total\"\nmsgstr \"Summe\"\n");
	put_file("it.po", PO_HEADER "msgid \"Total\"\nmsgstr \"Totale\"\n");
	snprintf(cmd, sizeof(cmd), "cd %s && mkdir -p de/LC_MESSAGES it/LC_MESSAGES "
	    "prs/LC_MESSAGES fr/LC_MESSAGES && msgfmt -c -o de/LC_MESSAGES/marketpay.mo de.po && "
	    "msgfmt -o it/LC_MESSAGES/marketpay.mo it.po && "
	    "cp '%s/fa_AF/LC_MESSAGES/marketpay.mo' prs/LC_MESSAGES/", tmpdir, build_locale());
	ck_assert_int_eq(system(cmd), 0);
	for (i = 0; i < NELEM(not_langs); i++) {
		snprintf(cmd, sizeof(cmd), "mkdir -p %s/%s/LC_MESSAGES && cp %s/de/LC_MESSAGES/"
		    "marketpay.mo %s/%s/LC_MESSAGES/", tmpdir, not_langs[i], tmpdir, tmpdir, not_langs[i]);
		ck_assert_int_eq(system(cmd), 0);
	}

	ck_assert_uint_eq(i18n_init(tmpdir), 4);
	i18n_tags(tags, sizeof(tags));
	ck_assert_str_eq(tags, "en, de, it or prs");
	ck_assert_ptr_nonnull(de = i18n_find("de"));
	ck_assert_ptr_nonnull(prs = i18n_find("prs"));
	ck_assert_ptr_nonnull(it = i18n_find("it"));
	ck_assert_ptr_null(i18n_find("fa-AF"));   /* not in this locale_dir */
	ck_assert_str_eq(de->name, "Deutsch & Co");
	ck_assert(!de->rtl && de->digits == I18N_DIGITS_LATIN);
	ck_assert_str_eq(prs->name, "دری");
	ck_assert(prs->rtl && prs->digits == I18N_DIGITS_PERSIAN);
	ck_assert_str_eq(it->name, "it");   /* no metadata: its tag, ltr, Latin digits */
	ck_assert(!it->rtl && it->digits == I18N_DIGITS_LATIN);

	/* Accept-Language and ?lang= (over the browser's choice) pick them. */
	ck_assert_ptr_eq(i18n_negotiate("de-CH, fr;q=0.9"), de);
	ck_assert_ptr_eq(i18n_negotiate("fr, prs;q=0.5"), prs);
	req.accept_language = "de";
	req.query = "lang=prs";
	ck_assert_ptr_eq(checkout_page_lang(&req, NULL), prs);
	ck_assert_str_eq(_("Total"), "مجموع");
	req.query = NULL;
	ck_assert_ptr_eq(checkout_page_lang(&req, "it"), it);   /* the session's locale */
	ck_assert_str_eq(_("Total"), "Totale");
	ck_assert_ptr_eq(checkout_page_lang(&req, NULL), de);
	ck_assert_str_eq(_("Total"), "Summe");

	/* The page: its direction from its catalog, a link to each other language, escaped. */
	checkout_page_start(&h, prs, "t");
	ck_assert_ptr_nonnull(strstr(h.p, "<html lang=\"prs\" dir=\"rtl\">"));
	ck_assert_ptr_nonnull(strstr(h.p, "<span lang=\"prs\" aria-current=\"true\">دری</span>"));
	ck_assert_ptr_nonnull(strstr(h.p, "<a href=\"?lang=de\" lang=\"de\" hreflang=\"de\">"
	    "Deutsch &amp; Co</a>"));
	ck_assert_ptr_nonnull(strstr(h.p, "<a href=\"?lang=it\" lang=\"it\" hreflang=\"it\">it</a>"));
	ck_assert_ptr_nonnull(strstr(h.p, "<a href=\"?lang=en\" lang=\"en\" hreflang=\"en\">"
	    "English</a>"));
	ck_assert_ptr_null(strstr(h.p, "fa-AF"));
	html_free(&h);

	/* create-session takes the new language as its locale and names it when refusing. */
	body = json_tokener_parse("{\"items\":[{\"id\":\"a\",\"name\":\"A\",\"price\":"
	    "1.00}],\"locale\":\"de\"}");
	ck_assert_msg(session_validate(body, 10, 100000, &in, msg, sizeof(msg)), "%s", msg);
	session_release(&in);
	json_object_put(body);
	body = json_tokener_parse("{\"items\":[{\"id\":\"a\",\"name\":\"A\",\"price\":"
	    "1.00}],\"locale\":\"fa-AF\"}");
	ck_assert(!session_validate(body, 10, 100000, &in, msg, sizeof(msg)));
	ck_assert_str_eq(msg, "locale must be one of the hosted page's languages: en, de, it or prs");
	json_object_put(body);
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
	tcase_add_checked_fixture(t, setup, NULL);
	tcase_add_unchecked_fixture(t, make_tmpdir, remove_tmpdir);
	tcase_add_test(t, test_missing_catalog);
	tcase_add_test(t, test_shipped_meta);
	tcase_add_test(t, test_added_catalog);
	tcase_add_test(t, test_html_msg);
	return run_suite(s);
}
