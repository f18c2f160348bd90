#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

PGresult *
ctl_exec(struct ctl *c, const char *what, const char *sql, int n, const char *const *params)
{
	PGresult *r;
	enum err e;

	if ((r = db_exec(c->db, sql, n, params, &e)) == NULL)
		ctl_fail_db(c, what);
	return r;
}

int
ctl_fail_db(struct ctl *c, const char *what)
{
	fprintf(stderr, "marketpayctl: %s: %s", what, db_error(c->db));
	return 1;
}

int
ctl_exec_print(struct ctl *c, const char *what, const char *sql, int n,
    const char *const *params, const char *missing)
{
	PGresult *r = ctl_exec(c, what, sql, n, params);
	int rc = 1;

	if (r == NULL)
		return 1;
	if (PQntuples(r) == 1) {
		printf("%s\n", PQgetvalue(r, 0, DB_FIRST_COLUMN));
		rc = 0;
	} else
		ctl_fail("%s", missing);
	PQclear(r);
	return rc;
}

int
ctl_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("marketpayctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int
ctl_exec_rows(struct ctl *c, const char *what, const char *sql, int n,
    const char *const *params)
{
	PGresult *r = ctl_exec(c, what, sql, n, params);
	int i, j;

	if (r == NULL)
		return 1;
	for (i = 0; i < PQntuples(r); i++)
		for (j = 0; j < PQnfields(r); j++)
			printf("%s%c", PQgetvalue(r, i, j), j + 1 < PQnfields(r) ? '\t' : '\n');
	PQclear(r);
	return 0;
}

int
ctl_is_id(const char *s)
{
	char *end = NULL;
	long long v;

	if (s == NULL || s[0] < '1' || s[0] > '9')
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0' && v > 0;
}

int
ctl_check_environment(struct ctl *c)
{
	return db_environment_check(c->db, config_env_name(&c->cfg)) == 0 ? 0 : 1;
}
