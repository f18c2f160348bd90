/* Unit tests for json.c: the strict parse recipe, number text, and amounts in JSON. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "json.h"
#include "jtext.h"
#include "money.h"
#include "runner.h"

#define BAD_JSON "request body is not valid JSON: "

struct input {
	const char *buf;
	size_t len;        /* 0: strlen(buf) */
	const char *msg;   /* rejections: the exact message, or NULL for any BAD_JSON one */
};

static size_t
input_len(const struct input *in)
{
	return in->len != 0 ? in->len : strlen(in->buf);
}

/* For accepted inputs, msg holds the compact re-serialization: the values survived. */
static const struct input accepted[] = {
	{ "{\"a\":1}", 0, "{\"a\":1}" },
	{ "{}", 0, "{}" },
	{ " {} ", 0, "{}" },
	{ "{}\n", 0, "{}" },
	{ "[]", 0, "[]" },
	{ "{\"a\":\"\xc3\xa9\xf0\x9f\x98\x80\"}", 0, "{\"a\":\"\xc3\xa9\xf0\x9f\x98\x80\"}" },
	{ "{\"a\":\"\\u00e9\\u0000\"}", 0, "{\"a\":\"\xc3\xa9\\u0000\"}" },
	{ "{\"a\":[1,-2.5,1e3,true,false,null,\"s\"]}", 0,
	  "{\"a\":[1,-2.5,1e3,true,false,null,\"s\"]}" },
	/* The same key in different objects; colons inside strings are not members. */
	{ "{\"a\":{\"a\":1},\"b\":[{\"a\":\"x:y\"},{\"a\":2}],\"c:d\":\"\\\":\"}", 0,
	  "{\"a\":{\"a\":1},\"b\":[{\"a\":\"x:y\"},{\"a\":2}],\"c:d\":\"\\\":\"}" },
};

START_TEST(test_accept_table)
{
	const struct input *in = &accepted[_i];
	char msg[256] = "";
	struct json_object *o = json_parse_strict(in->buf, input_len(in), msg, sizeof(msg));

	ck_assert_msg(o != NULL, "rejected %s: %s", in->buf, msg);
	ck_assert_str_eq(json_text(o), in->msg);
	json_object_put(o);
}
END_TEST

static const struct input rejected[] = {
	{ "", 0, "request body must be a JSON object" },
	{ "{} x", 0, NULL },
	{ "{}{}", 0, NULL },
	{ "{}]", 0, NULL },
	{ "NaN", 0, "request body must be a JSON object" },
	{ "Infinity", 0, "request body must be a JSON object" },
	{ "-Infinity", 0, "request body must be a JSON object" },
	{ "{\"a\":NaN}", 0, BAD_JSON "NaN or Infinity" },
	{ "{\"a\":nan}", 0, NULL },
	{ "{/*c*/}", 0, NULL },
	{ "{} // c", 0, NULL },
	{ "// c\n{}", 0, NULL },
	{ "{\"a\":1 /* c */}", 0, NULL },
	{ "\"\xff\"", 0, BAD_JSON "invalid UTF-8" },
	{ "{\"a\":\"\xc3\"}", 0, BAD_JSON "invalid UTF-8" },  /* truncated sequence */
	{ "{\"a\":\"\x80\"}", 0, BAD_JSON "invalid UTF-8" },  /* lone continuation */
	{ "'a'", 0, NULL },
	{ "{\"a\":'b'}", 0, NULL },
	{ "{", 0, BAD_JSON "unexpected end of input" },
	{ "{\"a\":", 0, BAD_JSON "unexpected end of input" },
	{ "{\"a\":\"b", 0, BAD_JSON "unexpected end of input" },
	{ "{\"a\":1}\0", 8, BAD_JSON "NUL byte" },
	{ "{\"a\0\":1}", 8, BAD_JSON "NUL byte" },
	{ "\0{}", 3, BAD_JSON "NUL byte" },
	{ "{\"a\":1,}", 0, NULL },
	{ "[1,]", 0, NULL },
	{ "{a:1}", 0, NULL },
	{ "{\"a\":01}", 0, NULL },
	{ "{\"a\":.5}", 0, NULL },
	{ "{\"a\":+1}", 0, NULL },
	{ "{\"a\":0x10}", 0, NULL },
	{ "{\"a\":TRUE}", 0, NULL },
	{ "{\"a\":\"\\x41\"}", 0, NULL },
};

START_TEST(test_reject_table)
{
	const struct input *in = &rejected[_i];
	char msg[256];
	struct json_object *o;

	memset(msg, 0, sizeof(msg));
	o = json_parse_strict(in->buf, input_len(in), msg, sizeof(msg));
	ck_assert_msg(o == NULL, "accepted %s as %s", in->buf, o ? json_text(o) : "");
	if (in->msg != NULL)
		ck_assert_str_eq(msg, in->msg);
	else
		ck_assert_msg(strncmp(msg, BAD_JSON, strlen(BAD_JSON)) == 0 &&
		    strlen(msg) > strlen(BAD_JSON), "%s: message \"%s\"", in->buf, msg);
}
END_TEST

/* What the parse keeps: values and, for decimals, the text the client sent. */
START_TEST(test_number_text)
{
	static const char doc[] =
	    "[12.50, 12, \"12.50\", 99999999999999999999, 1.0, -7, true, null, {}, 36.00]";
	static const struct {
		size_t idx;
		const char *text;   /* NULL: not a number */
	} want[] = {
		{ 0, "12.50" }, { 1, "12" }, { 2, NULL }, { 4, "1.0" }, { 5, "-7" },
		{ 6, NULL }, { 7, NULL }, { 8, NULL }, { 9, "36.00" },
	};
	char msg[256] = "";
	struct json_object *arr = json_parse_strict(doc, strlen(doc), msg, sizeof(msg));
	struct json_object *huge;
	const char *text;
	int64_t minor = -1;
	size_t i;

	ck_assert_msg(arr != NULL, "%s", msg);
	for (i = 0; i < NELEM(want); i++) {
		text = json_number_text(json_object_array_get_idx(arr, want[i].idx));
		if (want[i].text == NULL)
			ck_assert_msg(text == NULL, "element %zu: \"%s\", want NULL", want[i].idx, text);
		else
			ck_assert_pstr_eq(text, want[i].text);
	}
	/* Beyond int64 json-c clamps; whatever text comes back, it is not an amount. */
	huge = json_object_array_get_idx(arr, 3);
	text = json_number_text(huge);
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(money_parse(text, strlen(text), INT64_MAX, &minor), MONEY_RANGE);
	ck_assert_int_eq(minor, -1);
	json_object_put(arr);

	/* Numbers made in code have text too; a non-finite double reads as "NaN". */
	huge = json_object_new_int64(INT64_MIN);
	ck_assert_str_eq(json_number_text(huge), "-9223372036854775808");
	json_object_put(huge);
	huge = json_object_new_double(1.0 / 0.0);
	ck_assert_str_eq(json_number_text(huge), "NaN");
	json_object_put(huge);
}
END_TEST

START_TEST(test_money_out)
{
	static const struct {
		int64_t minor;
		const char *number, *string;
	} cases[] = {
		{ 3600,      "36.00",                "\"36.00\"" },
		{ 1250,      "12.50",                "\"12.50\"" },
		{ 5,         "0.05",                 "\"0.05\"" },
		{ 0,         "0.00",                 "\"0.00\"" },
		{ -5,        "-0.05",                "\"-0.05\"" },
		{ INT64_MAX, "92233720368547758.07", "\"92233720368547758.07\"" },
	};
	char buf[MONEY_BUFLEN];
	struct jtext n, s;
	size_t i;

	/* As the replies write them: the number's text, or the same text as a JSON string. */
	for (i = 0; i < NELEM(cases); i++) {
		memset(&n, 0, sizeof(n));
		memset(&s, 0, sizeof(s));
		jtext_lit(&n, money_format(cases[i].minor, buf));
		jtext_string(&s, money_format(cases[i].minor, buf));
		ck_assert(!n.failed && !s.failed);
		ck_assert_str_eq(n.s, cases[i].number);
		ck_assert_str_eq(s.s, cases[i].string);
		jtext_free(&n);
		jtext_free(&s);
	}
}
END_TEST

/* An amount we print, read back by our own parser, is the same amount. */
START_TEST(test_money_round_trip)
{
	struct json_object *o = json_object_new_object(), *back, *v = NULL;
	char msg[256] = "", body[256], buf[MONEY_BUFLEN];
	struct jtext t = { 0 };
	const char *text;
	int64_t minor = 0;

	ck_assert_int_eq(json_add(o, "nothing", NULL), -1);
	json_object_put(o);
	jtext_lit(&t, "{\"amount\":");
	jtext_lit(&t, money_format(3600, buf));
	jtext_lit(&t, ",\"price\":");
	jtext_string(&t, money_format(1250, buf));
	jtext_lit(&t, ",\"url\":");
	jtext_string(&t, "https://x.y/a");
	jtext_lit(&t, "}");
	ck_assert(!t.failed);
	snprintf(body, sizeof(body), "%s", t.s);
	jtext_free(&t);
	ck_assert_str_eq(body, "{\"amount\":36.00,\"price\":\"12.50\",\"url\":\"https://x.y/a\"}");

	back = json_parse_strict(body, strlen(body), msg, sizeof(msg));
	ck_assert_msg(back != NULL, "%s", msg);
	ck_assert(json_object_object_get_ex(back, "amount", &v));
	text = json_number_text(v);
	ck_assert_str_eq(text, "36.00");
	ck_assert_int_eq(money_parse(text, strlen(text), MONEY_MAX_DEFAULT, &minor), MONEY_OK);
	ck_assert_int_eq(minor, 3600);
	json_object_put(back);
}
END_TEST

/*
 * What json-c 0.16's JSON_TOKENER_STRICT lets through and json_parse_strict must still
 * refuse, and top-level scalars, which RFC 8259 allows but a request body may not be.
 */
static const struct input lexically_bad[] = {
	{ "\"\xc0\xaf\"", 0, NULL },                 /* overlong '/' */
	{ "{\"a\":\"\xc0\xaf\"}", 0, NULL },
	{ "{\"a\":\"\xed\xa0\x80\"}", 0, NULL },     /* UTF-16 surrogate as UTF-8 */
	{ "{\"a\":\"\xf4\x90\x80\x80\"}", 0, NULL }, /* above U+10FFFF */
	{ "{\"a\":NaN}", 0, NULL },
	{ "{\"a\":Infinity}", 0, NULL },
	{ "{\"a\":-Infinity}", 0, NULL },
	{ "{\"a\":[1,{\"b\":NaN}]}", 0, NULL },
	{ "{\"a\":1.}", 0, NULL },
	{ "{\"a\":\"\x01\"}", 0, NULL },             /* unescaped control character */
	{ "{\"a\":\"\t\"}", 0, NULL },
	{ "{'a':1}", 0, NULL },                      /* single-quoted key */
	{ "12.50", 0, NULL },
	{ "1", 0, NULL },
	{ "true", 0, NULL },
	{ "null", 0, NULL },
	{ "{\"a\":1,\"a\":2}", 0, NULL },            /* duplicate key: which one counts? */
	{ "{\"items\":[{\"id\":\"x\",\"price\":1,\"price\":900}]}", 0, NULL },
	{ "{\"a\\u0000b\":1,\"a\":2}", 0, NULL },   /* json-c cuts a key at NUL */
	{ "{\"a\":{\"b\":1},\"c\":{\"b\":1,\"d\":[{\"b\":2,\"b\":3}]}}", 0, NULL },
	{ "null ", 0, NULL },                        /* found by fuzz_session: no message */
	{ "null\n", 0, NULL },
	{ " \t", 0, NULL },                          /* all blank: read past the end */
};

START_TEST(test_lexically_bad)
{
	const struct input *in = &lexically_bad[_i];
	char msg[256] = "";
	struct json_object *o = json_parse_strict(in->buf, input_len(in), msg, sizeof(msg));

	ck_assert_msg(o == NULL, "accepted %s", in->buf);
	ck_assert_msg(msg[0] != '\0', "%s: no message", in->buf);
}
END_TEST

/* Escapes stay allowed: the scan must not mistake an escaped quote for the string's end. */
START_TEST(test_escapes_ok)
{
	static const char body[] = "{\"a\":\"x\\\"'\\\\\",\"b\":\"\\u00e9\\n\",\"c\":\"\xc3\xa9\xf0\x9f\x98\x80\"}";
	char msg[256] = "";
	struct json_object *o = json_parse_strict(body, strlen(body), msg, sizeof(msg)), *v;

	ck_assert_msg(o != NULL, "%s", msg);
	ck_assert(json_object_object_get_ex(o, "a", &v));
	ck_assert_str_eq(json_object_get_string(v), "x\"'\\");
	json_object_put(o);
}
END_TEST

static Suite *
json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("parse");
	tcase_add_loop_test(tc, test_accept_table, 0, (int)NELEM(accepted));
	tcase_add_loop_test(tc, test_reject_table, 0, (int)NELEM(rejected));
	suite_add_tcase(s, tc);
	tc = tcase_create("numbers");
	tcase_add_test(tc, test_number_text);
	tcase_add_test(tc, test_money_out);
	tcase_add_test(tc, test_money_round_trip);
	suite_add_tcase(s, tc);
	tc = tcase_create("beyond json-c");
	tcase_add_loop_test(tc, test_lexically_bad, 0, (int)NELEM(lexically_bad));
	tcase_add_test(tc, test_escapes_ok);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(json_suite());
}
