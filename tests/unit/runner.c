/* The one runner of the Check programs (see runner.h). */
#include <stdlib.h>

#include <check.h>

#include "runner.h"

int
run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

Suite *
suite_one(const char *name, const char *tcase, int timeout, TCase **t)
{
	Suite *s = suite_create(name);

	*t = tcase_create(tcase);
	if (timeout > 0)
		tcase_set_timeout(*t, timeout);
	suite_add_tcase(s, *t);
	return s;
}
