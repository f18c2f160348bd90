/*
 * API keys against the real stack (tests/integration.sh): stored as their SHA-256 digest
 * only, and looked up by that digest alone; refused from the request after a revocation or
 * a merchant disabled (marketpayctl merchant disable), by every worker, also by create-session's own lookup;
 * and their last use, noted at most once per 10 minutes (marketpayctl key list); a keyed
 * request's key looked up with its Idempotency-Key's lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "auth.h"
#include "fixture.h"
#include "http.h"

START_TEST(test_key_stored_as_digest)
{
	char digest[67];

	/* The row holds SHA-256 of the whole key, and no column holds its secret part. */
	ck_assert_int_eq(apikey_digest(fx.key_a, strlen(fx.key_a), digest), 0);
	ck_assert_str_eq(db_value("SELECT count(*) FROM api_keys WHERE digest = $1::bytea", digest),
	    "1");
	ck_assert_str_eq(db_value("SELECT count(*) FROM api_keys WHERE digest ="
	    " sha256(convert_to($1, 'UTF8'))", fx.key_a), "1");
	ck_assert_str_eq(db_value("SELECT count(*) FROM api_keys k WHERE"
	    " strpos(row_to_json(k)::text, substr($1, 17)) > 0", fx.key_a), "0");
}
END_TEST

/*
 * What the worker sends to look a key up, as PostgreSQL saw it: one equality on the digest
 * column (plus environment and status), nothing that compares key text. So how long the
 * lookup takes depends on SHA-256 of the presented key, which an attacker cannot steer
 * towards a real key's digest. bench/key-timing measures it.
 */
START_TEST(test_key_lookup_by_digest)
{
	char auth[200], sql[4096];
	const char *h[] = { auth, NULL }, *q, *p3;
	struct http_resp r;
	int i;

	for (i = 0; i < 8; i++) {   /* enough to meet every worker of the pool at least once */
		snprintf(auth, sizeof(auth), "Authorization: API-KEY %.40s%024d", fx.key_a, i);
		ck_assert_int_eq(http_do("GET", "/api/v1/payment/sessions/00000000-0000-4000-8000-"
		    "000000000000", h, NULL, 0, &r), 0);
		ck_assert_int_eq(r.status, 401);
		http_free(&r);
	}
	/* The statement of these requests (another suite's list may be some worker's last). */
	q = db_value("SELECT min(query) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND"
	    " query LIKE '%FROM api_keys%' AND query LIKE '%mp_session_json%'", NULL);
	ck_assert_msg(q != NULL && strcmp(q, "(null)") != 0, "no worker ran a key lookup");
	snprintf(sql, sizeof(sql), "%s", q);
	ck_assert_msg(strstr(sql, "k.digest = $1::bytea") != NULL, "%s", sql);
	ck_assert_msg(strstr(sql, "prefix") == NULL, "%s", sql);
	/* The only other parameter, in GET of a session's one statement, is the session id. */
	ck_assert_msg(strstr(sql, "LIKE") == NULL && strstr(sql, "$4") == NULL, "%s", sql);
	ck_assert_msg((p3 = strstr(sql, "$3")) == NULL || (strstr(sql, "s.id = $3::uuid") ==
	    p3 - 7 && strstr(p3 + 2, "$3") == NULL), "%s", sql);
	/* The digest column is unique: the comparison is an index probe, not a scan of text. */
	ck_assert_str_eq(db_value("SELECT count(*) FROM pg_index i JOIN pg_attribute a ON"
	    " a.attrelid = i.indrelid AND a.attnum = i.indkey[0] WHERE i.indrelid ="
	    " 'api_keys'::regclass AND i.indisunique AND i.indnatts = 1 AND a.attname = 'digest'",
	    NULL), "1");
}
END_TEST

#define NPAR 24   /* requests at once: more than the pool has workers, several times over */

/*
 * NPAR requests at once as merchant key key, half GET balance (the key looked up first),
 * half create-session (the key looked up by the insert itself): each status, space-separated
 * (static).
 */
static const char *
statuses(const char *key)
{
	static char out[NPAR * 4 + 1];
	char auth[200];
	const char *h[] = { auth, NULL }, *hc[] = { JSON_CT, auth, NULL };
	struct http_req reqs[NPAR];
	struct http_resp r[NPAR];
	size_t n = 0;
	int i;

	snprintf(auth, sizeof(auth), "Authorization: API-KEY %s", key);
	for (i = 0; i < NPAR; i++) {
		reqs[i].method = i % 2 ? "POST" : "GET";
		reqs[i].path = i % 2 ? CREATE : "/api/v1/payment/balance";
		reqs[i].headers = i % 2 ? hc : h;
		reqs[i].body = i % 2 ? GOOD_BODY : NULL;
	}
	ck_assert_int_eq(http_parallel_reqs(NPAR, reqs, r, NULL, NULL), 0);
	out[0] = '\0';
	for (i = 0; i < NPAR; i++) {
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%ld", i ? " " : "", r[i].status);
		http_free(&r[i]);
	}
	return out;
}

/* What every one of NPAR requests answered, when all answered status. */
static const char *
all(long status)
{
	static char out[NPAR * 4 + 1];
	size_t n = 0;
	int i;

	for (i = 0; i < NPAR; i++)
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%ld", i ? " " : "", status);
	return out;
}

/* A new merchant's id into id[32] and its new key into key[160]. */
static void
new_key(char id[32], char key[160])
{
	snprintf(id, 32, "%s", ctl("merchant create --name 'Cached keys'"));
	snprintf(key, 160, "%s", ctl("key create %s", id));
	ck_assert(strncmp(key, "mp_test_", 8) == 0);
}

/*
 * A revocation counts from the next request on, on every worker and for both ways a key is
 * looked up: every worker has served the key, it is revoked, and every one of the next
 * requests is refused (a key kept in a worker would not be).
 */
START_TEST(test_revoked_at_once)
{
	char id[32], key[160];

	new_key(id, key);
	ck_assert_str_eq(statuses(key), all(200));
	ck_assert_ptr_nonnull(ctl("key revoke %.16s", key));
	ck_assert_str_eq(statuses(key), all(401));
}
END_TEST

/*
 * The same for a merchant disabled with marketpayctl merchant disable (or from psql), and
 * enabled again.
 */
START_TEST(test_disabled_at_once)
{
	char id[32], key[160];

	new_key(id, key);
	ck_assert_str_eq(statuses(key), all(200));
	ck_assert_str_eq(ctl("merchant disable %s", id), id);
	ck_assert_str_eq(statuses(key), all(401));
	ck_assert_str_eq(ctl("merchant enable %s", id), id);
	ck_assert_str_eq(statuses(key), all(200));
	ck_assert_ptr_nonnull(db_value("UPDATE merchants SET status = 'disabled' WHERE id ="
	    " $1::bigint RETURNING 1", id));
	ck_assert_str_eq(statuses(key), all(401));
	ck_assert_ptr_nonnull(db_value("UPDATE merchants SET status = 'active' WHERE id ="
	    " $1::bigint RETURNING 1", id));
	ck_assert_str_eq(statuses(key), all(200));
}
END_TEST

/*
 * A revocation made while the workers were cut off from the database still counts once
 * they have connected anew.
 */
START_TEST(test_revoked_while_disconnected)
{
	char id[32], key[160];

	new_key(id, key);
	ck_assert_str_eq(statuses(key), all(200));
	ck_assert_ptr_nonnull(db_value("SELECT count(pg_terminate_backend(pid)) FROM"
	    " pg_stat_activity WHERE usename = 'mp_worker'", NULL));
	ck_assert_ptr_nonnull(db_value("UPDATE api_keys SET revoked_at = now() WHERE digest ="
	    " sha256(convert_to($1, 'UTF8')) RETURNING 1", key));
	/* A worker may answer 503 while it reconnects; none may answer 200. */
	ck_assert_ptr_null(strstr(statuses(key), "200"));
	ck_assert_str_eq(statuses(key), all(401));
}
END_TEST

/*
 * create-session looks a well-formed key up only with its insert, yet a refused key still
 * answers 401 before any other refusal (media type, JSON, a field), and stores nothing;
 * a good key with the same refusals gets them.
 */
START_TEST(test_create_key_first)
{
	static const char *const bodies[] = { "{\"items\":[]}", "{", GOOD_BODY };
	char id[32], key[160], auth[200], before[FOOTPRINT_LEN];
	const char *h[] = { JSON_CT, auth, NULL }, *ht[] = { "Content-Type: text/plain", auth,
	    NULL };
	struct http_resp r;
	size_t i;

	new_key(id, key);
	snprintf(auth, sizeof(auth), "Authorization: API-KEY %s", key);
	ck_assert_ptr_nonnull(ctl("key revoke %.16s", key));
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(http_do("POST", CREATE, h, bodies[i], -1, &r), 0);
		ck_assert_msg(r.status == 401, "%s: %ld %s", bodies[i], r.status, r.body);
		http_free(&r);
	}
	ck_assert_int_eq(http_do("POST", CREATE, ht, GOOD_BODY, -1, &r), 0);
	ck_assert_int_eq(r.status, 401);
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	/* The positive control: a good key gets the other refusals, then its session. */
	new_key(id, key);
	snprintf(auth, sizeof(auth), "Authorization: API-KEY %s", key);
	ck_assert_int_eq(http_do("POST", CREATE, h, bodies[0], -1, &r), 0);
	assert_fail(&r, 400, "items must not be empty");
	http_free(&r);
	ck_assert_int_eq(http_do("POST", CREATE, ht, GOOD_BODY, -1, &r), 0);
	ck_assert_int_eq(r.status, 415);
	http_free(&r);
	ck_assert_int_eq(http_do("POST", CREATE, h, GOOD_BODY, -1, &r), 0);
	ck_assert_int_eq(r.status, 200);
	snprintf(before, sizeof(before), "%s 1550", id);
	ck_assert_str_eq(db_value("SELECT merchant_id::text || ' ' || amount FROM"
	    " payment_sessions WHERE id = $1::uuid", http_json_str(&r, "session_id")), before);
	http_free(&r);
}
END_TEST

/* A key's last use as marketpayctl key list shows it, and its row's xmin (which a write moves). */
static const char *
last_use(const char *key)
{
	return db_value("SELECT coalesce(mp_iso(last_used_at), 'never') || ' ' || xmin FROM"
	    " api_keys WHERE digest = sha256(convert_to($1, 'UTF8'))", key);
}

/* GETs the session list as key (auth_key's lookup); it must answer 200. */
static void
use_key(const char *key)
{
	char auth[200];
	const char *h[] = { auth, NULL };
	struct http_resp r;

	snprintf(auth, sizeof(auth), "Authorization: API-KEY %s", key);
	ck_assert_int_eq(http_do("GET", "/api/v1/payment/sessions", h, NULL, 0, &r), 0);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	http_free(&r);
}

/*
 * key list: last used, noted by the key lookups themselves (auth_key, and create-session's
 * own) at most once per 10 minutes, so a request within that window writes nothing (the
 * row's xmin stays); never for an unused key; a revoked key shows revoked and its last use.
 */
START_TEST(test_key_list_last_use)
{
	char m[32], keys[3][160], auth[200], was[128], cmd[256], out[2048], want[256];
	const char *h[] = { JSON_CT, auth, NULL }, *s;
	struct http_resp r;
	int i;

	snprintf(m, sizeof(m), "%s", ctl("merchant create --name Lastuse"));
	for (i = 0; i < 3; i++) {
		need((s = ctl("key create %s", m)) != NULL, "key create");
		snprintf(keys[i], sizeof(keys[i]), "%s", s);
		ck_assert_str_eq(strtok(strcpy(was, last_use(keys[i])), " "), "never");
	}
	use_key(keys[0]);
	snprintf(auth, sizeof(auth), "Authorization: API-KEY %s", keys[1]);
	ck_assert_int_eq(create(auth, GOOD_BODY, -1, NULL, &r), 0);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	http_free(&r);
	for (i = 0; i < 2; i++)
		ck_assert_msg(matches(last_use(keys[i]), "^20[0-9-]{8}T[0-9:]{8}\\+00:00 [0-9]+$"),
		    "key %d: %s", i, last_use(keys[i]));
	/* Used again within the window: nothing written, by either lookup. */
	snprintf(was, sizeof(was), "%s", last_use(keys[0]));
	use_key(keys[0]);
	ck_assert_str_eq(last_use(keys[0]), was);
	snprintf(was, sizeof(was), "%s", last_use(keys[1]));
	ck_assert_int_eq(http_do("POST", CREATE, h, GOOD_BODY, -1, &r), 0);
	ck_assert_int_eq(r.status, 200);
	http_free(&r);
	ck_assert_str_eq(last_use(keys[1]), was);
	/* After it: noted again. */
	ck_assert_ptr_nonnull(db_value("UPDATE api_keys SET last_used_at = '2020-01-01T00:00:00Z'"
	    " WHERE digest = sha256(convert_to($1, 'UTF8')) RETURNING 1", keys[0]));
	use_key(keys[0]);
	ck_assert_str_eq(db_value("SELECT last_used_at > now() - interval '1 minute' FROM api_keys"
	    " WHERE digest = sha256(convert_to($1, 'UTF8'))", keys[0]), "t");
	need(ctl("key revoke %.16s", keys[0]) != NULL, "key revoke");
	/* mp_key_used, which the workers' role may call with any id, notes no revoked key. */
	ck_assert_ptr_nonnull(db_value("UPDATE api_keys SET last_used_at = '2020-01-01T00:00:00Z'"
	    " WHERE digest = sha256(convert_to($1, 'UTF8')) RETURNING 1", keys[0]));
	ck_assert_str_eq(db_value("SELECT coalesce(mp_key_used(id)::text, 'none') FROM api_keys"
	    " WHERE digest = sha256(convert_to($1, 'UTF8'))", keys[0]), "none");
	snprintf(cmd, sizeof(cmd), CTL "key list %s", m);
	ck_assert_int_eq(run_capture(cmd, out, sizeof(out)), 0);
	for (i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), "\t%.16s\tsandbox\t%s\t[^\t]+\t%s\n", keys[i],
		    i == 0 ? "revoked" : "active", i == 2 ? "never" : "20[0-9-]{8}T[0-9:]{8}\\+00:00");
		ck_assert_msg(matches(out, want), "no line %s in:\n%s", want, out);
	}
}
END_TEST

/*
 * A keyed request on an endpoint after the sale: its API key is looked up by the statements
 * that take the Idempotency-Key's lock and read its stored reply (one round trip less;
 * bench/round-trips counts them). The answers stay those of a lookup of its own: a refused
 * API key answers 401 before a malformed Idempotency-Key's 400 and takes no lock (401, not
 * the 409 of a lock held elsewhere); a good key waits for the lock, and once it is free the
 * request is served and notes the key's use. (A transfer looks its key up first: its PIN's
 * RSA work is for a known merchant only.)
 */
static const struct {
	const char *path, *body;
} keyed_routes[] = {
	{ "/api/v1/payment/sessions/00000000-0000-7000-8000-000000000000/refunds", "{}" },
	{ "/api/v1/payment/sessions/00000000-0000-7000-8000-000000000000/expire", NULL },
	{ "/api/v1/payment/events/evt_00000000000000000000000000000000/redeliver", NULL },
	{ "/api/v1/payment/webhook-endpoint/rotate-secret", NULL },
	{ "/api/v1/payment/transfers/tr_00000000000000000000000000000000/reversals", "{}" },
};

START_TEST(test_keyed_lookup_with_lock)
{
	char idem[64], revoked[200];
	const char *path = keyed_routes[_i].path, *body = keyed_routes[_i].body;
	const char *h[] = { JSON_CT, fx.auth_a, idem, NULL }, *hr[] = { JSON_CT, revoked, idem, NULL };
	const char *bad_idem[] = { JSON_CT, revoked, "Idempotency-Key: a b", NULL };
	struct http_resp r;
	PGconn *c;

	snprintf(idem, sizeof(idem), "Idempotency-Key: keyed-lookup-%d", _i);
	snprintf(revoked, sizeof(revoked), "Authorization: API-KEY %s", fx.key_revoked);
	ck_assert_int_eq(http_do("POST", path, bad_idem, body, -1, &r), 0);
	ck_assert_int_eq(r.status, 401);
	http_free(&r);
	bad_idem[1] = fx.auth_a;
	ck_assert_int_eq(http_do("POST", path, bad_idem, body, -1, &r), 0);
	assert_fail(&r, 400, "Idempotency-Key must be");
	http_free(&r);
	ck_assert_ptr_nonnull(db_value("WITH u AS (UPDATE api_keys SET last_used_at = now() -"
	    " interval '1 hour' WHERE merchant_id = $1::bigint RETURNING 1) SELECT count(*)"
	    " FROM u", fx.merchant_a));
	c = hold_idempotency_lock(fx.merchant_a, idem + strlen("Idempotency-Key: "));
	ck_assert_int_eq(http_do("POST", path, h, body, -1, &r), 0);
	assert_fail(&r, 409, "still in progress");
	http_free(&r);
	ck_assert_int_eq(http_do("POST", path, hr, body, -1, &r), 0);
	ck_assert_int_eq(r.status, 401);
	http_free(&r);
	db_release(c);
	ck_assert_ptr_nonnull(db_value("WITH u AS (UPDATE api_keys SET last_used_at = now() -"
	    " interval '1 hour' WHERE merchant_id = $1::bigint RETURNING 1) SELECT count(*)"
	    " FROM u", fx.merchant_a));
	ck_assert_int_eq(http_do("POST", path, h, body, -1, &r), 0);
	ck_assert_msg(r.status != 401 && r.status != 409 && r.status < 500, "%ld %s", r.status,
	    r.body);
	http_free(&r);
	ck_assert_str_eq(db_value("SELECT count(*) FROM api_keys WHERE merchant_id = $1::bigint"
	    " AND revoked_at IS NULL AND last_used_at > now() - interval '1 minute'",
	    fx.merchant_a), "1");
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("keys", "keys", 60, &t);

	tcase_add_test(t, test_key_stored_as_digest);
	tcase_add_test(t, test_key_lookup_by_digest);
	tcase_add_test(t, test_revoked_at_once);
	tcase_add_test(t, test_disabled_at_once);
	tcase_add_test(t, test_revoked_while_disconnected);
	tcase_add_test(t, test_create_key_first);
	tcase_add_test(t, test_key_list_last_use);
	tcase_add_loop_test(t, test_keyed_lookup_with_lock, 0, NELEM(keyed_routes));
	return fixture_main(s, NULL, NULL);
}
