/*
 * Security cases against the real stack (tests/integration.sh): SQL metacharacters stored and
 * returned verbatim, NUL bytes refused, markup escaped on the page, open redirects and
 * redirect hosts a browser would rewrite refused at create-session, none injectable through
 * the form, one merchant walled off from another, and API keys looked up by their SHA-256
 * digest only.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <curl/curl.h>
#include <libpq-fe.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "auth.h"
#include "crypto.h"
#include "checkout_form.h"
#include "fixture.h"
#include "../load/seal.h"
#include "http.h"

#define CREATE "/api/v1/payment/create-session"
#define SEND "/api/v1/payment/send-money-MultiVendor"
#define PUBKEY "/api/v1/payment/pin-public-key"
#define JSON_CT "Content-Type: application/json"
#define CTL "\"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" "
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The fields of a create-session body that carry merchant text. */
enum field { F_ID, F_NAME, F_USER, F_EMAIL, F_SUCCESS, F_FAILURE, F__MAX };

static const struct {
	const char *json;   /* as named in the 400 message */
	const char *stored; /* SQL: the stored value, $1 = session id */
} fields[F__MAX] = {
	/* F_ID */
	{ "items[0].id", "SELECT item_id FROM session_items WHERE session_id = $1::uuid" },
	/* F_NAME */
	{ "items[0].name", "SELECT name FROM session_items WHERE session_id = $1::uuid" },
	/* F_USER */
	{ "user_id", "SELECT user_id FROM payment_sessions WHERE id = $1::uuid" },
	/* F_EMAIL */
	{ "email", "SELECT email FROM payment_sessions WHERE id = $1::uuid" },
	/* F_SUCCESS */
	{ "redirect_success_url", "SELECT redirect_success_url FROM payment_sessions WHERE"
	  " id = $1::uuid" },
	/* F_FAILURE */
	{ "redirect_failure_url", "SELECT redirect_failure_url FROM payment_sessions WHERE"
	  " id = $1::uuid" },
};

/*
 * A create-session body (caller frees) with ordinary values, except field f, which is the
 * len bytes of value (they may hold NUL; json-c writes it as \u0000). JSON escaping is
 * json-c's, so the server sees exactly value.
 */
static char *
body_with(enum field f, const char *value, size_t len)
{
	const char *plain[F__MAX] = { "sku-1", "Tea", "order-1", "buyer@example.com",
		"https://shop.example/ok", "https://shop.example/failed" };
	const char *keys[F__MAX] = { "id", "name", "user_id", "email", "redirect_success_url",
		"redirect_failure_url" };
	struct json_object *o = json_object_new_object(), *it = json_object_new_object();
	struct json_object *items = json_object_new_array();
	char *out;
	int i;

	for (i = 0; i < F__MAX; i++) {
		struct json_object *v = (enum field)i == f ?
		    json_object_new_string_len(value, (int)len) : json_object_new_string(plain[i]);

		json_object_object_add(i <= F_NAME ? it : o, keys[i], v);
	}
	json_object_object_add(it, "price", json_object_new_double_s(1.0, "1.00"));
	json_object_array_add(items, it);
	json_object_object_add(o, "items", items);
	out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	ck_assert_ptr_nonnull(out);
	return out;
}

static void
create_as(const char *auth, const char *body, long len, struct http_resp *r)
{
	const char *h[] = { JSON_CT, auth, NULL };

	ck_assert_int_eq(http_do("POST", CREATE, h, body, len, r), 0);
}

/* A 4xx reply (marketpay-api(7), ERRORS): success false, a message holding needle. */
static void
assert_fail(const struct http_resp *r, long status, const char *needle)
{
	struct json_object *v;
	const char *msg = http_json_str(r, "message");

	ck_assert_msg(r->status == status, "status %ld, not %ld: %s", r->status, status, r->body);
	ck_assert(json_object_object_get_ex(r->json, "success", &v) &&
	    json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v));
	ck_assert_msg(msg != NULL && strstr(msg, needle) != NULL, "message '%s' lacks '%s'", msg,
	    needle);
}

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

	create_as(fx.auth_a, body, -1, &r);
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
		snprintf(path, sizeof(path), "/checkout/%s", id);
		ck_assert_int_eq(http_do("GET", path, NULL, NULL, 0, &g), 0);
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
	char *body = body_with(nuls[_i].f, nuls[_i].value, nuls[_i].len), before[128], want[128];
	struct http_resp r;

	/* The body really carries the escape, not a cut string. */
	ck_assert_ptr_nonnull(strstr(body, "\\u0000"));
	snprintf(before, sizeof(before), "%s", db_footprint());
	create_as(fx.auth_a, body, -1, &r);
	snprintf(want, sizeof(want), "%s must not contain NUL characters", fields[nuls[_i].f].json);
	assert_fail(&r, 400, want);
	ck_assert_str_eq(db_footprint(), before);
	http_free(&r);
	free(body);
}
END_TEST

/* Raw NUL bytes in the body (not escaped): never cut the body short at the NUL. */
START_TEST(test_raw_nul_refused)
{
	static const char good[] = "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}]}";
	char body[256], before[128];
	struct http_resp r;
	size_t n = strlen(good);

	snprintf(before, sizeof(before), "%s", db_footprint());
	/* A whole valid object, then a NUL and more: a C string would stop at the NUL. */
	memcpy(body, good, n);
	memcpy(body + n, "\0{\"items\":[]}", 13);
	create_as(fx.auth_a, body, (long)(n + 13), &r);
	assert_fail(&r, 400, "not valid JSON");
	http_free(&r);
	/* A NUL inside a string, unescaped: "name":"b" becomes "name":"<NUL>". */
	memcpy(body, good, n + 1);
	*(strstr(body, "\"b\"") + 1) = '\0';
	create_as(fx.auth_a, body, (long)n, &r);
	ck_assert_int_eq(r.status, 400);
	http_free(&r);
	/* Only a NUL. */
	create_as(fx.auth_a, "", 1, &r);
	ck_assert_int_eq(r.status, 400);
	http_free(&r);
	ck_assert_str_eq(db_footprint(), before);
}
END_TEST

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
	char *body = body_with(f, url, strlen(url)), before[128], want[160];
	struct http_resp r;

	snprintf(before, sizeof(before), "%s", db_footprint());
	create_as(fx.auth_a, body, -1, &r);
	snprintf(want, sizeof(want), "%s %s", fields[f].json, rule);
	assert_fail(&r, 400, want);
	ck_assert_str_eq(db_footprint(), before);
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
	char id[37], path[128], csp[2048], before[128];
	struct http_resp r;
	size_t i;

	for (i = 0; i < NELEM(good); i++) {
		char *body = body_with(F_SUCCESS, good[i][0], strlen(good[i][0]));

		snprintf(before, sizeof(before), "%s", db_footprint());
		create_as(fx.auth_a, body, -1, &r);
		free(body);
		ck_assert_msg(r.status == 200, "%s: %ld %s", good[i][0], r.status, r.body);
		snprintf(id, sizeof(id), "%s", http_json_str(&r, "session_id"));
		http_free(&r);
		ck_assert_str_ne(db_footprint(), before);
		ck_assert_str_eq(db_value(fields[F_SUCCESS].stored, id), good[i][0]);
		snprintf(path, sizeof(path), "/checkout/%s", id);
		ck_assert_int_eq(http_do("GET", path, NULL, NULL, 0, &r), 0);
		ck_assert_int_eq(r.status, 200);
		ck_assert_ptr_nonnull(http_header(&r, "Content-Security-Policy", csp, sizeof(csp)));
		ck_assert_msg(strstr(csp, good[i][1]) != NULL, "%s not in %s", good[i][1], csp);
		http_free(&r);
	}
}
END_TEST

/* --- The checkout form: what the customer posts. */



/* A customer wallet holding balance with PIN 1234; its number into acct[16]. */
static void
new_customer(const char *balance, char acct[16])
{
	snprintf(acct, 16, "%s", ctl("account create --kind customer"));
	ck_assert_uint_eq(strlen(acct), 12);
	ck_assert_ptr_nonnull(ctl("account deposit %s %s", acct, balance));
	ck_assert_int_eq(sh("echo 1234 | " CTL "account pin %s >/dev/null", acct), 0);
}

/* A session of the merchant behind auth with body; its id into id[37]. */
static void
new_session(const char *auth, const char *body, char id[37])
{
	struct http_resp r;

	create_as(auth, body, -1, &r);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	snprintf(id, 37, "%s", http_json_str(&r, "session_id"));
	http_free(&r);
}

static const char *
status_of(const char *id)
{
	return db_value("SELECT status FROM payment_sessions WHERE id = $1::uuid", id);
}

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
	char id[37], path[128], esc[256], acct[16], loc[1024];
	struct http_resp r;
	size_t i;

	for (i = 0; i < NELEM(xss); i++) {
		char *body = body_with(F_NAME, xss[i], strlen(xss[i]));

		new_session(fx.auth_a, body, id);
		free(body);
		snprintf(path, sizeof(path), "/checkout/%s", id);
		ck_assert_int_eq(http_do("GET", path, NULL, NULL, 0, &r), 0);
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
	snprintf(path, sizeof(path), "method=wallet&action=pay&account_number=%s&pin=1234", acct);
	post_form(id, path, &r);
	ck_assert_int_eq(r.status, 303);
	ck_assert_ptr_nonnull(http_header(&r, "Location", loc, sizeof(loc)));
	ck_assert_msg(strstr(loc, "&user_id=%22%3E%3Cscript%3Ewindow.__xss%3D1%3C%2Fscript%3E") !=
	    NULL, "Location %s", loc);
	ck_assert_msg(strpbrk(loc, "<>\"' ") == NULL, "Location %s", loc);
	http_free(&r);
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

/* --- Merchants walled off from each other. */

/* Merchant B's view of A's session is exactly its view of a session that does not exist. */
START_TEST(test_cross_merchant_read)
{
	char id[37], path[128], unknown[128], acct[16], f[256];
	const char *b[] = { fx.auth_b, NULL }, *a[] = { fx.auth_a, NULL };
	struct http_resp r1, r2;
	char *body = body_with(F_USER, "secret-order-of-a", 17);

	new_session(fx.auth_a, body, id);
	free(body);
	snprintf(path, sizeof(path), "/api/v1/payment/sessions/%s", id);
	snprintf(unknown, sizeof(unknown), "/api/v1/payment/sessions/%.35s%c", id,
	    id[35] == '0' ? '1' : '0');
	ck_assert_int_eq(http_do("GET", path, b, NULL, 0, &r1), 0);
	ck_assert_int_eq(http_do("GET", unknown, b, NULL, 0, &r2), 0);
	assert_fail(&r1, 404, "payment session not found");
	ck_assert_int_eq(r1.status, r2.status);
	ck_assert_str_eq(r1.body, r2.body);
	ck_assert_ptr_null(strstr(r1.body, "secret-order-of-a"));
	http_free(&r1);
	http_free(&r2);
	/* Also once it is paid; A of course sees it. */
	new_customer("10.00", acct);
	snprintf(f, sizeof(f), "method=wallet&action=pay&account_number=%s&pin=1234", acct);
	post_form(id, f, &r1);
	ck_assert_int_eq(r1.status, 303);
	http_free(&r1);
	ck_assert_int_eq(http_do("GET", path, b, NULL, 0, &r1), 0);
	assert_fail(&r1, 404, "payment session not found");
	http_free(&r1);
	ck_assert_int_eq(http_do("GET", path, a, NULL, 0, &r1), 0);
	ck_assert_int_eq(r1.status, 200);
	ck_assert_str_eq(http_json_str(&r1, "status"), "paid");
	http_free(&r1);
	/* The PIN key is the service's, one for all: nothing of A's in it. */
	ck_assert_int_eq(http_do("GET", PUBKEY, a, NULL, 0, &r1), 0);
	ck_assert_int_eq(http_do("GET", PUBKEY, b, NULL, 0, &r2), 0);
	ck_assert_int_eq(r1.status, 200);
	ck_assert_str_eq(http_json_str(&r1, "public_key"), http_json_str(&r2, "public_key"));
	http_free(&r1);
	http_free(&r2);
}
END_TEST

/* An Idempotency-Key of A's never replays A's reply to B. */
START_TEST(test_cross_merchant_idempotency)
{
	const char *ha[] = { JSON_CT, fx.auth_a, "Idempotency-Key: sec-shared-key", NULL };
	const char *hb[] = { JSON_CT, fx.auth_b, "Idempotency-Key: sec-shared-key", NULL };
	char *body = body_with(F_USER, "a-only", 6);
	struct http_resp ra, rb;
	char buf[16];

	ck_assert_int_eq(http_do("POST", CREATE, ha, body, -1, &ra), 0);
	ck_assert_int_eq(ra.status, 200);
	ck_assert_int_eq(http_do("POST", CREATE, hb, body, -1, &rb), 0);
	ck_assert_int_eq(rb.status, 200);
	ck_assert_ptr_null(http_header(&rb, "Idempotent-Replayed", buf, sizeof(buf)));
	ck_assert_str_ne(http_json_str(&ra, "session_id"), http_json_str(&rb, "session_id"));
	ck_assert_str_eq(db_value("SELECT merchant_id FROM payment_sessions WHERE id = $1::uuid",
	    http_json_str(&rb, "session_id")), fx.merchant_b);
	http_free(&ra);
	http_free(&rb);
	free(body);
}
END_TEST

/* The checkout page of A's session shows A's data and nothing of B's. */
START_TEST(test_cross_merchant_page)
{
	char ida[37], idb[37], path[128];
	char *ba = body_with(F_NAME, "Item-Of-Shop-A-7d1", 18);
	char *bb = body_with(F_NAME, "Item-Of-Shop-B-3c9", 18);
	struct http_resp r;

	new_session(fx.auth_a, ba, ida);
	new_session(fx.auth_b, bb, idb);
	free(ba);
	free(bb);
	snprintf(path, sizeof(path), "/checkout/%s", ida);
	ck_assert_int_eq(http_do("GET", path, NULL, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "Shop A"));
	ck_assert_ptr_nonnull(strstr(r.body, "Item-Of-Shop-A-7d1"));
	ck_assert_ptr_null(strstr(r.body, "Shop B"));
	ck_assert_ptr_null(strstr(r.body, "Item-Of-Shop-B-3c9"));
	/* Neither the customer's e-mail nor the merchant's reference is on the page. */
	ck_assert_ptr_null(strstr(r.body, "buyer@example.com"));
	ck_assert_ptr_null(strstr(r.body, "order-1"));
	http_free(&r);
	snprintf(path, sizeof(path), "/checkout/%s", idb);
	ck_assert_int_eq(http_do("GET", path, NULL, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "Shop B"));
	ck_assert_ptr_null(strstr(r.body, "Shop A"));
	ck_assert_ptr_null(strstr(r.body, "Item-Of-Shop-A-7d1"));
	http_free(&r);
	/* B's form token does not open A's session. */
	{
		const char *h[] = { FORM_CT, NULL };
		char body[256];

		snprintf(path, sizeof(path), "/checkout/%s", ida);
		snprintf(body, sizeof(body), "csrf=%s&action=cancel", csrf_of(idb));
		ck_assert_int_eq(http_do("POST", path, h, body, -1, &r), 0);
		ck_assert_int_eq(r.status, 403);
		http_free(&r);
		ck_assert_str_eq(status_of(ida), "open");
	}
}
END_TEST

/* base64(RSA-OAEP-SHA256("PIN:TIME:NONCE")) to the service's PIN key: what merchants send. */
static void
sealed_pin(const char *pin, char out[1024])
{
	const char *h[] = { fx.auth_b, NULL };
	struct http_resp r;
	EVP_PKEY *k;

	ck_assert_int_eq(http_do("GET", PUBKEY, h, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 200);
	k = seal_load(http_json_str(&r, "public_key"));
	http_free(&r);
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(seal_pin(k, pin, out, 1024), 0);
	EVP_PKEY_free(k);
}

static long long
balance_of(const char *acct)
{
	const char *v = db_value("SELECT balance FROM accounts WHERE account_number = $1", acct);

	ck_assert_ptr_nonnull(v);
	return atoll(v);
}

/* B's transfers can neither pay into A's account nor draw on it. */
START_TEST(test_cross_merchant_transfer)
{
	const char *h[] = { JSON_CT, fx.auth_b, NULL };
	char acct_a[16], acct_b[16], vendor[16], pin[1024], body[2048];
	long long a0, b0;
	struct http_resp r;

	/* A's settlement account holds money (A has none of B's PIN or settlement). */
	const char *v = db_value("SELECT coalesce(min(account_number), '') FROM accounts"
	    " WHERE merchant_id = $1::bigint AND kind = 'merchant'", fx.merchant_a);

	ck_assert_ptr_nonnull(v);
	snprintf(acct_a, sizeof(acct_a), "%s", v);
	if (acct_a[0] == '\0')
		snprintf(acct_a, sizeof(acct_a), "%s", ctl("account create --kind merchant"
		    " --merchant %s", fx.merchant_a));
	ck_assert_uint_eq(strlen(acct_a), 12);
	ck_assert_ptr_nonnull(ctl("account deposit %s 10", acct_a));
	ck_assert_int_eq(sh("printf %%s 2468 | " CTL "merchant pin %s >/dev/null",
	    fx.merchant_b), 0);
	ck_assert_int_eq(sh(CTL "merchant settlement %s on >/dev/null", fx.merchant_b), 0);
	snprintf(acct_b, sizeof(acct_b), "%s", ctl("account create --kind merchant --merchant %s",
	    fx.merchant_b));
	ck_assert_ptr_nonnull(ctl("account deposit %s 10", acct_b));
	snprintf(vendor, sizeof(vendor), "%s", ctl("account create --kind vendor"));
	a0 = balance_of(acct_a);
	b0 = balance_of(acct_b);
	sealed_pin("2468", pin);
	/* Paying A's merchant account as if it were a vendor. */
	snprintf(body, sizeof(body), "{\"pin\":\"%s\",\"vendors\":[{\"account_number\":\"%s\","
	    "\"amount\":1.00}]}", pin, acct_a);
	ck_assert_int_eq(http_do("POST", SEND, h, body, -1, &r), 0);
	assert_fail(&r, 400, "vendors[0].account_number is not a vendor account");
	http_free(&r);
	/* A real transfer of B's draws on B's account only, whatever A holds. */
	sealed_pin("2468", pin);
	snprintf(body, sizeof(body), "{\"pin\":\"%s\",\"vendors\":[{\"account_number\":\"%s\","
	    "\"amount\":1.00}]}", pin, vendor);
	ck_assert_int_eq(http_do("POST", SEND, h, body, -1, &r), 0);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	http_free(&r);
	ck_assert_int_eq(balance_of(acct_a), a0);
	ck_assert_int_eq(balance_of(acct_b), b0 - 100);
	ck_assert_int_eq(balance_of(vendor), 100);
	/* More than B holds is refused although A could cover it. */
	sealed_pin("2468", pin);
	snprintf(body, sizeof(body), "{\"pin\":\"%s\",\"vendors\":[{\"account_number\":\"%s\","
	    "\"amount\":%lld.00}]}", pin, vendor, b0 / 100 + 1);
	ck_assert_int_eq(http_do("POST", SEND, h, body, -1, &r), 0);
	assert_fail(&r, 400, "exceeds the available balance");
	http_free(&r);
	ck_assert_int_eq(balance_of(acct_a), a0);
	ck_assert_int_eq(sh(CTL "ledger verify >/dev/null"), 0);
}
END_TEST

/* --- API keys: looked up by digest only. */

START_TEST(test_key_stored_as_digest)
{
	char digest[67];

	/* The row holds SHA-256 of the whole key, and no column holds its secret part. */
	ck_assert_int_eq(auth_digest(fx.key_a, strlen(fx.key_a), digest), 0);
	ck_assert_str_eq(db_value("SELECT count(*) FROM api_keys WHERE digest = $1::bytea", digest),
	    "1");
	ck_assert_str_eq(db_value("SELECT count(*) FROM api_keys WHERE digest ="
	    " sha256(convert_to($1, 'UTF8'))", fx.key_a), "1");
	ck_assert_str_eq(db_value("SELECT count(*) FROM api_keys k WHERE"
	    " strpos(row_to_json(k)::text, substr($1, 17)) > 0", fx.key_a), "0");
}
END_TEST

/*
 * What the worker sends to look a key up, as PostgreSQL saw it: one equality on the digest
 * column (plus environment and status), nothing that compares key text. So how long the
 * lookup takes depends on SHA-256 of the presented key, which an attacker cannot steer
 * towards a real key's digest. bench/key-timing measures it.
 */
START_TEST(test_key_lookup_by_digest)
{
	char auth[200], sql[4096];
	const char *h[] = { auth, NULL }, *q;
	struct http_resp r;
	int i;

	for (i = 0; i < 8; i++) {   /* enough to meet every worker of the pool at least once */
		snprintf(auth, sizeof(auth), "Authorization: API-KEY %.40s%024d", fx.key_a, i);
		ck_assert_int_eq(http_do("GET", "/api/v1/payment/sessions/00000000-0000-4000-8000-"
		    "000000000000", h, NULL, 0, &r), 0);
		ck_assert_int_eq(r.status, 401);
		http_free(&r);
	}
	q = db_value("SELECT min(query) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND"
	    " query LIKE '%FROM api_keys%'", NULL);
	ck_assert_msg(q != NULL && strcmp(q, "(null)") != 0, "no worker ran a key lookup");
	snprintf(sql, sizeof(sql), "%s", q);
	ck_assert_msg(strstr(sql, "k.digest = $1::bytea") != NULL, "%s", sql);
	ck_assert_msg(strstr(sql, "prefix") == NULL, "%s", sql);
	ck_assert_msg(strstr(sql, "LIKE") == NULL && strstr(sql, "$3") == NULL, "%s", sql);
	/* The digest column is unique: the comparison is an index probe, not a scan of text. */
	ck_assert_str_eq(db_value("SELECT count(*) FROM pg_index i JOIN pg_attribute a ON"
	    " a.attrelid = i.indrelid AND a.attnum = i.indkey[0] WHERE i.indrelid ="
	    " 'api_keys'::regclass AND i.indisunique AND i.indnatts = 1 AND a.attname = 'digest'",
	    NULL), "1");
}
END_TEST

static Suite *
security_suite(void)
{
	Suite *s = suite_create("security");
	TCase *t = tcase_create("security");

	tcase_set_timeout(t, 60);
	tcase_add_loop_test(t, test_verbatim, 0, NELEM(verbatim));
	tcase_add_loop_test(t, test_nul_refused, 0, NELEM(nuls));
	tcase_add_test(t, test_raw_nul_refused);
	tcase_add_loop_test(t, test_open_redirect_refused, 0, 2 * NELEM(bad_urls));
	tcase_add_loop_test(t, test_redirect_host_refused, 0, 2 * NELEM(bad_hosts));
	tcase_add_test(t, test_redirect_host_accepted);
	tcase_add_test(t, test_markup_escaped);
	tcase_add_test(t, test_form_cannot_redirect);
	tcase_add_test(t, test_cross_merchant_read);
	tcase_add_test(t, test_cross_merchant_idempotency);
	tcase_add_test(t, test_cross_merchant_page);
	tcase_add_test(t, test_cross_merchant_transfer);
	tcase_add_test(t, test_key_stored_as_digest);
	tcase_add_test(t, test_key_lookup_by_digest);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	fixture_init();
	rc = run_suite(security_suite());
	curl_global_cleanup();
	return rc;
}
