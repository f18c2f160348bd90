#ifndef MP_TEST_FIXTURE_H
#define MP_TEST_FIXTURE_H

#include <check.h>

#include "../unit/runner.h"

/* What the integration tests set up once, before any case runs (see fixture_init). */
struct fixture {
	char key_a[160];        /* active key of merchant A */
	char key_b[160];        /* active key of merchant B */
	char key_revoked[160];  /* revoked key of merchant A */
	char key_live[160];     /* production key of merchant A: wrong environment here */
	char merchant_a[32];
	char merchant_b[32];
	char auth_a[200];       /* "Authorization: API-KEY <key_a>" */
	char auth_b[200];
};

extern struct fixture fx;

/* Creates merchants and keys with marketpayctl; aborts the run when that fails. */
void fixture_init(void);

/*
 * A new production (mp_live_) API key of merchant, stored in this sandbox database, into
 * key[129]: a key of the wrong environment. 0, or -1.
 */
int fixture_live_key(const char *merchant, char key[129]);

/*
 * Runs sql (no parameters) logged in as the database role user, on the stack's socket.
 * Returns its SQLSTATE in state[6]: "00000" when it ran, the refusal's otherwise, "LOGIN"
 * when the role could not log in (so a failed login is never taken for a refusal).
 */
const char *db_as(const char *user, const char *sql, char state[6]);

/* Runs marketpayctl with the stack's config and the given arguments; returns its first
 * output line in a static buffer (NULL on failure). */
const char *ctl(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The single value of a query against the stack's database (static buffer), or NULL. */
const char *db_value(const char *sql, const char *param);

/* The same with n parameters (NULL = SQL NULL). */
const char *db_valuev(const char *sql, int n, const char *const *params);

/* Row counts of the tables a rejected request must not touch, as one comparable string. */
const char *db_footprint(void);

/* Runs a shell command; returns its exit status. */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* True when s (not NULL) matches the extended regular expression pattern. */
int matches(const char *s, const char *pattern);

#endif
