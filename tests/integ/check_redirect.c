/*
 * Where the customer is sent, against the real stack (tests/integration.sh): open redirects
 * and redirect hosts a browser would rewrite are refused at create-session with nothing
 * stored, good hosts are named in the page's form-action, and no form field can choose
 * another destination.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "checkout_form.h"
#include "fixture.h"
#include "http.h"
#include "session_body.h"

/* --- Open redirects: only absolute http(s) URLs with a host and no userinfo. */

static const char *const bad_urls[] = {
	"javascript:alert(1)",
	"JavaScript:alert(document.domain)",
	" javascript:alert(1)",
	"javascript://shop.example/%0aalert(1)",
	"//evil.example",
	"//evil.example/https://shop.example/",
	"///evil.example",
	"\\\\evil.example",
	"/\\evil.example",
	"ftp://x.example/",
	"data:text/html,<script>alert(1)</script>",
	"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
	"vbscript:msgbox(1)",
	"file:///etc/passwd",
	"mailto:a@example.com",
	"http:/evil.example",
	"http:evil.example",
	"https:/\\evil.example",
	"https://",
	"https:///path",
	"https://user@evil.example/",
	"https://shop.example@evil.example/",
	"https://shop.example:443@evil.example/",
	"https://evil.example\\@shop.example/",
	"https://evil.example\\.shop.example/",
	"https://:443/",
	"https://.evil.example/",
	"https://evil.example/\nSet-Cookie: x=1",
	"https://evil.example/\r\nLocation: https://evil.example/",
	"https://evil.example /",
	"https://evil.example/\t",
	"evil.example",
	"/relative/path",
	"",
};

/* url in field f: a 400 whose message is the field's name then rule; nothing stored. */
static void
assert_url_refused(enum field f, const char *url, const char *rule)
{
	char *body = body_with(f, url, strlen(url)), before[FOOTPRINT_LEN], want[160];
	struct http_resp r;

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	ck_assert_int_eq(create(fx.auth_a, body, -1, NULL, &r), 0);
	snprintf(want, sizeof(want), "%s %s", fields[f].json, rule);
	assert_fail(&r, 400, want);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	http_free(&r);
	free(body);
}

START_TEST(test_open_redirect_refused)
{
	assert_url_refused(_i % 2 ? F_FAILURE : F_SUCCESS, bad_urls[_i / 2], "must");
}
END_TEST

/*
 * Hosts a browser would not keep as written (percent-encoded, non-ASCII, numbers it reads as
 * IPv4): the page's form-action could not name them and the redirect after the payment would
 * be blocked, so create-session refuses them. The 400 names the field and the host rule.
 */
static const char *const bad_hosts[] = {
	"http://localhost%2E:18999/",
	"http://%6c%6f%63%61%6c%68%6f%73%74/",
	"https://shop%2eexample/ok",
	"https://shop.example%/ok",
	"https://[::1%25lo]/ok",
	"http://\xef\xbd\x85\xef\xbd\x98\xef\xbd\x81\xef\xbd\x8d\xef\xbd\x90\xef\xbd\x8c"
	"\xef\xbd\x85.com/",
	"https://p\xd0\xb0ypal.com/",
	"https://b\xc3\xbc" "cher.example/",
	"https://shop\xef\xbc\x8e" "example/",
	"https://shop_1.example/",
	"https://shop.example./",
	"http://2130706433/",
	"http://0x7f.1/",
	"https://shop.example:/ok",
};

START_TEST(test_redirect_host_refused)
{
	assert_url_refused(_i % 2 ? F_FAILURE : F_SUCCESS, bad_hosts[_i / 2],
	    "must have a host of ASCII letters, digits, hyphens and dots, an IPv4 address or a"
	    " bracketed IPv6 address (no percent-encoding");
}
END_TEST

/*
 * The positive control: plain names, IPv4 and IPv6 literals, with ports, are stored and named
 * in the page's form-action as written.
 */
START_TEST(test_redirect_host_accepted)
{
	static const char *const good[][2] = {
		{ "http://localhost:18999/done", "http://localhost:18999" },
		{ "https://Shop-1.example.com/ok?x=%2E", "https://Shop-1.example.com" },
		{ "http://127.0.0.1:8080/", "http://127.0.0.1:8080" },
		{ "https://[2001:db8::1]:8443/ok", "https://[2001:db8::1]:8443" },
	};
	char id[37], csp[2048], before[FOOTPRINT_LEN];
	struct http_resp r;
	size_t i;

	for (i = 0; i < NELEM(good); i++) {
		char *body = body_with(F_SUCCESS, good[i][0], strlen(good[i][0]));

		snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
		ck_assert_int_eq(create(fx.auth_a, body, -1, NULL, &r), 0);
		free(body);
		ck_assert_msg(r.status == 200, "%s: %ld %s", good[i][0], r.status, r.body);
		snprintf(id, sizeof(id), "%s", http_json_str(&r, "session_id"));
		http_free(&r);
		ck_assert_str_ne(db_footprint(NULL, NULL), before);
		ck_assert_str_eq(db_value(fields[F_SUCCESS].stored, id), good[i][0]);
		get_page(id, &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_ptr_nonnull(http_header(&r, "Content-Security-Policy", csp, sizeof(csp)));
		ck_assert_msg(strstr(csp, good[i][1]) != NULL, "%s not in %s", good[i][1], csp);
		http_free(&r);
	}
}
END_TEST

/* Form fields cannot choose where the customer goes, nor smuggle a PIN past a NUL. */
START_TEST(test_form_cannot_redirect)
{
	char id[37], acct[16], fields_[512], loc[1024];
	struct http_resp r;
	char *body = body_with(F_NAME, "Tea", 3);

	new_session(fx.auth_a, body, id);
	free(body);
	new_customer("10.00", acct);
	/* A PIN with a NUL after the right digits is not the right PIN. */
	snprintf(fields_, sizeof(fields_), "method=wallet&action=pay&account_number=%s"
	    "&pin=1234%%00", acct);
	post_form(id, fields_, &r);
	ck_assert_int_eq(r.status, 200);
	http_free(&r);
	snprintf(fields_, sizeof(fields_), "method=wallet&action=pay&account_number=%s%%00x"
	    "&pin=1234", acct);
	post_form(id, fields_, &r);
	ck_assert_int_eq(r.status, 200);
	http_free(&r);
	ck_assert_str_eq(status_of(id), "open");
	/* Extra fields naming another destination are ignored: the merchant's URL is used. */
	snprintf(fields_, sizeof(fields_), "redirect_success_url=https%%3A%%2F%%2Fevil.example%%2F"
	    "&next=%%2F%%2Fevil.example&method=wallet&action=pay&account_number=%s&pin=1234"
	    "&redirect_success_url=javascript%%3Aalert(1)", acct);
	post_form(id, fields_, &r);
	ck_assert_int_eq(r.status, 303);
	ck_assert_ptr_nonnull(http_header(&r, "Location", loc, sizeof(loc)));
	ck_assert_msg(strncmp(loc, "https://shop.example/ok?session_id=", 35) == 0, "Location %s",
	    loc);
	ck_assert_ptr_null(strstr(loc, "evil"));
	http_free(&r);
	ck_assert_str_eq(status_of(id), "paid");
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("redirect", "redirect", 60, &t);

	tcase_add_loop_test(t, test_open_redirect_refused, 0, 2 * NELEM(bad_urls));
	tcase_add_loop_test(t, test_redirect_host_refused, 0, 2 * NELEM(bad_hosts));
	tcase_add_test(t, test_redirect_host_accepted);
	tcase_add_test(t, test_form_cannot_redirect);
	return fixture_main(s, NULL, NULL);
}
