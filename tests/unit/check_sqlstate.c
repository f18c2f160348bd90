/*
 * src/sqlstate.h is the one list of the service's SQLSTATEs: every MPnnn that a migration in
 * sql/ raises or catches is in it, and every code in it is used by some migration.
 */
#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sqlstate.h"
#include "runner.h"

static const char *const registry[] = {
	SQLSTATE_ACCOUNT_UNUSABLE, SQLSTATE_CURRENCY, SQLSTATE_FUNDS, SQLSTATE_MALFORMED_POSTING,
	SQLSTATE_NO_ACCOUNT, SQLSTATE_OWN_ACCOUNT, SQLSTATE_NOT_VENDOR, SQLSTATE_NOT_ACTIVE,
	SQLSTATE_VENDOR_CURRENCY, SQLSTATE_NO_ENVIRONMENT, SQLSTATE_NOT_SANDBOX,
	SQLSTATE_NOT_FOUND, SQLSTATE_NOT_PAID, SQLSTATE_REFUND_LEFT, SQLSTATE_MERCHANT_FUNDS,
	SQLSTATE_WALLET_UNUSABLE, SQLSTATE_NO_TRANSFER, SQLSTATE_REVERSAL_LEFT,
	SQLSTATE_VENDOR_FUNDS, SQLSTATE_NOT_OPEN, SQLSTATE_NO_CURSOR, SQLSTATE_NO_ENDPOINT,
	SQLSTATE_RATE_LIMITED, SQLSTATE_IN_FLIGHT, SQLSTATE_NO_SECRET, SQLSTATE_STATUS_REFUSED,
};
#define NREG (sizeof(registry) / sizeof(registry[0]))

/* Every MPnnn in the migrations, concatenated with ',' around each, into out. */
static void
codes_in_sql(char *out, size_t n)
{
	const char *top = getenv("top_srcdir");
	char dir[4096], path[8192], line[4096], code[6];
	struct dirent *de;
	regmatch_t m;
	regex_t re;
	const char *p;
	DIR *d;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/sql", top != NULL && top[0] != '\0' ? top : ".");
	ck_assert_msg((d = opendir(dir)) != NULL, "%s: %s", dir, strerror(errno));
	ck_assert_int_eq(regcomp(&re, "MP[0-9]{3}", REG_EXTENDED), 0);
	snprintf(out, n, ",");
	while ((de = readdir(d)) != NULL) {
		if (strstr(de->d_name, ".sql") == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ck_assert_ptr_nonnull(f = fopen(path, "r"));
		while (fgets(line, sizeof(line), f) != NULL)
			for (p = line; regexec(&re, p, 1, &m, 0) == 0; p += m.rm_eo) {
				snprintf(code, sizeof(code), "%.5s", p + m.rm_so);
				if (strstr(out, code) == NULL)
					snprintf(out + strlen(out), n - strlen(out), "%s,", code);
			}
		fclose(f);
	}
	closedir(d);
	regfree(&re);
}

START_TEST(test_registry_matches_sql)
{
	char sql[1024], want[16];
	size_t i, listed = 0;

	codes_in_sql(sql, sizeof(sql));
	for (i = 0; i < NREG; i++) {
		snprintf(want, sizeof(want), ",%s,", registry[i]);
		ck_assert_msg(strstr(sql, want) != NULL, "%s is raised by no migration", registry[i]);
	}
	for (i = 1; sql[i] != '\0'; i += 6) {
		size_t j;

		for (j = 0; j < NREG && strncmp(sql + i, registry[j], 5) != 0; j++)
			;
		ck_assert_msg(j < NREG, "%.5s of sql/ is not in src/sqlstate.h", sql + i);
		listed++;
	}
	ck_assert_uint_eq(listed, NREG);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("sqlstate", "registry", 0, &t);

	tcase_add_test(t, test_registry_matches_sql);
	return run_suite(s);
}
