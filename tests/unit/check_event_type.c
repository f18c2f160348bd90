/*
 * The webhook event types (src/event_type.c): the lists marketpayctl merchant webhook
 * --events takes, turned into the PostgreSQL array the subscription column stores, and
 * every malformed list refused with its rule before any SQL.
 */
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "event_type.h"
#include "runner.h"

static const struct {
	const char *list;
	const char *array;      /* "" = every type */
} good[] = {
	{ "all", "" },
	{ "payment.succeeded", "{payment.succeeded}" },
	{ "session.expired,payment.failed", "{session.expired,payment.failed}" },
	{ "transfer.reversed,transfer.succeeded,refund.succeeded,session.expired,"
	  "session.canceled,payment.failed,payment.succeeded",
	  "{transfer.reversed,transfer.succeeded,refund.succeeded,session.expired,"
	  "session.canceled,payment.failed,payment.succeeded}" },
};

static const struct {
	const char *list;
	const char *rule;       /* the start of the message */
} bad[] = {
	{ "", "an empty event type in the list" },
	{ ",payment.failed", "an empty event type in the list" },
	{ "payment.failed,", "an empty event type in the list" },
	{ "payment.failed,,session.expired", "an empty event type in the list" },
	{ "payment.failed, session.expired", "unknown event type  session.expired; the types are" },
	{ "payment.refunded", "unknown event type payment.refunded; the types are" },
	{ "Payment.Failed", "unknown event type Payment.Failed; the types are" },
	{ "all,payment.failed", "unknown event type all; the types are" },
	{ "payment.failed,all", "unknown event type all; the types are" },
	{ "payment.failed,payment.failed", "event type payment.failed is named twice" },
	{ "payment.failed';DROP TABLE merchants;--", "unknown event type payment.failed';DROP" },
	{ "{payment.failed}", "unknown event type {payment.failed}" },
};

START_TEST(test_good)
{
	char out[EVENT_TYPES_ARRAY_MAX], err[512] = "";

	ck_assert_msg(event_types_parse(good[_i].list, out, err, sizeof(err)) == 0, "%s: %s",
	    good[_i].list, err);
	ck_assert_str_eq(out, good[_i].array);
}
END_TEST

START_TEST(test_bad)
{
	char out[EVENT_TYPES_ARRAY_MAX], err[512] = "";

	ck_assert_msg(event_types_parse(bad[_i].list, out, err, sizeof(err)) == -1, "accepted: %s",
	    bad[_i].list);
	ck_assert_msg(strncmp(err, bad[_i].rule, strlen(bad[_i].rule)) == 0, "%s: %s",
	    bad[_i].list, err);
}
END_TEST

/* The refusal names every type, in the table's order, as a sentence. */
START_TEST(test_unknown_names_all)
{
	char out[EVENT_TYPES_ARRAY_MAX], err[512];

	ck_assert_int_eq(event_types_parse("x", out, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "unknown event type x; the types are payment.succeeded, "
	    "payment.failed, session.canceled, session.expired, refund.succeeded, "
	    "transfer.succeeded and transfer.reversed");
	/* A short buffer is cut, never overrun. */
	ck_assert_int_eq(event_types_parse("x", out, err, 16), -1);
	ck_assert_int_eq(strlen(err), 15);
}
END_TEST

/* Every type, each once, fits the array buffer with room to spare. */
START_TEST(test_all_fit)
{
	size_t i, n = 2;

	for (i = 0; i < event_ntypes; i++)
		n += strlen(event_types[i]) + 1;
	ck_assert_uint_lt(n, EVENT_TYPES_ARRAY_MAX);
	ck_assert_uint_eq(event_ntypes, 7);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("event_type", "lists", 0, &t);

	tcase_add_loop_test(t, test_good, 0, NELEM(good));
	tcase_add_loop_test(t, test_bad, 0, NELEM(bad));
	tcase_add_test(t, test_unknown_names_all);
	tcase_add_test(t, test_all_fit);
	return run_suite(s);
}
