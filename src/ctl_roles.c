/*
 * marketpayctl db roles: gives login roles the least-privilege group roles of
 * sql/006_roles.sql (marketpay_app, marketpay_webhookd, marketpay_readonly), creating a login
 * role that does not exist yet, and re-grants the read-only role every table (a migration
 * that adds a table would otherwise leave DBAs without it). The group roles are the cluster's,
 * shared by every environment's database, so the database itself is what keeps environments
 * apart: CONNECT to the database run against is revoked from PUBLIC and granted to each login
 * role named, never to a group. Without arguments it lists who holds each group role.
 */
#include <stdio.h>
#include <string.h>

#include "ctl.h"

static const struct {
	const char *option;
	const char *group;
} groups[] = {
	{ "--app", "marketpay_app" },
	{ "--webhookd", "marketpay_webhookd" },
	{ "--readonly", "marketpay_readonly" },
};

#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

/* A role name as PostgreSQL would take it unquoted: no quoting games in operator input. */
static int
role_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 63 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n &&
	    !(s[0] >= '0' && s[0] <= '9') && strncmp(s, "pg_", 3) != 0 &&
	    strncmp(s, "marketpay_", 10) != 0;
}

/* Runs one statement built by the server with format(%I), so names are always quoted. */
static int
run_formatted(struct ctl *c, const char *what, const char *format_sql, int n,
    const char *const *params)
{
	PGresult *r = ctl_exec(c, what, format_sql, n, params);
	PGresult *r2;
	int rc = 1;

	if (r == NULL)
		return 1;
	if (PQntuples(r) == 1 && !PQgetisnull(r, 0, DB_FIRST_COLUMN)) {
		r2 = ctl_exec(c, what, PQgetvalue(r, 0, DB_FIRST_COLUMN), 0, NULL);
		rc = r2 == NULL;
		PQclear(r2);
	} else
		rc = 0;  /* nothing to do */
	PQclear(r);
	return rc;
}

static int
grant(struct ctl *c, const char *group, const char *role)
{
	const char *p[2] = { role, group };
	PGresult *r;

	if ((r = ctl_exec(c, "group roles", "SELECT 1 FROM pg_roles WHERE rolname = $1", 1,
	    p + 1)) == NULL)
		return 1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return ctl_fail("%s does not exist: run marketpayctl db migrate first", group);
	}
	PQclear(r);
	/* The role logs in and holds nothing of its own: all it may do comes from the group. */
	if (run_formatted(c, role, "SELECT format('CREATE ROLE %I LOGIN', $1::text)"
	    " WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", 1, p) != 0)
		return 1;
	if (run_formatted(c, role, "SELECT format('GRANT %I TO %I', $2::text, $1::text)", 2,
	    p) != 0)
		return 1;
	/* This database only: another environment's database never lists the role. */
	if (run_formatted(c, role, "SELECT format('GRANT CONNECT ON DATABASE %I TO %I',"
	    " current_database(), $1::text)", 1, p) != 0)
		return 1;
	printf("%s %s\n", role, group);
	return 0;
}

/* Columns of list's query. */
enum { ROLES_GROUP, ROLES_MEMBERS };

static int
list(struct ctl *c)
{
	PGresult *r = ctl_exec(c, "roles",
	    "SELECT g.rolname, coalesce(string_agg(m.rolname, ',' ORDER BY m.rolname), '-')"
	    " FROM pg_roles g LEFT JOIN pg_auth_members a ON a.roleid = g.oid"
	    " LEFT JOIN pg_roles m ON m.oid = a.member"
	    " WHERE g.rolname IN ('marketpay_app', 'marketpay_webhookd', 'marketpay_readonly')"
	    " GROUP BY g.rolname ORDER BY g.rolname", 0, NULL);
	int i;

	if (r == NULL)
		return 1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return ctl_fail("no marketpay roles: run marketpayctl db migrate first");
	}
	for (i = 0; i < PQntuples(r); i++)
		printf("%s %s\n", PQgetvalue(r, i, ROLES_GROUP), PQgetvalue(r, i, ROLES_MEMBERS));
	PQclear(r);
	return 0;
}

int
ctl_db_roles(struct ctl *c, int argc, char **argv)
{
	const char *role[NGROUPS] = { NULL };
	PGresult *r;
	size_t g;
	int i, rc = 0, any = 0;

	for (i = 0; i < argc; i++) {
		for (g = 0; g < NGROUPS && strcmp(argv[i], groups[g].option) != 0; g++)
			;
		if (g == NGROUPS || i + 1 >= argc)
			return ctl_fail("usage: marketpayctl db roles [--app ROLE] [--webhookd ROLE]"
			    " [--readonly ROLE]");
		if (!role_name_ok(argv[++i]))
			return ctl_fail("%s: a role name is 1 to 63 lower-case letters, digits and"
			    " underscores, not starting with a digit, pg_ or marketpay_", argv[i]);
		role[g] = argv[i];
		any = 1;
	}
	if (!any)
		return list(c);
	if (db_begin(c->db) != ERR_OK)
		return ctl_fail_db(c, "roles");
	rc = run_formatted(c, "CONNECT", "SELECT format('REVOKE CONNECT ON DATABASE %I FROM PUBLIC',"
	    " current_database())", 0, NULL);
	for (g = 0; g < NGROUPS && rc == 0; g++)
		if (role[g] != NULL)
			rc = grant(c, groups[g].group, role[g]);
	if (rc == 0 && (r = ctl_exec(c, "marketpay_readonly",
	    "GRANT SELECT ON ALL TABLES IN SCHEMA public TO marketpay_readonly", 0, NULL)) != NULL)
		PQclear(r);
	else
		rc = 1;
	if (rc == 0 && db_commit(c->db) != ERR_OK)
		rc = ctl_fail_db(c, "roles");
	if (rc != 0)
		db_rollback(c->db);
	return rc;
}
