/* Unit tests for money.c: text -> int64 minor units and back, with no double anywhere. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "money.h"
#include "runner.h"

#define SENTINEL ((int64_t)-777)  /* *out must keep this after any rejection */

struct parse_case {
	const char *text;
	size_t len;            /* 0: strlen(text); else the bytes to parse (NUL bytes inside) */
	int64_t max;
	enum money_rc rc;
	int64_t value;         /* when rc == MONEY_OK */
};

#define MAX MONEY_MAX_DEFAULT

static const struct parse_case parse_cases[] = {
	/* accepted */
	{ "12",                    0, MAX, MONEY_OK, 1200 },
	{ "12.5",                  0, MAX, MONEY_OK, 1250 },
	{ "12.50",                 0, MAX, MONEY_OK, 1250 },
	{ "0.01",                  0, MAX, MONEY_OK, 1 },
	{ "0.5",                   0, MAX, MONEY_OK, 50 },
	{ "100.05",                0, MAX, MONEY_OK, 10005 },
	{ "999999999.99",          0, MAX, MONEY_OK, 99999999999LL },
	{ "36",                    0, 3600, MONEY_OK, 3600 },     /* max itself */
	{ "12",                    1, MAX, MONEY_OK, 100 },       /* only len bytes are read */
	{ "999999999999999.99",    0, INT64_MAX, MONEY_OK, 99999999999999999LL },
	/* not plain decimal notation */
	{ "",                      0, MAX, MONEY_SYNTAX, 0 },
	{ "1.",                    0, MAX, MONEY_SYNTAX, 0 },
	{ ".5",                    0, MAX, MONEY_SYNTAX, 0 },
	{ "+1",                    0, MAX, MONEY_SYNTAX, 0 },
	{ "1e3",                   0, MAX, MONEY_SYNTAX, 0 },
	{ "1E3",                   0, MAX, MONEY_SYNTAX, 0 },
	{ "1.5e2",                 0, MAX, MONEY_SYNTAX, 0 },
	{ "007",                   0, MAX, MONEY_SYNTAX, 0 },
	{ "00.5",                  0, MAX, MONEY_SYNTAX, 0 },
	{ "NaN",                   0, MAX, MONEY_SYNTAX, 0 },
	{ "Infinity",              0, MAX, MONEY_SYNTAX, 0 },
	{ "-Infinity",             0, MAX, MONEY_SYNTAX, 0 },
	{ " 1",                    0, MAX, MONEY_SYNTAX, 0 },
	{ "1 ",                    0, MAX, MONEY_SYNTAX, 0 },
	{ "1\n",                   0, MAX, MONEY_SYNTAX, 0 },
	{ "1,5",                   0, MAX, MONEY_SYNTAX, 0 },
	{ "1.2.3",                 0, MAX, MONEY_SYNTAX, 0 },
	{ "1..2",                  0, MAX, MONEY_SYNTAX, 0 },
	{ "-",                     0, MAX, MONEY_SYNTAX, 0 },
	{ "--1",                   0, MAX, MONEY_SYNTAX, 0 },
	{ ".",                     0, MAX, MONEY_SYNTAX, 0 },
	{ "0x10",                  0, MAX, MONEY_SYNTAX, 0 },
	{ "\xd9\xa1",              0, MAX, MONEY_SYNTAX, 0 },      /* ARABIC-INDIC DIGIT ONE */
	{ "1\0",                   2, MAX, MONEY_SYNTAX, 0 },      /* NUL after the digits */
	{ "1\0" "00",              4, MAX, MONEY_SYNTAX, 0 },
	{ "1.5\0",                 4, MAX, MONEY_SYNTAX, 0 },
	/* too many decimals */
	{ "0.001",                 0, MAX, MONEY_DECIMALS, 0 },
	{ "1.500",                 0, MAX, MONEY_DECIMALS, 0 },
	{ "12.345",                0, MAX, MONEY_DECIMALS, 0 },
	/* below zero */
	{ "-1",                    0, MAX, MONEY_NEGATIVE, 0 },
	{ "-0.01",                 0, MAX, MONEY_NEGATIVE, 0 },
	{ "-9223372036854775808",  0, MAX, MONEY_NEGATIVE, 0 },
	/* zero */
	{ "0",                     0, MAX, MONEY_ZERO, 0 },
	{ "0.00",                  0, MAX, MONEY_ZERO, 0 },
	{ "0.0",                   0, MAX, MONEY_ZERO, 0 },
	{ "-0",                    0, MAX, MONEY_ZERO, 0 },
	{ "-0.00",                 0, MAX, MONEY_ZERO, 0 },
	/* above the maximum or beyond int64 */
	{ "1000000000",            0, MAX, MONEY_RANGE, 0 },
	{ "1000000000.00",         0, MAX, MONEY_RANGE, 0 },
	{ "36.01",                 0, 3600, MONEY_RANGE, 0 },     /* one minor unit above max */
	{ "9223372036854775807",   0, MAX, MONEY_RANGE, 0 },
	{ "9223372036854775807",   0, INT64_MAX, MONEY_RANGE, 0 },
	{ "99999999999999999999",  0, INT64_MAX, MONEY_RANGE, 0 },
	{ "92233720368547758.07",  0, INT64_MAX, MONEY_RANGE, 0 },
	{ "1000000000000000",      0, INT64_MAX, MONEY_RANGE, 0 },  /* 16 whole digits: cap */
	{ "-1000000000000000",     0, INT64_MAX, MONEY_NEGATIVE, 0 },
};

START_TEST(test_parse_table)
{
	const struct parse_case *c = &parse_cases[_i];
	size_t len = c->len != 0 ? c->len : strlen(c->text);
	int64_t out = SENTINEL;
	enum money_rc rc = money_parse(c->text, len, c->max, &out);

	ck_assert_msg(rc == c->rc, "money_parse(\"%s\", %zu, %lld): rc %d, want %d", c->text,
	    len, (long long)c->max, (int)rc, (int)c->rc);
	if (c->rc == MONEY_OK)
		ck_assert_msg(out == c->value, "money_parse(\"%s\"): %lld, want %lld", c->text,
		    (long long)out, (long long)c->value);
	else
		ck_assert_msg(out == SENTINEL, "money_parse(\"%s\") failed but wrote %lld",
		    c->text, (long long)out);
}
END_TEST

START_TEST(test_rule_words)
{
	static const struct {
		enum money_rc rc;
		const char *words;
	} rules[] = {
		{ MONEY_OK,       "is valid" },
		{ MONEY_SYNTAX,   "must be a plain decimal number such as 12.50" },
		{ MONEY_DECIMALS, "must have at most two decimal places" },
		{ MONEY_NEGATIVE, "must not be negative" },
		{ MONEY_ZERO,     "must be greater than 0" },
		{ MONEY_RANGE,    "is above the maximum amount" },
		{ MONEY__MAX,     "is invalid" },
		{ (enum money_rc)-1, "is invalid" },
	};
	size_t i;

	for (i = 0; i < NELEM(rules); i++)
		ck_assert_str_eq(money_rule(rules[i].rc), rules[i].words);
}
END_TEST

START_TEST(test_format_table)
{
	static const struct {
		int64_t minor;
		const char *text;
	} cases[] = {
		{ 0,         "0.00" },
		{ 5,         "0.05" },
		{ 10,        "0.10" },
		{ 99,        "0.99" },
		{ 100,       "1.00" },
		{ 1250,      "12.50" },
		{ 3600,      "36.00" },
		{ -5,        "-0.05" },
		{ -1250,     "-12.50" },
		{ 99999999999LL, "999999999.99" },
		{ INT64_MAX, "92233720368547758.07" },
		{ INT64_MIN, "-92233720368547758.08" },
	};
	char buf[MONEY_BUFLEN];
	size_t i;

	for (i = 0; i < NELEM(cases); i++) {
		memset(buf, 'X', sizeof(buf));
		ck_assert_ptr_eq(money_format(cases[i].minor, buf), buf);
		ck_assert_msg(strcmp(buf, cases[i].text) == 0, "money_format(%lld) = \"%s\", want \"%s\"",
		    (long long)cases[i].minor, buf, cases[i].text);
	}
}
END_TEST

static void
round_trip(int64_t v)
{
	char buf[MONEY_BUFLEN];
	int64_t back = SENTINEL;
	enum money_rc rc;

	money_format(v, buf);
	rc = money_parse(buf, strlen(buf), INT64_MAX, &back);
	ck_assert_msg(rc == MONEY_OK && back == v, "%lld -> \"%s\" -> rc %d, %lld", (long long)v,
	    buf, (int)rc, (long long)back);
}

/* Whatever money_format writes for a positive amount, money_parse reads back unchanged. */
START_TEST(test_round_trip)
{
	int64_t v;

	for (v = 1; v <= 100000; v++)
		round_trip(v);
	/* A geometric walk up to the largest amount money_parse accepts (15 whole digits). */
	for (v = 1; v < 99999999999999999LL / 3; v = v * 3 + 7)
		round_trip(v);
	round_trip(MONEY_MAX_DEFAULT);
	round_trip(99999999999999999LL);
}
END_TEST

static Suite *
money_suite(void)
{
	Suite *s = suite_create("money");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_parse_table, 0, (int)NELEM(parse_cases));
	tcase_add_test(tc, test_rule_words);
	suite_add_tcase(s, tc);
	tc = tcase_create("format");
	tcase_add_test(tc, test_format_table);
	tcase_add_test(tc, test_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(money_suite());
}
