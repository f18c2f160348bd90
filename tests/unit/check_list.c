/* Unit tests of the list convention's query parameters (src/list.c): no database. */
#include <string.h>

#include <check.h>

#include "csv.h"
#include "list.h"
#include "pgarray.h"
#include "runner.h"

static bool
id_ok(const char *s)
{
	return strncmp(s, "re_", 3) == 0;
}

static bool
color_ok(const char *s)
{
	return strcmp(s, "red") == 0 || strcmp(s, "blue") == 0;
}

static const struct list_spec spec = { "things", id_ok, "thing",
	{ { "color", color_ok, "must be red or blue" }, { "name", NULL, NULL } }, NULL };

struct parse_case {
	const char *query;
	const char *message;   /* NULL: accepted */
};

static const struct parse_case cases[] = {
	{ "", NULL },
	{ "limit=1", NULL },
	{ "limit=100", NULL },
	{ "&&limit=5&", NULL },
	{ "limit=0", "limit must be a whole number from 1 to 100" },
	{ "limit=101", "limit must be a whole number from 1 to 100" },
	{ "limit=-1", "limit must be a whole number from 1 to 100" },
	{ "limit=+5", "limit must be a whole number from 1 to 100" },
	{ "limit=5x", "limit must be a whole number from 1 to 100" },
	{ "limit=", "limit must be a whole number from 1 to 100" },
	{ "limit=99999999999999999999", "limit must be a whole number from 1 to 100" },
	{ "limit", "limit must be text of at most 256 bytes, percent-encoded correctly" },
	{ "limit=%zz", "limit must be text of at most 256 bytes, percent-encoded correctly" },
	{ "name=%00", "name must be text of at most 256 bytes, percent-encoded correctly" },
	{ "name=%ff", "name must be text of at most 256 bytes, percent-encoded correctly" },
	{ "limit=5&limit=5", "limit is given more than once" },
	{ "color=red&color=blue", "color is given more than once" },
	{ "page=2", "page is not a parameter of this list" },
	{ "Limit=2", "Limit is not a parameter of this list" },
	{ "l%69mit=2", "l%69mit is not a parameter of this list" },
	{ "%00=2", "%00 is not a parameter of this list" },
	{ "=2", "(a parameter) is not a parameter of this list" },
	{ "\xc3\xa9=2", "(a parameter) is not a parameter of this list" },
	{ "starting_after=re_1", NULL },
	{ "ending_before=re_1", NULL },
	{ "starting_after=re_1&ending_before=re_2",
	  "starting_after and ending_before cannot be given together" },
	{ "starting_after=tr_1", "starting_after: no such thing" },
	{ "ending_before=", "ending_before: no such thing" },
	{ "color=red", NULL },
	{ "color=green", "color must be red or blue" },
	{ "name=anything%20at+all", NULL },
	{ "created_gte=2026-11-23T10:00:00%2B00:00", NULL },
	{ "created_gte=2026-11-23T10:00:00+00:00", NULL },    /* the + read as a space */
	{ "created_lt=2026-11-23T10:00:00Z", NULL },
	{ "created_lt=2026-11-23T10:00:00.123456-05:30", NULL },
	{ "created_gte=2026-11-23", "created_gte must be an ISO 8601 time with an offset, "
	  "such as 2026-11-23T10:00:00+00:00" },
	{ "created_lt=2026-11-23T10:00:00", "created_lt must be an ISO 8601 time with an "
	  "offset, such as 2026-11-23T10:00:00+00:00" },
	{ "created_lt=yesterday", "created_lt must be an ISO 8601 time with an offset, such as "
	  "2026-11-23T10:00:00+00:00" },
};

START_TEST(test_parse)
{
	const struct parse_case *c = &cases[_i];
	struct list_query q;
	char msg[256] = "";
	bool ok = list_parse(&spec, c->query, &q, msg, sizeof(msg));

	if (c->message == NULL)
		ck_assert_msg(ok, "%s: refused: %s", c->query, msg);
	else {
		ck_assert_msg(!ok, "%s: accepted", c->query);
		ck_assert_str_eq(msg, c->message);
	}
}
END_TEST

START_TEST(test_values)
{
	struct list_query q;
	char msg[256];

	ck_assert(list_parse(&spec, "name=a+b%26c&limit=7&created_lt=2026-01-01T00:00:00Z"
	    "&starting_after=re_x&color=blue", &q, msg, sizeof(msg)));
	ck_assert_str_eq(q.limit, "7");
	ck_assert_str_eq(q.filter[1], "a b&c");
	ck_assert_str_eq(q.filter[0], "blue");
	ck_assert_str_eq(q.lt, "2026-01-01T00:00:00Z");
	ck_assert_str_eq(q.after, "re_x");
	ck_assert_ptr_null(q.before);
	ck_assert_ptr_null(q.gte);
	ck_assert(list_parse(&spec, "created_gte=2026-01-01T00:00:00+01:00&created_lt="
	    "2026-01-01T00:00:00%2B01:00", &q, msg, sizeof(msg)));
	ck_assert_str_eq(q.gte, "2026-01-01T00:00:00+01:00");
	ck_assert_str_eq(q.lt, "2026-01-01T00:00:00+01:00");
	ck_assert(list_parse(&spec, "", &q, msg, sizeof(msg)));
	ck_assert_str_eq(q.limit, "20");
	ck_assert_ptr_null(q.filter[0]);
}
END_TEST

static const char *const good_times[] = {
	"2026-11-23T10:00:00+00:00", "2024-02-29T23:59:59Z", "2000-02-29T00:00:00-12:00",
	"2026-11-23T10:00:00.5+14:00", "2026-11-23T10:00:00 01:00",
};

static const char *const bad_times[] = {
	"", "2026-11-23T10:00:00", "2026-11-23 10:00:00+00:00", "2026-13-01T00:00:00Z",
	"2026-00-01T00:00:00Z", "2026-04-31T00:00:00Z", "2023-02-29T00:00:00Z",
	"1900-02-29T00:00:00Z", "2026-11-23T24:00:00Z", "2026-11-23T10:60:00Z",
	"2026-11-23T10:00:60Z", "2026-11-23T10:00:00+0000", "2026-11-23T10:00:00+24:00",
	"2026-11-23T10:00:00+00:60", "2026-11-23T10:00:00.Z", "2026-11-23T10:00:00.1234567Z",
	"0000-01-01T00:00:00Z", "2026-11-23T10:00:00z", "2026-11-23T10:00:00+00:00x",
	"+2026-11-23T10:00:00Z", "2026-1-23T10:00:00Z",
};

START_TEST(test_time_good)
{
	ck_assert_msg(list_time_ok(good_times[_i]), "%s refused", good_times[_i]);
}
END_TEST

START_TEST(test_time_bad)
{
	ck_assert_msg(!list_time_ok(bad_times[_i]), "%s accepted", bad_times[_i]);
}
END_TEST

static int
append(void *arg, const char *s, size_t n)
{
	char *out = arg;

	if (strlen(out) + n >= 256)
		return -1;
	strncat(out, s, n);
	return 0;
}

static int
refuse(void *arg, const char *s, size_t n)
{
	(void)arg;
	(void)s;
	(void)n;
	return -1;
}

static const struct { const char *in, *out; } csv_cases[] = {
	{ "", "," }, { "plain", "plain," }, { "-12.50", "-12.50," },
	{ "a,b", "\"a,b\"," }, { "say \"hi\"", "\"say \"\"hi\"\"\"," },
	{ "\"", "\"\"\"\"," }, { "two\nlines", "\"two\nlines\"," },
	{ "cr\r", "\"cr\r\"," }, { "caf\xc3\xa9", "caf\xc3\xa9," },
};

START_TEST(test_csv_field)
{
	char out[256] = "";

	ck_assert_int_eq(csv_field(append, out, csv_cases[_i].in, strlen(csv_cases[_i].in),
	    false), 0);
	ck_assert_str_eq(out, csv_cases[_i].out);
}
END_TEST

START_TEST(test_csv_row_end)
{
	char out[256] = "";

	ck_assert_int_eq(csv_field(append, out, "a", 1, false), 0);
	ck_assert_int_eq(csv_field(append, out, "b\"c", 3, true), 0);
	ck_assert_int_eq(csv_field(append, out, "d", 1, true), 0);
	ck_assert_str_eq(out, "a,\"b\"\"c\"\r\nd\r\n");
	/* Only n bytes count; a failing sink fails the field. */
	out[0] = '\0';
	ck_assert_int_eq(csv_field(append, out, "x,y", 1, true), 0);
	ck_assert_str_eq(out, "x\r\n");
	ck_assert_int_eq(csv_field(refuse, NULL, "x", 1, true), -1);
	ck_assert_int_eq(csv_field(refuse, NULL, "\"", 1, true), -1);
}
END_TEST

/* Array literals: quoted text, escapes, integers and NULL elements side by side. */
START_TEST(test_pgarray)
{
	struct pgarray a, b;

	pgarray_init(&a);
	ck_assert_str_eq(pgarray_end(&a), "{}");
	pgarray_free(&a);
	pgarray_init(&a);
	pgarray_add(&a, "a\"b\\c");
	pgarray_add(&a, NULL);
	pgarray_add(&a, "NULL");
	ck_assert_str_eq(pgarray_end(&a), "{\"a\\\"b\\\\c\",NULL,\"NULL\"}");
	pgarray_free(&a);
	pgarray_init(&b);
	pgarray_add_int(&b, -12);
	pgarray_add(&b, NULL);
	pgarray_add_int(&b, 204);
	ck_assert_str_eq(pgarray_end(&b), "{-12,NULL,204}");
	pgarray_free(&b);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("list", "parse", 0, &t);

	tcase_add_loop_test(t, test_parse, 0, (int)NELEM(cases));
	tcase_add_test(t, test_values);
	tcase_add_loop_test(t, test_time_good, 0, (int)NELEM(good_times));
	tcase_add_loop_test(t, test_time_bad, 0, (int)NELEM(bad_times));
	tcase_add_loop_test(t, test_csv_field, 0, (int)NELEM(csv_cases));
	tcase_add_test(t, test_csv_row_end);
	tcase_add_test(t, test_pgarray);
	return run_suite(s);
}
