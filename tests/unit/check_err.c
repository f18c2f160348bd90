/* The one error currency: every enum err has a status and a message; every status the
 * service sends has its own reason phrase on the Status line. */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "err.h"
#include "runner.h"

/* Every status a worker or nginx may send, with its phrase. */
static const struct {
	int status;
	const char *reason;
} phrases[] = {
	{ 200, "OK" }, { 303, "See Other" }, { 400, "Bad Request" }, { 401, "Unauthorized" },
	{ 403, "Forbidden" }, { 404, "Not Found" }, { 405, "Method Not Allowed" },
	{ 409, "Conflict" }, { 410, "Gone" }, { 411, "Length Required" },
	{ 413, "Payload Too Large" }, { 415, "Unsupported Media Type" },
	{ 422, "Unprocessable Entity" }, { 429, "Too Many Requests" },
	{ 500, "Internal Server Error" }, { 503, "Service Unavailable" },
};

START_TEST(test_reason)
{
	ck_assert_str_eq(err_reason(phrases[_i].status), phrases[_i].reason);
}
END_TEST

START_TEST(test_every_err_has_status_and_message)
{
	int e;

	for (e = 0; e < ERR__MAX; e++) {
		ck_assert_int_ge(err_http_status((enum err)e), 200);
		ck_assert_str_ne(err_reason(err_http_status((enum err)e)), "Error");
		ck_assert(err_message((enum err)e)[0] != '\0');
	}
	ck_assert_int_eq(err_http_status(ERR_UNAVAILABLE), 503);
	ck_assert_int_eq(err_http_status(ERR_DB), 500);
	ck_assert_int_eq(err_http_status(ERR_CONFLICT), 409);
	ck_assert_str_eq(err_message(ERR_UNAVAILABLE),
	    "service temporarily unavailable; retry later");
	ck_assert_int_eq(err_http_status((enum err)ERR__MAX), 500);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("err", "table", 0, &t);

	tcase_add_loop_test(t, test_reason, 0, sizeof(phrases) / sizeof(phrases[0]));
	tcase_add_test(t, test_every_err_has_status_and_message);
	return run_suite(s);
}
