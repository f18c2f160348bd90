/*
 * Unit tests for jtext.c: a reply written around PostgreSQL's JSON text has the bytes that
 * parsing it with json-c and writing it out again (json_text, what the worker did before)
 * gives, and text that is not an object fails the reply instead of going out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "json.h"
#include "jtext.h"
#include "runner.h"

/* Objects as PostgreSQL's json_build_object and jsonb write them. */
static const char *const pg_objects[] = {
	"{}",
	"{\"a\" : 1}",
	"{\"session_id\" : \"01a21fce-03af-709d-ba6b-288fb1ce9958\", \"status\" : \"open\", "
	"\"amount\" : \"15.50\", \"redirect_success_url\" : null, \"items\" : [{\"id\" : "
	"\"sku-1\", \"name\" : \"Green tea\", \"price\" : \"12.50\"}, {\"id\" : \"sku-2\", "
	"\"name\" : \"Cup\", \"price\" : \"3.00\"}], \"refunds\" : []}",
	/* jsonb's spacing, nested objects, numbers, the literals */
	"{\"a\": {\"b\": [1, -2.5, 1e3, 0.10, true, false, null]}, \"c\": {}}",
	/* escapes as PostgreSQL writes them, blanks and brackets inside strings */
	"{\"n\" : \"a \\\"quoted\\\" \\\\ back\\nline\\ttab\\r\\b\\f\", \"c\" : \"\\u0001\\u001f\"}",
	"{\"s\" : \" { [ ] } : , \", \"u\" : \"\xc3\xa9\xd8\xa7\xf0\x9f\x98\x80 / \"}",
	" \n{\"x\" : \"\"}\n ",
};

static char *
via_json_c(const char *text)
{
	char msg[128];
	struct json_object *o = json_parse_strict(text, strlen(text), msg, sizeof(msg));
	char *s;

	ck_assert_msg(o != NULL, "%s: %s", text, msg);
	s = strdup(json_text(o));
	json_object_put(o);
	return s;
}

START_TEST(test_object_as_json_c_writes_it)
{
	const char *text = pg_objects[_i];
	struct jtext t = { 0 };
	char *want = via_json_c(text);

	jtext_pg(&t, text, strlen(text), false);
	ck_assert(!t.failed);
	ck_assert_str_eq(t.s, want);
	ck_assert_uint_eq(t.len, strlen(want));
	free(want);
	jtext_free(&t);
}
END_TEST

/* Members joined to a reply's: the same bytes as json-c adding them to the reply object. */
START_TEST(test_members_join_a_reply)
{
	const char *text = pg_objects[_i];
	struct json_object *reply = json_object_new_object(), *o;
	struct jtext t = { 0 };
	char msg[128];

	/* The success head as json-c writes it. */
	ck_assert_int_eq(json_add(reply, "status_code", json_object_new_int(10)), 0);
	ck_assert_int_eq(json_add(reply, "success", json_object_new_boolean(1)), 0);
	ck_assert_int_eq(json_add(reply, "message", json_object_new_string("Found.")), 0);
	o = json_parse_strict(text, strlen(text), msg, sizeof(msg));
	ck_assert(o != NULL && reply != NULL);
	json_object_object_foreach(o, key, val)
		ck_assert_int_eq(json_object_object_add(reply, key, json_object_get(val)), 0);
	ck_assert_int_eq(json_add(reply, "url", json_object_new_string("https://x/checkout/1")),
	    0);
	jtext_success(&t, "Found.");
	jtext_pg(&t, text, strlen(text), true);
	jtext_lit(&t, ",\"url\":");
	jtext_string(&t, "https://x/checkout/1");
	jtext_lit(&t, "}");
	ck_assert(!t.failed);
	ck_assert_str_eq(t.s, json_text(reply));
	json_object_put(o);
	json_object_put(reply);
	jtext_free(&t);
}
END_TEST

/* Every byte json-c escapes, and the ones it leaves: the same string either way. */
START_TEST(test_string_escaped_as_json_c_does)
{
	char s[2] = { (char)_i, '\0' }, *want;
	struct json_object *o = json_object_new_string(s);
	struct jtext t = { 0 };

	want = strdup(json_text(o));
	jtext_string(&t, s);
	ck_assert_str_eq(t.s, want);
	free(want);
	json_object_put(o);
	jtext_free(&t);
}
END_TEST

START_TEST(test_success_head)
{
	struct jtext t = { 0 };

	jtext_success(&t, "Say \"hi\"");
	jtext_lit(&t, "}");
	ck_assert_str_eq(t.s, "{\"status_code\":10,\"success\":true,\"message\":\"Say \\\"hi\\\"\"}");
	jtext_free(&t);
	jtext_success(&t, NULL);
	jtext_lit(&t, "}");
	ck_assert_str_eq(t.s, "{\"status_code\":10,\"success\":true}");
	jtext_free(&t);
}
END_TEST

START_TEST(test_empty_object_adds_no_members)
{
	struct jtext t = { 0 };

	jtext_lit(&t, "{\"a\":1");
	jtext_pg(&t, " {  } ", 6, true);
	jtext_lit(&t, "}");
	ck_assert(!t.failed);
	ck_assert_str_eq(t.s, "{\"a\":1}");
	jtext_free(&t);
}
END_TEST

/* Not one object: the reply fails, and nothing of the text is left in it. */
static const char *const not_objects[] = {
	"", "   ", "[1, 2]", "\"s\"", "null", "{\"a\" : \"open", "{\"a\" : 1", "{\"a\" : 1} x",
	"{\"a\" : 1}{}", "{\"a\" : \"\\", "12", "{|]",
};

START_TEST(test_nul_fails)
{
	static const char text[] = "{\"a\" : \"x\0y\"}", escaped[] = "{\"a\" : \"x\\\0\"}";
	struct jtext t = { 0 };

	jtext_pg(&t, text, sizeof(text) - 1, false);
	ck_assert(t.failed);
	jtext_free(&t);
	jtext_pg(&t, escaped, sizeof(escaped) - 1, false);
	ck_assert(t.failed);
	jtext_free(&t);
}
END_TEST

START_TEST(test_not_an_object_fails)
{
	const char *text = not_objects[_i];
	struct jtext t = { 0 };

	jtext_lit(&t, "{\"head\":true");
	jtext_pg(&t, text, strlen(text), _i % 2 == 0);
	ck_assert_msg(t.failed, "accepted: %s", text);
	ck_assert_str_eq(t.s, "{\"head\":true");
	/* Nothing more is written to a failed reply. */
	jtext_lit(&t, "}");
	ck_assert_str_eq(t.s, "{\"head\":true");
	jtext_free(&t);
}
END_TEST

START_TEST(test_member_found_at_its_depth)
{
	static const char text[] = "{\"refunds\" : [{\"session_id\" : \"nested\"}], "
	    "\"session_idx\" : \"longer\", \"k\" : \"session_id\", \"session_id\" : \"top\", "
	    "\"esc\" : \"\\\"session_id\\\":\\\"inside\"}";
	static const char escaped[] = "{\"session_id\" : \"a\\\"b\"}";
	struct jtext t = { 0 };
	const char *v;
	size_t n, from;

	jtext_lit(&t, "[");
	from = t.len;
	jtext_pg(&t, text, strlen(text), false);
	ck_assert((v = jtext_member(&t, from, 1, "session_id", &n)) != NULL);
	ck_assert_int_eq((int)n, 3);
	ck_assert(strncmp(v, "top", n) == 0);
	/* At depth 3 (in the array, in its object), the refund's. */
	ck_assert((v = jtext_member(&t, from, 3, "session_id", &n)) != NULL);
	ck_assert(strncmp(v, "nested", n) == 0 && n == 6);
	ck_assert(jtext_member(&t, from, 1, "missing", &n) == NULL);
	jtext_free(&t);
	/* jtext_pg's members: at depth 0. */
	jtext_pg(&t, text, strlen(text), true);
	ck_assert((v = jtext_member(&t, 0, 0, "session_id", &n)) != NULL);
	ck_assert(strncmp(v, "top", n) == 0 && n == 3);
	jtext_free(&t);
	/* A value with an escape is not given out. */
	jtext_pg(&t, escaped, strlen(escaped), false);
	ck_assert(!t.failed);
	ck_assert(jtext_member(&t, 0, 1, "session_id", &n) == NULL);
	jtext_free(&t);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("jtext", "core", 0, &t);

	tcase_add_loop_test(t, test_object_as_json_c_writes_it, 0, (int)NELEM(pg_objects));
	tcase_add_loop_test(t, test_members_join_a_reply, 0, (int)NELEM(pg_objects));
	tcase_add_loop_test(t, test_string_escaped_as_json_c_does, 1, 256);
	tcase_add_test(t, test_success_head);
	tcase_add_test(t, test_empty_object_adds_no_members);
	tcase_add_loop_test(t, test_not_an_object_fails, 0, (int)NELEM(not_objects));
	tcase_add_test(t, test_member_found_at_its_depth);
	tcase_add_test(t, test_nul_fails);
	return run_suite(s);
}
