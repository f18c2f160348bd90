/*
 * marketpayctl db migrate: applies sql/NNN_*.sql in order, each once, each in one transaction.
 * marketpayctl db status: which of those files are applied (and when), which pending.
 * marketpayctl idempotency purge: deletes Idempotency-Key records past idempotency_ttl.
 * marketpayctl purge: that, and the retention of webhook events and ended unpaid sessions.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

#define MAX_MIGRATIONS 1000

static int
is_migration(const char *name)
{
	size_t n = strlen(name);

	return n > 8 && strspn(name, "0123456789") == 3 && name[3] == '_' &&
	    strcmp(name + n - 4, ".sql") == 0;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The migration files of dir, sorted, into names[MAX_MIGRATIONS] (each strdup'ed: the caller
 * frees them, also after a failure); their count into *n. 0, or 1 after saying why.
 */
static int
list_migrations(const char *dir, char **names, size_t *n)
{
	struct dirent *de;
	DIR *d;

	*n = 0;
	if ((d = opendir(dir)) == NULL)
		return ctl_fail("%s: cannot open migrations directory", dir);
	while ((de = readdir(d)) != NULL && *n < MAX_MIGRATIONS)
		if (is_migration(de->d_name) && (names[*n] = strdup(de->d_name)) != NULL)
			(*n)++;
	closedir(d);
	qsort(names, *n, sizeof(names[0]), by_name);
	return 0;
}

static char *
slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = NULL;
	long len;

	if (fp == NULL)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (len = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)len + 1)) != NULL) {
		if (fread(buf, 1, (size_t)len, fp) != (size_t)len) {
			free(buf);
			buf = NULL;
		} else
			buf[len] = '\0';
	}
	fclose(fp);
	return buf;
}

static int
apply(struct ctl *c, const char *dir, const char *name)
{
	char path[4096], *sql = NULL;
	const char *p[1] = { name };
	PGresult *r = NULL;
	int rc = 1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((sql = slurp(path)) == NULL)
		return ctl_fail("%s: cannot read", path);
	/* A migration file is ours, not user data: it runs as the text it is. */
	if (db_begin(c->db) != ERR_OK || db_script(c->db, sql) != ERR_OK) {
		ctl_fail_db(c, name);
		goto out;
	}
	if ((r = ctl_exec(c, name, "INSERT INTO schema_migrations (version) VALUES ($1)", 1,
	    p)) == NULL)
		goto out;
	if (db_commit(c->db) != ERR_OK) {
		ctl_fail_db(c, name);
		goto out;
	}
	printf("%s\n", name);
	rc = 0;
out:
	if (rc != 0)
		db_rollback(c->db);
	PQclear(r);
	free(sql);
	return rc;
}

static int
applied(struct ctl *c, const char *name, int *yes)
{
	const char *p[1] = { name };
	PGresult *r = ctl_exec(c, "schema_migrations",
	    "SELECT 1 FROM schema_migrations WHERE version = $1", 1, p);

	if (r == NULL)
		return -1;
	*yes = PQntuples(r) > 0;
	PQclear(r);
	return 0;
}

/*
 * Records this configuration's environment in a new database, and refuses a database that
 * serves the other one; sets the PIN policy, the redelivery rate and the secret rotation
 * window the workers follow from this configuration.
 */
static int
settings(struct ctl *c)
{
	char v[6][24];
	const char *p[7] = { config_env_name(&c->cfg), v[0], v[1], v[2], v[3], v[4], v[5] };
	PGresult *r;
	int rc;

	snprintf(v[0], sizeof(v[0]), "%ld", c->cfg.pin_max_attempts);
	snprintf(v[1], sizeof(v[1]), "%ld", c->cfg.pin_lock_seconds);
	snprintf(v[2], sizeof(v[2]), "%ld", c->cfg.pin_max_locks);
	snprintf(v[3], sizeof(v[3]), "%ld", c->cfg.pin_max_age);
	snprintf(v[4], sizeof(v[4]), "%ld", c->cfg.redeliveries_per_minute);
	snprintf(v[5], sizeof(v[5]), "%ld", c->cfg.webhook_secret_rotation_window);
	if ((r = ctl_exec(c, "settings", "INSERT INTO mp_settings AS s (environment,"
	    " pin_max_attempts, pin_lock_seconds, pin_max_locks, pin_max_age,"
	    " redeliveries_per_minute, webhook_secret_rotation_window)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO UPDATE SET"
	    " pin_max_attempts = EXCLUDED.pin_max_attempts,"
	    " pin_lock_seconds = EXCLUDED.pin_lock_seconds, pin_max_locks = EXCLUDED.pin_max_locks,"
	    " pin_max_age = EXCLUDED.pin_max_age,"
	    " redeliveries_per_minute = EXCLUDED.redeliveries_per_minute,"
	    " webhook_secret_rotation_window = EXCLUDED.webhook_secret_rotation_window"
	    " WHERE s.environment = EXCLUDED.environment RETURNING environment", 7, p)) == NULL)
		return 1;
	rc = PQntuples(r) == 1 ? 0 : ctl_check_environment(c);
	PQclear(r);
	return rc;
}

int
ctl_db_migrate(struct ctl *c, int argc, char **argv)
{
	const char *dir = c->cfg.sql_dir;
	char *names[MAX_MIGRATIONS];
	size_t n = 0, i;
	PGresult *r;
	int rc = 1, yes;

	(void)argv;
	if (argc != 0)
		return ctl_fail("usage: marketpayctl db migrate");
	if (list_migrations(dir, names, &n) != 0)
		goto out;
	/* Two migrators at once would race; the session lock serialises them. */
	if ((r = ctl_exec(c, "lock", "SELECT pg_advisory_lock(7200)", 0, NULL)) == NULL)
		goto out;
	PQclear(r);
	if ((r = ctl_exec(c, "schema_migrations",
	    "CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY,"
	    " applied_at timestamptz NOT NULL DEFAULT now())", 0, NULL)) == NULL)
		goto out;
	PQclear(r);
	for (i = 0; i < n; i++) {
		if (applied(c, names[i], &yes) != 0 || (!yes && apply(c, dir, names[i]) != 0))
			goto out;
	}
	rc = settings(c);
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	return rc;
}

enum status_col {
	STATUS_VERSION,     /* the file name db migrate recorded */
	STATUS_APPLIED_AT,  /* ISO 8601, UTC */
	STATUS__MAX
};

int
ctl_db_status(struct ctl *c, int argc, char **argv)
{
	char *names[MAX_MIGRATIONS];
	size_t n = 0, i;
	PGresult *r = NULL;
	int rc = 1, pending = 0, row, found;

	(void)argv;
	if (argc != 0)
		return ctl_fail("usage: marketpayctl db status");
	if (list_migrations(c->cfg.sql_dir, names, &n) != 0)
		goto out;
	if ((r = ctl_exec(c, "schema_migrations", "SELECT version, to_char(applied_at AT TIME ZONE"
	    " 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM schema_migrations", 0, NULL)) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		for (found = -1, row = 0; row < PQntuples(r) && found < 0; row++)
			if (strcmp(PQgetvalue(r, row, STATUS_VERSION), names[i]) == 0)
				found = row;
		if (found < 0) {
			printf("%s pending\n", names[i]);
			pending = 1;
		} else
			printf("%s applied %s\n", names[i], PQgetvalue(r, found, STATUS_APPLIED_AT));
	}
	/* Exit 1 with pending migrations: a deploy script's "db status || db migrate". */
	rc = pending;
out:
	PQclear(r);
	for (i = 0; i < n; i++)
		free(names[i]);
	return rc;
}

/* Deletes Idempotency-Key records past idempotency_ttl; their number into *n. 0, or 1. */
static int
purge_idempotency(struct ctl *c, long long *n)
{
	char ttl[24];
	const char *p[1] = { ttl };
	PGresult *r;

	/*
	 * Rows past idempotency_ttl no longer count for replay: they only take space. The
	 * function (sql/007_purge.sql) lets the workers' role do this and nothing more.
	 */
	snprintf(ttl, sizeof(ttl), "%ld", c->cfg.idempotency_ttl);
	if ((r = ctl_exec(c, "idempotency purge", "SELECT mp_purge_idempotency($1::int)", 1,
	    p)) == NULL)
		return 1;
	*n = strtoll(PQgetvalue(r, 0, DB_FIRST_COLUMN), NULL, 10);
	PQclear(r);
	return 0;
}

int
ctl_idempotency_purge(struct ctl *c, int argc, char **argv)
{
	long long n;

	(void)argv;
	if (argc != 0)
		return ctl_fail("usage: marketpayctl idempotency purge");
	if (purge_idempotency(c, &n) != 0)
		return 1;
	printf("%lld\n", n);
	return 0;
}

/* What marketpayctl purge deletes, in the order it prints them. */
enum purged {
	PURGED_IDEMPOTENCY,   /* idempotency_keys */
	PURGED_EVENTS,        /* webhook_events */
	PURGED_ATTEMPTS,      /* webhook_attempts */
	PURGED_REDELIVERIES,  /* webhook_redeliveries */
	PURGED_SESSIONS,      /* payment_sessions */
	PURGED_ITEMS,         /* session_items */
	PURGED__MAX
};

static const char *const purged_table[PURGED__MAX] = {
	"idempotency_keys",      /* PURGED_IDEMPOTENCY */
	"webhook_events",        /* PURGED_EVENTS */
	"webhook_attempts",      /* PURGED_ATTEMPTS */
	"webhook_redeliveries",  /* PURGED_REDELIVERIES */
	"payment_sessions",      /* PURGED_SESSIONS */
	"session_items",         /* PURGED_ITEMS */
};

/*
 * Calls the retention function sql (sql/016_retention.sql: $1 days, $2 batch; its first
 * column the batch's main rows, then the rest) until a batch comes back short, each call its
 * own transaction; adds its columns into count[first...]. 0, or 1 after saying why.
 */
static int
purge_batches(struct ctl *c, const char *sql, long days, long batch, long long *count,
    enum purged first)
{
	char d[24], b[24];
	const char *p[2] = { d, b };
	PGresult *r;
	long long main_rows;
	int j;

	snprintf(d, sizeof(d), "%ld", days);
	snprintf(b, sizeof(b), "%ld", batch);
	do {
		if ((r = ctl_exec(c, "purge", sql, 2, p)) == NULL)
			return 1;
		main_rows = strtoll(PQgetvalue(r, 0, DB_FIRST_COLUMN), NULL, 10);
		for (j = 0; j < PQnfields(r); j++)
			count[first + j] += strtoll(PQgetvalue(r, 0, j), NULL, 10);
		PQclear(r);
	} while (main_rows >= batch);
	return 0;
}

int
ctl_purge(struct ctl *c, int argc, char **argv)
{
	long long count[PURGED__MAX] = { 0 };
	long batch = 1000;
	char *end = NULL;
	int i;

	if (argc == 2 && strcmp(argv[0], "--batch") == 0)
		batch = strtol(argv[1], &end, 10);
	if ((argc != 0 && argc != 2) || (argc == 2 && (end == argv[1] || *end != '\0' ||
	    batch < 1 || batch > 10000)))
		return ctl_fail("usage: marketpayctl purge [--batch 1-10000]");
	if (purge_idempotency(c, &count[PURGED_IDEMPOTENCY]) != 0 ||
	    purge_batches(c, "SELECT * FROM mp_purge_events($1::int, $2::int)",
	    c->cfg.retention_events_days, batch, count, PURGED_EVENTS) != 0 ||
	    purge_batches(c, "SELECT * FROM mp_purge_sessions($1::int, $2::int)",
	    c->cfg.retention_sessions_days, batch, count, PURGED_SESSIONS) != 0)
		return 1;
	for (i = 0; i < PURGED__MAX; i++)
		printf("%s\t%lld\n", purged_table[i], count[i]);
	return 0;
}
