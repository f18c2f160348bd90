/* What the integration suites share (see fixture.h). */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <libpq-fe.h>

#include "auth.h"
#include "fixture.h"

struct fixture fx;

int
sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/*
 * API keys and webhook secrets the tests were handed are noted in the stack's directory, so
 * tests/integration.sh can check afterwards that none of them reached a log.
 */
void
note_secret(const char *line)
{
	const char *dir = getenv("MARKETPAY_STACK_DIR");
	char path[1024];
	FILE *f;

	if (dir == NULL || (strncmp(line, "mp_", 3) != 0 && strncmp(line, "whsec_", 6) != 0))
		return;
	snprintf(path, sizeof(path), "%s/secrets-used.txt", dir);
	if ((f = fopen(path, "a")) != NULL) {
		fprintf(f, "%s\n", line);
		fclose(f);
	}
}

const char *
ctl(const char *fmt, ...)
{
	static char line[512];
	char args[1024], cmd[2048];
	va_list ap;
	FILE *p;
	int ok;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "\"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" %s", args);
	if ((p = popen(cmd, "r")) == NULL)
		return NULL;
	ok = fgets(line, sizeof(line), p) != NULL;
	if (pclose(p) != 0 || !ok)
		return NULL;
	line[strcspn(line, "\n")] = '\0';
	note_secret(line);
	return line;
}

const char *
db_value(const char *sql, const char *param)
{
	const char *p[1] = { param };

	return db_valuev(sql, param ? 1 : 0, p);
}

const char *
db_value_on(PGconn *c, const char *sql, int n, const char *const *params)
{
	static char out[4096];
	PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
	const char *ret = NULL;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
		snprintf(out, sizeof(out), "%s",
		    PQgetisnull(r, 0, 0) ? "(null)" : PQgetvalue(r, 0, 0));
		ret = out;
	} else if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fprintf(stderr, "db_value: %s", PQresultErrorMessage(r));
	PQclear(r);
	return ret;
}

const char *
db_valuev(const char *sql, int n, const char *const *params)
{
	PGconn *c = PQconnectdb("");   /* PGHOST, PGDATABASE, PGUSER from stack.env */
	const char *ret = NULL;

	if (PQstatus(c) == CONNECTION_OK)
		ret = db_value_on(c, sql, n, params);
	PQfinish(c);
	return ret;
}

const char *
db_footprint(const char *session, const char *acct)
{
	const char *p[2] = { session, acct };

	return db_valuev("SELECT CASE WHEN $1::uuid IS NULL THEN '' ELSE (SELECT status || '/' ||"
	    " coalesce(payment_method, '-') FROM payment_sessions WHERE id = $1::uuid) || '/' END"
	    " || CASE WHEN $2::text IS NULL THEN '' ELSE (SELECT balance || '/' || pin_failures"
	    " FROM accounts WHERE account_number = $2) || '/' END ||"
	    " (SELECT count(*) FROM payment_sessions) || '/' ||"
	    " (SELECT count(*) FROM session_items) || '/' ||"
	    " (SELECT count(*) FROM idempotency_keys) || '/' ||"
	    " (SELECT count(*) FROM ledger_transactions) || '/' ||"
	    " (SELECT count(*) || ':' || coalesce(sum(amount), 0) FROM ledger_entries) || '/' ||"
	    " (SELECT count(*) || ':' || coalesce(sum(amount_reversed), 0) FROM transfers) || '/'"
	    " || (SELECT count(*) FROM webhook_events) || '/' || (SELECT count(*) FROM refunds) ||"
	    " '/' || (SELECT count(*) FROM transfer_reversals) || '/' ||"
	    " (SELECT count(*) FROM webhook_redeliveries) || '/' ||"
	    " (SELECT coalesce(md5(string_agg(id || ':' || balance || ':' || version || ':'"
	    " || status, ',' ORDER BY id)), '-') FROM accounts) || '/' || (SELECT"
	    " coalesce(md5(string_agg(id || ':' || status || ':' || coalesce(transaction_id, 0) ||"
	    " ':' || amount_refunded, ',' ORDER BY id)), '-') FROM payment_sessions) || '/' ||"
	    " (SELECT environment FROM mp_settings)", 2, p);
}

void
assert_fail(const struct http_resp *r, long status, const char *needle)
{
	struct json_object *v;
	const char *msg = http_json_str(r, "message");

	ck_assert_msg(r->status == status, "status %ld, not %ld: %s", r->status, status, r->body);
	ck_assert_ptr_nonnull(r->json);
	ck_assert(json_object_object_get_ex(r->json, "success", &v));
	ck_assert(json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v));
	ck_assert_msg(msg != NULL && strstr(msg, needle) != NULL, "message '%s' lacks '%s'", msg,
	    needle);
}

void
assert_ledger_ok(void)
{
	ck_assert_int_eq(sh(CTL "ledger verify >/dev/null"), 0);
}

long long
balance_of(const char *acct)
{
	const char *v = db_value("SELECT balance FROM accounts WHERE account_number = $1", acct);

	ck_assert_ptr_nonnull(v);
	return atoll(v);
}

const char *
status_of(const char *id)
{
	return db_value("SELECT status FROM payment_sessions WHERE id = $1::uuid", id);
}

int
create(const char *auth, const char *body, long len, const char *extra, struct http_resp *r)
{
	const char *h[] = { JSON_CT, auth, extra, NULL };

	return http_do("POST", CREATE, h, body, len, r);
}

void
new_session(const char *auth, const char *body, char id[37])
{
	struct http_resp r;

	ck_assert_int_eq(create(auth, body, -1, NULL, &r), 0);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	snprintf(id, 37, "%s", http_json_str(&r, "session_id"));
	http_free(&r);
}

void
new_customer(const char *balance, char acct[16])
{
	snprintf(acct, 16, "%s", ctl("account create --kind customer"));
	ck_assert_uint_eq(strlen(acct), 12);
	if (balance != NULL)
		ck_assert_ptr_nonnull(ctl("account deposit %s %s", acct, balance));
	ck_assert_int_eq(sh("echo 1234 | " CTL "account pin %s >/dev/null", acct), 0);
}

PGconn *
db_hold(const char *sql, int n, const char *const *params)
{
	PGconn *c = db_connect_as(NULL);
	char state[6];

	ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
	ck_assert_str_eq(db_state(c, "BEGIN", 0, NULL, state), "00000");
	ck_assert_msg(strcmp(db_state(c, sql, n, params, state), "00000") == 0, "%s: %s", sql,
	    PQerrorMessage(c));
	return c;
}

PGconn *
hold_idempotency_lock(const char *merchant, const char *key)
{
	const char *p[2] = { merchant, key };

	return db_hold("SELECT pg_advisory_xact_lock(hashtextextended($1 || ':' || $2, 7201))", 2,
	    p);
}

int
lock_waiters(void)
{
	const char *n = db_value("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type ="
	    " 'Lock' AND datname = current_database()", NULL);

	return n != NULL ? atoi(n) : -1;
}

/* What http_parallel_held's requests are told to wait behind, and how long they did. */
struct held {
	PGconn *c;
	int want, most;
	struct timespec start, lined_up;
};

static long
ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* Called while the requests run: lets them go 300 ms after want of them wait, or after 5 s. */
static void
release_when_lined_up(void *arg)
{
	struct held *h = arg;
	int n;

	if (h->c == NULL)
		return;
	if ((n = lock_waiters()) > h->most)
		h->most = n;
	if (h->most >= h->want && h->lined_up.tv_sec == 0)
		clock_gettime(CLOCK_MONOTONIC, &h->lined_up);
	if ((h->lined_up.tv_sec != 0 && ms_since(&h->lined_up) >= 300) ||
	    ms_since(&h->start) >= 5000) {
		db_release(h->c);
		h->c = NULL;
	}
}

int
http_parallel_held(PGconn *held, int want, int n, const struct http_req *reqs,
    struct http_resp *out)
{
	struct held h = { .c = held, .want = want };
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &h.start);
	rc = http_parallel_reqs(n, reqs, out, release_when_lined_up, &h);
	if (h.c != NULL)
		db_release(h.c);
	return rc == 0 ? h.most : -1;
}

const char *
refusal(const struct http_resp *r)
{
	struct json_object *v;

	if (r->status != 400 || !json_object_object_get_ex(r->json, "success", &v) ||
	    !json_object_is_type(v, json_type_boolean) || json_object_get_boolean(v))
		return NULL;
	return http_json_str(r, "message");
}

void
db_release(PGconn *c)
{
	PQclear(PQexec(c, "COMMIT"));
	PQfinish(c);
}

void
need(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "%s: %s failed\n", program_invocation_short_name, what);
		exit(1);
	}
}

static void
copy_or_die(char *dst, size_t n, const char *src, const char *what)
{
	need(src != NULL && src[0] != '\0', what);
	snprintf(dst, n, "%s", src);
}

_Static_assert(APIKEY_MAX + 1 == 129, "fixture_live_key's buffer is a key's");

int
fixture_live_key(const char *merchant, char key[129])
{
	char digest[67];
	const char *p[3] = { merchant, key, digest };

	/* marketpayctl refuses a database of the other environment: minted as it would, in SQL. */
	if (apikey_new("mp_live_", key, digest) != 0)
		return -1;
	return db_valuev("INSERT INTO api_keys (merchant_id, prefix, digest, environment)"
	    " VALUES ($1, left($2, 16), $3::bytea, 'production') RETURNING id", 3, p) == NULL ?
	    -1 : 0;
}

PGconn *
db_connect_as(const char *user)
{
	const char *keys[] = { "user", NULL }, *vals[] = { user, NULL };

	return user != NULL ? PQconnectdbParams(keys, vals, 1) : PQconnectdb("");
}

const char *
db_state(PGconn *c, const char *sql, int n, const char *const *params, char state[6])
{
	PGresult *r = n > 0 ? PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0) :
	    PQexec(c, sql);
	const char *s = PQresultErrorField(r, PG_DIAG_SQLSTATE);

	snprintf(state, 6, "%s", PQresultStatus(r) == PGRES_TUPLES_OK ||
	    PQresultStatus(r) == PGRES_COMMAND_OK ? "00000" : s != NULL ? s : "?????");
	PQclear(r);
	return state;
}

const char *
db_as(const char *user, const char *sql, char state[6])
{
	PGconn *c = db_connect_as(user);

	if (PQstatus(c) != CONNECTION_OK)
		snprintf(state, 6, "LOGIN");
	else
		db_state(c, sql, 0, NULL, state);
	PQfinish(c);
	return state;
}

void
fixture_init(void)
{
	const char *cfg = getenv("MARKETPAY_CONFIG");

	if (getenv("MARKETPAY_BASE_URL") == NULL || cfg == NULL || getenv("MARKETPAYCTL") == NULL) {
		fprintf(stderr, "fixture: source the stack's stack.env first (tests/integration.sh)\n");
		exit(1);
	}
	copy_or_die(fx.merchant_a, sizeof(fx.merchant_a),
	    ctl("merchant create --name 'Shop A' --webhook-url https://a.example/hook"),
	    "merchant A");
	copy_or_die(fx.merchant_b, sizeof(fx.merchant_b), ctl("merchant create --name 'Shop B'"),
	    "merchant B");
	copy_or_die(fx.key_a, sizeof(fx.key_a), ctl("key create %s", fx.merchant_a), "key A");
	copy_or_die(fx.key_b, sizeof(fx.key_b), ctl("key create %s", fx.merchant_b), "key B");
	copy_or_die(fx.key_revoked, sizeof(fx.key_revoked), ctl("key create %s", fx.merchant_a),
	    "key to revoke");
	need(ctl("key revoke %.16s", fx.key_revoked) != NULL, "key revoke");
	need(fixture_live_key(fx.merchant_a, fx.key_live) == 0, "production key");
	snprintf(fx.auth_a, sizeof(fx.auth_a), "Authorization: API-KEY %s", fx.key_a);
	snprintf(fx.auth_b, sizeof(fx.auth_b), "Authorization: API-KEY %s", fx.key_b);
}

int
matches(const char *s, const char *pattern)
{
	regex_t re;
	int ok;

	if (s == NULL || regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
		return 0;
	ok = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

int
fixture_main(Suite *s, void (*setup)(void), void (*teardown)(void))
{
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	fixture_init();
	if (setup != NULL)
		setup();
	rc = run_suite(s);
	if (teardown != NULL)
		teardown();
	curl_global_cleanup();
	return rc;
}

int
run_capture(const char *cmd, char *out, size_t n)
{
	FILE *p = popen(cmd, "r");
	size_t got;

	ck_assert_ptr_nonnull(p);
	got = fread(out, 1, n - 1, p);
	out[got] = '\0';
	return pclose(p);
}
