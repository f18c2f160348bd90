/* Unit tests for valid.c: UTF-8 counting, e-mail and URL rules, and table-driven objects. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "json.h"
#include "money.h"
#include "valid.h"
#include "runner.h"

START_TEST(test_utf8_chars)
{
	static const struct {
		const char *s;
		size_t len;   /* 0: strlen */
		size_t chars;
	} cases[] = {
		{ "",                     0, 0 },
		{ "abc",                  0, 3 },
		{ "\xc3\xa9",             0, 1 },   /* é: 2 bytes */
		{ "\xe2\x82\xac",         0, 1 },   /* €: 3 bytes */
		{ "\xf0\x9f\x98\x80",     0, 1 },   /* 😀: 4 bytes */
		{ "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z", 0, 5 },
		{ "a\0b",                 3, 3 },   /* a NUL is a character */
		{ "abc",                  2, 2 },   /* only len bytes */
	};
	size_t i, len;

	for (i = 0; i < NELEM(cases); i++) {
		len = cases[i].len ? cases[i].len : strlen(cases[i].s);
		ck_assert_msg(valid_utf8_chars(cases[i].s, len) == cases[i].chars,
		    "case %zu: %zu chars, want %zu", i, valid_utf8_chars(cases[i].s, len),
		    cases[i].chars);
	}
}
END_TEST

struct str_case {
	const char *s;
	bool ok;
};

/* One row of a str_case table through fn, named fname in a failure. */
static void
check_str_case(bool (*fn)(const char *), const char *fname, const struct str_case *c)
{
	ck_assert_msg(fn(c->s) == c->ok, "%s(\"%s\") should be %s", fname, c->s,
	    c->ok ? "true" : "false");
}

static const struct str_case email_cases[] = {
	{ "a@b.co", true },
	{ "first.last+tag@example.com", true },
	{ "", false },
	{ "a", false },
	{ "a@b", false },
	{ "@b.co", false },
	{ "a@.co", false },
	{ "a@b.", false },
	{ "a b@c.co", false },
	{ "a@@b.co", false },
	{ "a@b@c.co", false },
	{ "a@b..co", false },
	{ "a\t@b.co", false },
	{ "a@b.co\n", false },
	{ "a@b.c\x7f", false },
};

START_TEST(test_email_table)
{
	check_str_case(valid_email, "valid_email", &email_cases[_i]);
}
END_TEST

/* The 254-byte limit: local part of 64 bytes, the domain makes up the rest. */
START_TEST(test_email_length)
{
	char addr[300], local[70];
	size_t total;

	memset(local, 'l', 64);
	local[64] = '\0';
	for (total = 250; total <= 256; total++) {
		size_t dlen = total - 65 - 4;  /* "@" and ".com" */

		snprintf(addr, sizeof(addr), "%s@%.*s.com", local, (int)dlen,
		    "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
		    "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
		    "dddddddddddddddddddddddddddddddddddddddddddddddddddd");
		ck_assert_uint_eq(strlen(addr), total);
		ck_assert_msg(valid_email(addr) == (total <= 254), "%zu-byte address", total);
	}
	/* A local part of 65 bytes is too long even in a short address. */
	ck_assert(valid_email("lllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll@b.co") == false);
	ck_assert(valid_email("llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll@b.co") == true);
}
END_TEST

static const struct str_case url_cases[] = {
	{ "https://shop.example/ok?x=1", true },
	{ "http://127.0.0.1:8080/p", true },
	{ "HTTPS://shop.example", true },
	{ "https://shop.example#frag", true },
	{ "javascript:alert(1)", false },
	{ "//evil.example", false },
	{ "ftp://x.y", false },
	{ "https://", false },
	{ "https:///path", false },
	{ "https://?x=1", false },
	{ "https://user@evil.example", false },
	{ "https://user:pw@evil.example/p", false },
	{ "https://a b.c", false },
	{ "https://x.y\\@z", false },
	{ "https://x.y\\z", false },
	{ "https://x.y/\r\nSet-Cookie:a", false },
	{ "https://:443/p", false },
	{ "https://.example", false },
	{ "", false },
};

START_TEST(test_url_table)
{
	check_str_case(valid_http_url, "valid_http_url", &url_cases[_i]);
}
END_TEST

START_TEST(test_url_length)
{
	char url[2100];
	size_t n;

	for (n = 2047; n <= 2049; n++) {
		memset(url, 'p', n);
		memcpy(url, "https://x.y/", 12);
		url[n] = '\0';
		ck_assert_msg(valid_http_url(url) == (n <= 2048), "%zu-byte URL", n);
	}
}
END_TEST

/* Hosts a browser keeps as written, and the ones it would not (valid_http_url takes all). */
static const struct str_case host_cases[] = {
	{ "https://shop.example/ok?x=1", true },
	{ "HTTPS://Shop-1.Example.COM", true },
	{ "http://localhost:18999/", true },
	{ "http://127.0.0.1:8080/p", true },
	{ "http://10.0.0.255", true },
	{ "https://[::1]/p", true },
	{ "https://[2001:db8::1]:8443/p", true },
	{ "https://[::ffff:192.0.2.1]/", true },
	{ "https://xn--bcher-kva.example/", true },
	{ "https://a.b#f", true },
	{ "https://a.b?q=%2E", true },           /* percent-encoding after the host is fine */
	{ "https://shop.example:65535/", true },
	/* percent-encoded hosts */
	{ "http://localhost%2E:18999/", false },
	{ "http://%6c%6f%63%61%6c%68%6f%73%74/", false },
	{ "http://shop%2Eexample/", false },
	{ "http://shop.example%/", false },
	{ "https://[fe80::1%25eth0]/", false },
	/* non-ASCII: full-width letters, a Cyrillic 'a', any byte >= 0x80 */
	{ "http://\xef\xbd\x85\xef\xbd\x98\xef\xbd\x81\xef\xbd\x8d\xef\xbd\x90\xef\xbd\x8c"
	  "\xef\xbd\x85.com/", false },
	{ "https://p\xd0\xb0ypal.com/", false },
	{ "https://b\xc3\xbc" "cher.example/", false },
	{ "https://shop.example\x80/", false },
	{ "https://shop\xef\xbc\x8e" "example/", false },  /* full-width full stop */
	/* other characters, empty labels */
	{ "https://shop_1.example/", false },
	{ "https://shop..example/", false },
	{ "https://shop.example./", false },
	{ "https://shop.example!/", false },
	{ "https://shop.example,evil.example/", false },
	{ "https://*.example/", false },
	/* numbers a browser reads as IPv4, written another way */
	{ "http://2130706433/", false },
	{ "http://0x7f.1/", false },
	{ "http://127.1/", false },
	{ "http://127.0.0.01/", false },
	{ "http://256.0.0.1/", false },
	{ "http://shop.0x10/", false },
	/* IPv6 not bracketed or not an address; ports */
	{ "https://::1/", false },
	{ "https://[::1/", false },
	{ "https://[]/", false },
	{ "https://[::g]/", false },
	{ "https://[::1]x/", false },
	{ "https://shop.example:/", false },
	{ "https://shop.example:0/", false },
	{ "https://shop.example:65536/", false },
	{ "https://shop.example:123456/", false },
	{ "https://shop.example:8o/", false },
	{ "javascript:alert(1)", false },
};

START_TEST(test_host_table)
{
	check_str_case(valid_url_host, "valid_url_host", &host_cases[_i]);
}
END_TEST

/* A name of 253 bytes in labels of 63 is a host; one byte more, or a label of 64, is not. */
START_TEST(test_host_length)
{
	char url[400];
	size_t i;

	strcpy(url, "https://");
	for (i = 0; i < 4; i++) {
		memset(url + 8 + i * 64, 'a' + (char)i, 63);
		url[8 + i * 64 + 63] = '.';
	}
	url[8 + 253] = '\0';                     /* 3 x 64 + 61: 253 bytes */
	ck_assert(valid_url_host(url));
	strcpy(url + 8 + 253, "d/");
	ck_assert(!valid_url_host(url));
	memset(url + 8, 'a', 64);
	strcpy(url + 8 + 64, ".example/");
	ck_assert(!valid_url_host(url));
	strcpy(url + 8 + 63, ".example/");
	ck_assert(valid_url_host(url));
}
END_TEST

/* A small rule table of our own, in the shape session.c uses. */
struct thing {
	const char *name;
	const char *email;
	bool email_given;
	int64_t price;
	struct json_object *tags;
};

static const struct valid_field thing_fields[] = {
	{ "name", VALID_STRING, true, true, 50, NULL, NULL, offsetof(struct thing, name),
	  VALID_NO_PRESENT },
	{ "email", VALID_STRING, false, false, 0, valid_email, "must be a valid e-mail address",
	  offsetof(struct thing, email), offsetof(struct thing, email_given) },
	{ "price", VALID_MONEY, true, false, 0, NULL, NULL, offsetof(struct thing, price),
	  VALID_NO_PRESENT },
	{ "tags", VALID_ARRAY, false, false, 0, NULL, NULL, offsetof(struct thing, tags),
	  VALID_NO_PRESENT },
};

#define THING_MAX 100000  /* 1000.00 */

/* Parses json, runs valid_object over it; returns its result with the message in msg. */
static bool
check_thing(const char *json, const char *prefix, struct thing *t, char *msg, size_t msglen)
{
	char perr[256] = "";
	struct json_object *obj = json_parse_strict(json, strlen(json), perr, sizeof(perr));
	bool ok;

	ck_assert_msg(obj != NULL, "test input %s does not parse: %s", json, perr);
	memset(t, 0, sizeof(*t));
	msg[0] = '\0';
	ok = valid_object(obj, thing_fields, NELEM(thing_fields), prefix, THING_MAX, t, msg,
	    msglen);
	json_object_put(obj);  /* t's pointers are not used after this */
	return ok;
}

static const struct {
	const char *json;
	const char *prefix;
	const char *msg;   /* NULL: accepted */
} object_cases[] = {
	{ "{\"name\":\"x\",\"price\":12.5}", "", NULL },
	{ "{\"name\":\"x\",\"price\":1,\"email\":null,\"tags\":null}", "", NULL },
	{ "{\"name\":\"x\",\"price\":1,\"email\":\"a@b.co\",\"tags\":[1]}", "", NULL },
	{ "{\"price\":1}", "", "name is required" },
	{ "{\"name\":null,\"price\":1}", "", "name is required" },
	{ "{\"name\":\"x\"}", "", "price is required" },
	{ "{\"name\":\"x\",\"price\":null}", "", "price is required" },
	{ "{\"name\":5,\"price\":1}", "", "name must be a string" },
	{ "{\"name\":[\"x\"],\"price\":1}", "", "name must be a string" },
	{ "{\"name\":\"x\",\"price\":\"12.50\"}", "", "price must be a number" },
	{ "{\"name\":\"x\",\"price\":true}", "", "price must be a number" },
	{ "{\"name\":\"x\",\"price\":1,\"tags\":{}}", "", "tags must be an array" },
	{ "{\"name\":\"x\",\"price\":1,\"tags\":\"a\"}", "", "tags must be an array" },
	{ "{\"name\":\"x\",\"price\":1,\"y\":1}", "", "y is not a known field" },
	{ "{\"y\":null}", "", "y is not a known field" },
	{ "{\"name\":\"\",\"price\":1}", "", "name must not be empty" },
	{ "{\"name\":\"a\\u0000b\",\"price\":1}", "", "name must not contain NUL characters" },
	{ "{\"name\":\"x\",\"price\":1,\"email\":\"nope\"}", "",
	  "email must be a valid e-mail address" },
	{ "{\"name\":\"x\",\"price\":1.234}", "", "price must have at most two decimal places" },
	{ "{\"name\":\"x\",\"price\":0}", "", "price must be greater than 0" },
	{ "{\"name\":\"x\",\"price\":0.00}", "", "price must be greater than 0" },
	{ "{\"name\":\"x\",\"price\":-1}", "", "price must not be negative" },
	{ "{\"name\":\"x\",\"price\":1e3}", "", "price must be a plain decimal number such as 12.50" },
	{ "{\"name\":\"x\",\"price\":1000.01}", "", "price is above the maximum amount" },
	{ "{\"name\":\"x\",\"price\":99999999999999999999}", "", "price is above the maximum amount" },
	{ "{\"name\":\"x\",\"price\":1000.00}", "", NULL },
	{ "{\"name\":\"x\"}", "items[2].", "items[2].price is required" },
	{ "{\"name\":\"x\",\"price\":\"1\"}", "items[2].", "items[2].price must be a number" },
	{ "{\"name\":\"x\",\"price\":1.001}", "items[2].",
	  "items[2].price must have at most two decimal places" },
	{ "{\"name\":\"x\",\"price\":1,\"z\":1}", "items[2].", "items[2].z is not a known field" },
};

START_TEST(test_object_table)
{
	char msg[256];
	struct thing t;
	bool ok = check_thing(object_cases[_i].json, object_cases[_i].prefix, &t, msg,
	    sizeof(msg));

	if (object_cases[_i].msg == NULL)
		ck_assert_msg(ok, "%s rejected: %s", object_cases[_i].json, msg);
	else {
		ck_assert_msg(!ok, "%s accepted", object_cases[_i].json);
		ck_assert_str_eq(msg, object_cases[_i].msg);
	}
}
END_TEST

/* What an accepted object leaves in the caller's struct. */
START_TEST(test_object_values)
{
	static const char json[] =
	    "{\"name\":\"caf\\u00e9\",\"email\":\"a@b.co\",\"price\":12.5,\"tags\":[1,2]}";
	struct json_object *obj;
	struct thing t;
	char msg[256] = "", perr[256] = "";

	obj = json_parse_strict(json, strlen(json), perr, sizeof(perr));
	ck_assert_ptr_nonnull(obj);
	memset(&t, 0, sizeof(t));
	ck_assert(valid_object(obj, thing_fields, NELEM(thing_fields), "", THING_MAX, &t, msg,
	    sizeof(msg)));
	ck_assert_str_eq(t.name, "caf\xc3\xa9");
	ck_assert_str_eq(t.email, "a@b.co");
	ck_assert(t.email_given);
	ck_assert_int_eq(t.price, 1250);
	ck_assert_ptr_nonnull(t.tags);
	ck_assert_uint_eq(json_object_array_length(t.tags), 2);
	json_object_put(obj);

	/* An absent optional field leaves its present flag alone; null counts as absent. */
	ck_assert(check_thing("{\"name\":\"x\",\"price\":1,\"email\":null}", "", &t, msg,
	    sizeof(msg)));
	ck_assert(!t.email_given);
	ck_assert_ptr_null(t.email);
	ck_assert_int_eq(t.price, 100);
}
END_TEST

/* max_chars counts characters, not bytes: 1-, 2- and 4-byte characters at 50 and 51. */
START_TEST(test_object_max_chars)
{
	static const char *const unit[] = { "a", "\xc3\xa9", "\xf0\x9f\x98\x80" };
	char json[512], name[256], msg[256];
	struct thing t;
	size_t u, count, i;

	for (u = 0; u < NELEM(unit); u++)
		for (count = 49; count <= 51; count++) {
			name[0] = '\0';
			for (i = 0; i < count; i++)
				strcat(name, unit[u]);
			snprintf(json, sizeof(json), "{\"name\":\"%s\",\"price\":1}", name);
			if (count <= 50)
				ck_assert_msg(check_thing(json, "", &t, msg, sizeof(msg)),
				    "%zu x \"%s\" rejected: %s", count, unit[u], msg);
			else {
				ck_assert_msg(!check_thing(json, "", &t, msg, sizeof(msg)),
				    "%zu x \"%s\" accepted", count, unit[u]);
				ck_assert_str_eq(msg, "name must be at most 50 characters");
			}
		}
}
END_TEST

/* A double without source text (NaN, Infinity) never becomes an amount. */
START_TEST(test_object_nonfinite)
{
	static const double bad[] = { NAN, INFINITY, -INFINITY };
	struct json_object *obj;
	struct thing t;
	char msg[256];
	size_t i;

	for (i = 0; i < NELEM(bad); i++) {
		obj = json_object_new_object();
		json_object_object_add(obj, "name", json_object_new_string("x"));
		json_object_object_add(obj, "price", json_object_new_double(bad[i]));
		msg[0] = '\0';
		ck_assert(!valid_object(obj, thing_fields, NELEM(thing_fields), "", THING_MAX, &t,
		    msg, sizeof(msg)));
		ck_assert_str_eq(msg, "price must be a plain decimal number such as 12.50");
		json_object_put(obj);
	}
}
END_TEST

static Suite *
valid_suite(void)
{
	Suite *s = suite_create("valid");
	TCase *tc = tcase_create("strings");

	tcase_add_test(tc, test_utf8_chars);
	tcase_add_loop_test(tc, test_email_table, 0, (int)NELEM(email_cases));
	tcase_add_test(tc, test_email_length);
	tcase_add_loop_test(tc, test_url_table, 0, (int)NELEM(url_cases));
	tcase_add_test(tc, test_url_length);
	tcase_add_loop_test(tc, test_host_table, 0, (int)NELEM(host_cases));
	tcase_add_test(tc, test_host_length);
	suite_add_tcase(s, tc);
	tc = tcase_create("object");
	tcase_add_loop_test(tc, test_object_table, 0, (int)NELEM(object_cases));
	tcase_add_test(tc, test_object_values);
	tcase_add_test(tc, test_object_max_chars);
	tcase_add_test(tc, test_object_nonfinite);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(valid_suite());
}
