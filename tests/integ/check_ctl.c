/*
 * marketpayctl's operator commands against the real stack (tests/integration.sh): db status
 * (applied and pending migrations, its exit status for deploy scripts); merchant list, show,
 * disable and enable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "fixture.h"
#include "outbox.h"

static int
ctl_is_number(const char *s)
{
	return s != NULL && s[0] != '\0' && strspn(s, "0123456789") == strlen(s);
}

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

/*
 * merchant list: one line per merchant, a name with a tab on one line; merchant show: the
 * fields, the key counts, the endpoint; disable and enable set the status and nothing else;
 * an unknown or malformed id fails and changes nothing.
 */
START_TEST(test_merchant_list_show)
{
	char m[32], out[1200], line[512], before[512], got[1024];
	FILE *fp;
	const char *row = "SELECT concat_ws('|', name, currency, status, webhook_url, created_at)"
	    " FROM merchants WHERE id = $1::bigint";

	snprintf(m, sizeof(m), "%s", ctl("merchant create --name \"$(printf 'Ctl\\tlist')\""
	    " --currency USD --webhook-url https://list.example/h"));
	ck_assert(ctl_is_number(m));
	ck_assert_ptr_nonnull(ctl("key create %s", m));
	ck_assert_ptr_nonnull(ctl("key create %s", m));
	ck_assert_ptr_nonnull(ctl("key revoke \"$(\"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" key list"
	    " %s | head -n 1 | cut -f 2)\"", m));
	snprintf(out, sizeof(out), "%s/merchants.out", dir);
	ck_assert_int_eq(sh(CTL "merchant list >'%s'", out), 0);
	snprintf(line, sizeof(line), "%s\tCtl list\tUSD\tactive\thttps://list.example/h\t", m);
	ck_assert_msg(file_has(out, line, 0), "merchant list has no line \"%s\"", line);
	ck_assert_int_eq(sh("test \"$(wc -l <'%s')\" = %s", out,
	    db_value("SELECT count(*) FROM merchants", NULL)), 0);
	ck_assert_int_eq(sh("awk -F '\\t' 'NF != 6 { exit 1 }' '%s'", out), 0);

	snprintf(out, sizeof(out), "%s/merchant.out", dir);
	ck_assert_int_eq(sh(CTL "merchant show %s >'%s'", m, out), 0);
	snprintf(line, sizeof(line), "id\t%s\nname\tCtl list\ncurrency\tUSD\nstatus\tactive\n"
	    "webhook_url\thttps://list.example/h\nwebhook_endpoint\tclosed\nsettlement\toff\n"
	    "keys_active\t1\nkeys_total\t2\ncreated_at\t", m);
	ck_assert_ptr_nonnull(fp = fopen(out, "r"));
	got[fread(got, 1, sizeof(got) - 1, fp)] = '\0';
	fclose(fp);
	ck_assert_msg(strncmp(got, line, strlen(line)) == 0, "merchant show printed:\n%s", got);
	ck_assert_ptr_null(ctl("merchant show 999999999 2>/dev/null"));
	ck_assert_ptr_null(ctl("merchant show x 2>/dev/null"));

	snprintf(before, sizeof(before), "%s", db_value(row, m));
	ck_assert_ptr_null(ctl("merchant disable 999999999 2>/dev/null"));
	ck_assert_ptr_null(ctl("merchant disable 2>/dev/null"));
	ck_assert_str_eq(ctl("merchant disable %s", m), m);
	ck_assert_str_eq(db_value("SELECT status FROM merchants WHERE id = $1::bigint", m),
	    "disabled");
	ck_assert_int_eq(sh(CTL "merchant show %s | grep -qx 'status\tdisabled'", m), 0);
	ck_assert_str_eq(ctl("merchant enable %s", m), m);
	ck_assert_str_eq(db_value(row, m), before);
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
	tcase_add_test(t, test_merchant_list_show);
	return run_suite(s);
}
