/*
 * marketpayctl's operator commands against the real stack (tests/integration.sh): db status
 * (applied and pending migrations, its exit status for deploy scripts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "fixture.h"
#include "outbox.h"

/* The stack's directory: where the cases write what they compare. */
static char dir[1024];

/*
 * db status: one line per migration file, "applied <UTC time>" for every file of the stack's
 * sql_dir (exit 0); a file db migrate has not run shows "pending" and exits 1, then applied
 * once migrated.
 */
START_TEST(test_db_status)
{
	char probe[1200], out[1200];
	const char *n;

	snprintf(out, sizeof(out), "%s/status.out", dir);
	ck_assert_int_eq(sh(CTL "db status >'%s'", out), 0);
	n = db_value("SELECT count(*) FROM schema_migrations", NULL);
	ck_assert_int_eq(sh("test \"$(grep -cE '^[0-9]{3}_[a-z0-9_]+\\.sql applied "
	    "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' '%s')\" = %s", out, n), 0);
	ck_assert_int_eq(sh("test \"$(wc -l <'%s')\" = \"$(ls \"$MP_SRCDIR\"/sql/*.sql | wc -l)\"",
	    out), 0);
	ck_assert(file_has(out, "001_foundation.sql applied ", 0));

	/* The same files and one more: it is pending, and the exit status says so. */
	snprintf(probe, sizeof(probe), "%s/status-sql", dir);
	ck_assert_int_eq(sh("rm -rf '%s' && mkdir '%s' && cp \"$MP_SRCDIR\"/sql/*.sql '%s' &&"
	    " echo 'SELECT 1;' >'%s/999_status_probe.sql'", probe, probe, probe, probe), 0);
	ck_assert_int_eq(sh(CTL "-S '%s' db status >'%s'; test $? = 1", probe, out), 0);
	ck_assert_int_eq(sh("tail -n 1 '%s' | grep -qx '999_status_probe.sql pending'", out), 0);
	ck_assert_int_eq(sh("grep -c pending '%s' | grep -qx 1", out), 0);
	ck_assert_int_eq(sh(CTL "-S '%s' db migrate >/dev/null", probe), 0);
	ck_assert_int_eq(sh(CTL "-S '%s' db status >'%s'", probe, out), 0);
	ck_assert(file_has(out, "999_status_probe.sql applied ", 0));
	ck_assert_ptr_nonnull(db_value("DELETE FROM schema_migrations WHERE version ="
	    " '999_status_probe.sql' RETURNING 1", NULL));
	/* A directory that is not there: an error, not "nothing pending". */
	ck_assert_int_eq(sh(CTL "-S '%s/none' db status >/dev/null 2>&1; test $? = 1", dir), 0);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("ctl", "marketpayctl", 120, &t);

	snprintf(dir, sizeof(dir), "%s", env("MARKETPAY_STACK_DIR"));
	env("MARKETPAYCTL");
	env("MP_SRCDIR");
	tcase_add_test(t, test_db_status);
	return run_suite(s);
}
