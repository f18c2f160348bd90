/*
 * What merchants send, against the real stack (tests/integration.sh): SQL metacharacters
 * stored and returned verbatim, NUL bytes refused with nothing stored, markup escaped on the
 * page and percent-encoded in the redirect. Redirect URLs: check_redirect.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "checkout_form.h"
#include "fixture.h"
#include "http.h"
#include "session_body.h"

/* The text as the page must show it: html.c's escaping, written again independently. */
static void
html_escaped(const char *s, char *out, size_t n)
{
	size_t o = 0;

	for (; *s != '\0' && o + 7 < n; s++) {
		const char *e = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" :
		    *s == '"' ? "&quot;" : *s == '\'' ? "&#39;" : NULL;

		if (e != NULL) {
			memcpy(out + o, e, strlen(e));
			o += strlen(e);
		} else
			out[o++] = *s;
	}
	out[o] = '\0';
}

/* --- SQL metacharacters: stored verbatim, returned verbatim, harmless. */

static const struct {
	enum field f;
	const char *value;
} verbatim[] = {
	{ F_ID, "'; DROP TABLE payment_sessions; --" },
	{ F_ID, "\\" },
	{ F_ID, "100% _off_ \\% \\_ %%" },
	{ F_ID, "' OR '1'='1' --" },
	{ F_NAME, "'; DROP TABLE session_items; --" },
	{ F_NAME, "\"quoted\" 'single' `back` \\'escaped\\'" },
	{ F_NAME, "$1 $$ $tag$ E'\\x41' /* */ ; \\N \\. COPY" },
	{ F_NAME, "%s %n %x % _ \\u0000 \\0" },
	{ F_NAME, "\xe2\x80\xa8 line\xe2\x80\xa9 \xf0\x9f\x98\x80 \xc3\xa9" },
	{ F_USER, "'; DELETE FROM ledger_entries; --" },
	{ F_USER, "\\" },
	{ F_USER, "order_%_100%" },
	{ F_USER, "x' UNION SELECT digest FROM api_keys --" },
	{ F_EMAIL, "o'brien;--%_\"x\\y@example.com" },
	{ F_EMAIL, "'or'1'='1@example.com" },
	{ F_EMAIL, "a%_b$$@example.com" },
	{ F_SUCCESS, "https://shop.example/ok?q=';DROP%20TABLE%20x;--&p=%_\"'" },
	{ F_SUCCESS, "http://shop.example/a'b\"c%_;--$1" },
	{ F_FAILURE, "https://shop.example/no?'OR'1'='1" },
};

START_TEST(test_verbatim)
{
	enum field f = verbatim[_i].f;
	const char *value = verbatim[_i].value, *a[] = { fx.auth_a, NULL };
	struct json_object *items, *v;
	struct http_resp r, g;
	char *body = body_with(f, value, strlen(value)), path[128], id[64], esc[512];

	ck_assert_int_eq(create(fx.auth_a, body, -1, NULL, &r), 0);
	ck_assert_msg(r.status == 200, "%s = %s: %ld %s", fields[f].json, value, r.status, r.body);
	snprintf(id, sizeof(id), "%s", http_json_str(&r, "session_id"));
	/* Stored as sent, byte for byte. */
	ck_assert_str_eq(db_value(fields[f].stored, id), value);
	/* The tables the payloads name are all still there and whole. */
	ck_assert_ptr_nonnull(db_value("SELECT count(*) FROM payment_sessions s JOIN session_items i"
	    " ON i.session_id = s.id JOIN api_keys k ON k.merchant_id = s.merchant_id", NULL));
	ck_assert_str_eq(db_value("SELECT count(*) FROM session_items WHERE session_id = $1::uuid",
	    id), "1");
	/* Returned as sent. */
	snprintf(path, sizeof(path), "/api/v1/payment/sessions/%s", id);
	ck_assert_int_eq(http_do("GET", path, a, NULL, 0, &g), 0);
	ck_assert_int_eq(g.status, 200);
	if (f == F_ID || f == F_NAME) {
		ck_assert(json_object_object_get_ex(g.json, "items", &items));
		ck_assert(json_object_object_get_ex(json_object_array_get_idx(items, 0),
		    f == F_ID ? "id" : "name", &v));
		ck_assert_str_eq(json_object_get_string(v), value);
	} else
		ck_assert_str_eq(http_json_str(&g, fields[f].json), value);
	http_free(&g);
	/* And the page shows a name as text. */
	if (f == F_NAME) {
		get_page(id, &g);
		ck_assert_int_eq(g.status, 200);
		html_escaped(value, esc, sizeof(esc));
		ck_assert_msg(strstr(g.body, esc) != NULL, "page lacks %s", esc);
		http_free(&g);
	}
	http_free(&r);
	free(body);
}
END_TEST

/* --- NUL bytes: refused with a 400 naming the field, nothing stored. */

static const struct {
	enum field f;
	const char *value;
	size_t len;
} nuls[] = {
	{ F_ID, "a\0b", 3 },
	{ F_ID, "\0", 1 },
	{ F_NAME, "Tea\0<script>", 12 },
	{ F_USER, "order\0-1", 8 },
	{ F_EMAIL, "a\0@example.com", 14 },
	{ F_EMAIL, "a@example.com\0", 14 },
	{ F_SUCCESS, "https://shop.example/\0javascript:alert(1)", 41 },
	{ F_FAILURE, "https://shop.example\0.evil.example/", 35 },
};

START_TEST(test_nul_refused)
{
	char *body = body_with(nuls[_i].f, nuls[_i].value, nuls[_i].len);
	char before[FOOTPRINT_LEN], want[128];
	struct http_resp r;

	/* The body really carries the escape, not a cut string. */
	ck_assert_ptr_nonnull(strstr(body, "\\u0000"));
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	ck_assert_int_eq(create(fx.auth_a, body, -1, NULL, &r), 0);
	snprintf(want, sizeof(want), "%s must not contain NUL characters", fields[nuls[_i].f].json);
	assert_fail(&r, 400, want);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	http_free(&r);
	free(body);
}
END_TEST

/* Raw NUL bytes in the body (not escaped): never cut the body short at the NUL. */
START_TEST(test_raw_nul_refused)
{
	static const char good[] = "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}]}";
	char body[256], before[FOOTPRINT_LEN];
	struct http_resp r;
	size_t n = strlen(good);

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	/* A whole valid object, then a NUL and more: a C string would stop at the NUL. */
	memcpy(body, good, n);
	memcpy(body + n, "\0{\"items\":[]}", 13);
	ck_assert_int_eq(create(fx.auth_a, body, (long)(n + 13), NULL, &r), 0);
	assert_fail(&r, 400, "not valid JSON");
	http_free(&r);
	/* A NUL inside a string, unescaped: "name":"b" becomes "name":"<NUL>". */
	memcpy(body, good, n + 1);
	*(strstr(body, "\"b\"") + 1) = '\0';
	ck_assert_int_eq(create(fx.auth_a, body, (long)n, NULL, &r), 0);
	ck_assert_int_eq(r.status, 400);
	http_free(&r);
	/* Only a NUL. */
	ck_assert_int_eq(create(fx.auth_a, "", 1, NULL, &r), 0);
	ck_assert_int_eq(r.status, 400);
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
}
END_TEST

/* --- Markup: shown as text. */

/* Markup in a name and in user_id: escaped on the page, percent-encoded in the redirect. */
START_TEST(test_markup_escaped)
{
	static const char *const xss[] = {
		"<img src=x onerror=window.__xss=1>",
		"\"><script>window.__xss=1</script>",
		"'><svg/onload=alert(1)>",
		"</title><script>alert(1)</script>",
		"<a href=\"javascript:alert(1)\">x</a>",
	};
	char id[37], esc[256], acct[16], loc[1024];
	struct http_resp r;
	size_t i;

	for (i = 0; i < NELEM(xss); i++) {
		char *body = body_with(F_NAME, xss[i], strlen(xss[i]));

		new_session(fx.auth_a, body, id);
		free(body);
		get_page(id, &r);
		ck_assert_int_eq(r.status, 200);
		html_escaped(xss[i], esc, sizeof(esc));
		ck_assert_msg(strstr(r.body, esc) != NULL, "page lacks %s", esc);
		ck_assert_msg(strstr(r.body, xss[i]) == NULL, "page has %s raw", xss[i]);
		ck_assert_ptr_null(strstr(r.body, "<script"));
		ck_assert_ptr_null(strstr(r.body, "<img"));
		ck_assert_ptr_null(strstr(r.body, "<svg"));
		http_free(&r);
	}
	/* user_id goes into the success URL's query: percent-encoded, no markup, no new lines. */
	{
		char *body = body_with(F_USER, xss[1], strlen(xss[1]));

		new_session(fx.auth_a, body, id);
		free(body);
	}
	new_customer("10.00", acct);
	pay_wallet(id, acct, "1234", &r);
	ck_assert_int_eq(r.status, 303);
	ck_assert_ptr_nonnull(http_header(&r, "Location", loc, sizeof(loc)));
	ck_assert_msg(strstr(loc, "&user_id=%22%3E%3Cscript%3Ewindow.__xss%3D1%3C%2Fscript%3E") !=
	    NULL, "Location %s", loc);
	ck_assert_msg(strpbrk(loc, "<>\"' ") == NULL, "Location %s", loc);
	http_free(&r);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("injection", "injection", 60, &t);

	tcase_add_loop_test(t, test_verbatim, 0, NELEM(verbatim));
	tcase_add_loop_test(t, test_nul_refused, 0, NELEM(nuls));
	tcase_add_test(t, test_raw_nul_refused);
	tcase_add_test(t, test_markup_escaped);
	return fixture_main(s, NULL, NULL);
}
