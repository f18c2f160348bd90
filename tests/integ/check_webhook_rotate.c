/*
 * Rotating a merchant's webhook signing secret against the real stack (tests/integration.sh):
 * POST /api/v1/payment/webhook-endpoint/rotate-secret and marketpayctl merchant webhook
 * --rotate-secret. The new secret is answered once and stored only sealed (opened here with
 * the stack's secrets key to see which secret each column holds); the replaced one becomes
 * the previous secret until the rotation window ends (webhook_secret_rotation_window, which
 * marketpayctl db migrate stores; 0 keeps none); an Idempotency-Key replays the same secret
 * from a reply stored sealed; every refusal (no key, wrong method, no secret yet, no secrets
 * key in the worker) leaves the database as it was; two rotations at once leave the later
 * secret current and the earlier one previous. A delivery made in the window carries both
 * signatures, the new secret's first; after it, only the new one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "crypto.h"
#include "fixture.h"
#include "http.h"
#include "outbox.h"
#include "receiver.h"
#include "refunds.h"
#include "transfers.h"
#include "webhook_sign.h"

#define ROTATE "/api/v1/payment/webhook-endpoint/rotate-secret"
#define ROTATED "Webhook signing secret rotated."
#define NO_SECRET "no webhook signing secret to rotate: the operator sets the first one with" \
	" your webhook URL"
#define NO_KEY "webhook secrets are unavailable: the secrets key is not configured"
#define WINDOW 86400     /* webhook_secret_rotation_window of the stack: the default */
#define RACERS 4

/* A merchant of the case's own, its webhooks to the receiver; its first secret, noted. */
static void
hooked_merchant(struct merchant *m, char secret[128])
{
	new_merchant(m, "1234", "1.00", false);
	merchant_webhook(m, secret);
}

/* POST rotate-secret as auth (NULL: no Authorization), with Idempotency-Key key (or NULL). */
static void
rotate(const char *auth, const char *key, struct http_resp *r)
{
	char idem[300];
	const char *h[3] = { auth, NULL, NULL };

	if (key != NULL) {
		snprintf(idem, sizeof(idem), "Idempotency-Key: %s", key);
		h[auth != NULL ? 1 : 0] = idem;
	}
	ck_assert_int_eq(http_do("POST", ROTATE, h, NULL, 0, r), 0);
}

/*
 * A rotation's 200 as marketpay-api(7) has it: exactly status_code 10, success true, the
 * message, a new whsec_ secret (noted for the log check) and the window's end, which is the
 * merchant's previous_until as stored. The secret into secret[128].
 */
static void
assert_rotated(const struct http_resp *r, const char *merchant, char secret[128])
{
	struct json_object *v;
	char want[512], until[64];

	ck_assert_msg(r->status == 200, "%ld %s", r->status, r->body);
	ck_assert_ptr_nonnull(r->json);
	ck_assert_int_eq(json_object_object_length(r->json), 5);
	ck_assert(json_object_object_get_ex(r->json, "status_code", &v) &&
	    json_object_get_int(v) == 10);
	ck_assert(json_object_object_get_ex(r->json, "success", &v) &&
	    json_object_get_boolean(v));
	ck_assert_str_eq(jstr(r->json, "message"), ROTATED);
	ck_assert(matches(jstr(r->json, "secret"), "^whsec_[A-Za-z0-9+/]{32}$"));
	snprintf(secret, 128, "%s", jstr(r->json, "secret"));
	note_secret(secret);
	ck_assert(json_object_object_get_ex(r->json, "previous_secret_expires_at", &v));
	ck_assert_str_eq(json_object_is_type(v, json_type_null) ? "(null)" :
	    json_object_get_string(v), db_value("SELECT mp_iso(webhook_secret_previous_until)"
	    " FROM merchants WHERE id = $1", merchant));
	/* The bytes, member for member, as marketpay-api(7) shows them. */
	if (json_object_is_type(v, json_type_null))
		snprintf(until, sizeof(until), "null");
	else
		snprintf(until, sizeof(until), "\"%s\"", json_object_get_string(v));
	snprintf(want, sizeof(want), "{\"status_code\":10,\"success\":true,\"message\":\"%s\","
	    "\"secret\":\"%s\",\"previous_secret_expires_at\":%s}", ROTATED, secret, until);
	ck_assert_str_eq(r->body, want);
}

/* rotate() as m, which must answer its 200 (assert_rotated): the new secret into secret. */
static void
rotate_ok(const struct merchant *m, const char *key, char secret[128])
{
	struct http_resp r;

	rotate(m->auth, key, &r);
	assert_rotated(&r, m->id, secret);
	http_free(&r);
}

/*
 * The secret the merchant's column (webhook_secret_sealed or webhook_secret_previous_sealed)
 * holds, opened with the stack's secrets key: a static buffer, "" when the column is NULL.
 */
static const char *
opened(const char *merchant, const char *column)
{
	static char out[WEBHOOK_SECRET_MAX];
	unsigned char key[CRYPTO_KEY_LEN], sealed[WEBHOOK_SEALED_MAX];
	char sql[160];
	const char *hex;
	size_t len, i;

	snprintf(sql, sizeof(sql), "SELECT coalesce(encode(%s, 'hex'), '') FROM merchants"
	    " WHERE id = $1", column);
	ck_assert_ptr_nonnull(hex = db_value(sql, merchant));
	if (*hex == '\0')
		return "";
	len = strlen(hex) / 2;
	ck_assert_uint_le(len, sizeof(sealed));
	for (i = 0; i < len; i++)
		ck_assert_int_eq(sscanf(hex + 2 * i, "%2hhx", &sealed[i]), 1);
	ck_assert_int_eq(crypto_load_key(stack_file("secrets.key"), key), 0);
	ck_assert_msg(webhook_sign_open(key, sealed, len, out) == 0, "%s does not open", column);
	crypto_wipe(key, sizeof(key));
	return out;
}

/* The merchant's secret columns, hashed: what a refusal must not change. */
static const char *
secret_row(const char *merchant)
{
	static char v[64];

	snprintf(v, sizeof(v), "%s", db_value("SELECT md5(coalesce(encode(webhook_secret_sealed,"
	    " 'hex'), '-') || coalesce(encode(webhook_secret_previous_sealed, 'hex'), '-') ||"
	    " coalesce(webhook_secret_previous_until::text, '-')) FROM merchants WHERE id = $1",
	    merchant));
	return v;
}

/* How far the window's end is from now, in whole seconds, by the database's clock. */
static long
window_left(const char *merchant)
{
	const char *v = db_value("SELECT round(extract(epoch FROM webhook_secret_previous_until -"
	    " now()))::int FROM merchants WHERE id = $1", merchant);

	ck_assert_ptr_nonnull(v);
	return atol(v);
}

/*
 * The merchant rotates its secret: the reply shows a new one, once; the database holds it
 * sealed (not in the clear), the replaced one as the previous secret for the window, and
 * nothing else of the merchant changed.
 */
START_TEST(test_rotate)
{
	struct merchant m;
	char old[128], fresh[128], url[512], footprint[FOOTPRINT_LEN];
	const char *p[2];
	struct http_resp r;

	hooked_merchant(&m, old);
	snprintf(url, sizeof(url), "%s", db_value("SELECT webhook_url FROM merchants WHERE"
	    " id = $1", m.id));
	ck_assert_str_eq(opened(m.id, "webhook_secret_previous_sealed"), "");
	snprintf(footprint, sizeof(footprint), "%s", db_footprint(NULL, NULL));
	rotate_ok(&m, NULL, fresh);
	ck_assert_str_ne(fresh, old);
	ck_assert_str_eq(opened(m.id, "webhook_secret_sealed"), fresh);
	ck_assert_str_eq(opened(m.id, "webhook_secret_previous_sealed"), old);
	ck_assert_int_le(labs(window_left(m.id) - WINDOW), 5);
	p[0] = m.id;
	p[1] = fresh;
	ck_assert_str_eq(db_valuev("SELECT position(convert_to(substr($2, 7), 'UTF8') IN"
	    " webhook_secret_sealed) FROM merchants WHERE id = $1", 2, p), "0");
	ck_assert_str_eq(db_value("SELECT webhook_url FROM merchants WHERE id = $1", m.id), url);
	/* No money, session, event or idempotency record: only the merchant's secrets. */
	ck_assert_str_eq(db_footprint(NULL, NULL), footprint);

	/* Again: the secret of the first rotation becomes the previous one, the oldest goes. */
	rotate(m.auth, NULL, &r);
	snprintf(old, sizeof(old), "%s", fresh);
	assert_rotated(&r, m.id, fresh);
	http_free(&r);
	ck_assert_str_eq(opened(m.id, "webhook_secret_sealed"), fresh);
	ck_assert_str_eq(opened(m.id, "webhook_secret_previous_sealed"), old);
}
END_TEST

/*
 * A retry with the same Idempotency-Key gets the same secret and rotates nothing; the reply
 * is kept only sealed; another body with that key is a 422.
 */
START_TEST(test_rotate_idempotent)
{
	struct merchant m;
	char first[128], again[128], row[64], hdr[16], key[64];
	const char *p[3];
	struct http_resp r;

	hooked_merchant(&m, first);
	snprintf(key, sizeof(key), "rotate-%s", m.id);
	rotate(m.auth, key, &r);
	assert_rotated(&r, m.id, first);
	ck_assert_ptr_null(http_header(&r, "Idempotent-Replayed", hdr, sizeof(hdr)));
	http_free(&r);
	snprintf(row, sizeof(row), "%s", secret_row(m.id));
	rotate(m.auth, key, &r);
	assert_rotated(&r, m.id, again);
	ck_assert_str_eq(http_header(&r, "Idempotent-Replayed", hdr, sizeof(hdr)), "true");
	http_free(&r);
	ck_assert_str_eq(again, first);
	ck_assert_str_eq(secret_row(m.id), row);
	ck_assert_str_eq(opened(m.id, "webhook_secret_sealed"), first);
	/* Stored sealed: base64 of nonce, ciphertext and tag, no secret in it. */
	p[0] = m.id;
	p[1] = key;
	p[2] = first;
	ck_assert_str_eq(db_valuev("SELECT body_sealed || ' ' || (position(substr($3, 7) IN body)"
	    " = 0) || ' ' || (position('whsec_' IN body) = 0) || ' ' ||"
	    " (body ~ '^[A-Za-z0-9+/]+={0,2}$') FROM idempotency_keys WHERE merchant_id ="
	    " $1::bigint AND key = $2", 3, p), "true true true true");
	/* The same key with a body: another request, 422, nothing rotated. */
	{
		char idem[96];
		const char *h[] = { m.auth, idem, JSON_CT, NULL };

		snprintf(idem, sizeof(idem), "Idempotency-Key: %s", key);
		ck_assert_int_eq(http_do("POST", ROTATE, h, "{}", -1, &r), 0);
		assert_fail(&r, 422, "Idempotency-Key was already used with a different request");
		http_free(&r);
	}
	ck_assert_str_eq(secret_row(m.id), row);
}
END_TEST

/*
 * Refused, each leaving the database as it was: no key, a bad or revoked key (401 with the
 * endpoint's detail), a method other than POST (405, Allow: POST), a merchant with no secret
 * yet (400; with an Idempotency-Key too, which then stores nothing). The positive control:
 * once the operator has set a secret, the same request rotates it.
 */
START_TEST(test_refusals)
{
	struct merchant m;
	char footprint[FOOTPRINT_LEN], row[64], buf[64], secret[128], fresh[128], revoked[160];
	char bad[200];
	const char *h[2] = { NULL, NULL };
	struct http_resp r;

	/* A URL without a secret, as merchant create --webhook-url leaves it. */
	new_merchant(&m, "1234", "1.00", false);
	ck_assert_ptr_nonnull(db_valuev("UPDATE merchants SET webhook_url = $2 WHERE id = $1"
	    " RETURNING 1", 2, (const char *[]){ m.id, env("MARKETPAY_WEBHOOK_RECEIVER") }));
	snprintf(footprint, sizeof(footprint), "%s", db_footprint(NULL, NULL));
	snprintf(row, sizeof(row), "%s", secret_row(m.id));

	rotate(NULL, NULL, &r);
	ck_assert_int_eq(r.status, 401);
	ck_assert_str_eq(http_json_str(&r, "detail"), "Invalid or missing API key.");
	http_free(&r);
	snprintf(bad, sizeof(bad), "Authorization: API-KEY mp_test_%048d", 0);
	rotate(bad, NULL, &r);
	ck_assert_int_eq(r.status, 401);
	http_free(&r);
	snprintf(revoked, sizeof(revoked), "%s", ctl("key create %s", m.id));
	ck_assert_ptr_nonnull(ctl("key revoke %s", revoked));
	snprintf(bad, sizeof(bad), "Authorization: API-KEY %s", revoked);
	rotate(bad, NULL, &r);
	ck_assert_int_eq(r.status, 401);
	ck_assert_str_eq(http_json_str(&r, "detail"), "Invalid or missing API key.");
	http_free(&r);
	h[0] = m.auth;
	ck_assert_int_eq(http_do("GET", ROTATE, h, NULL, 0, &r), 0);
	assert_fail(&r, 405, "method not allowed here; use POST");
	ck_assert_str_eq(http_header(&r, "Allow", buf, sizeof(buf)), "POST");
	http_free(&r);
	rotate(m.auth, NULL, &r);
	assert_fail(&r, 400, NO_SECRET);
	ck_assert_str_eq(http_json_str(&r, "message"), NO_SECRET);
	http_free(&r);
	rotate(m.auth, "no-secret-yet", &r);
	assert_fail(&r, 400, NO_SECRET);
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), footprint);
	ck_assert_str_eq(secret_row(m.id), row);
	ck_assert_str_eq(opened(m.id, "webhook_secret_sealed"), "");

	merchant_webhook(&m, secret);
	rotate_ok(&m, "no-secret-yet", fresh);
	ck_assert_str_eq(opened(m.id, "webhook_secret_previous_sealed"), secret);
}
END_TEST

/*
 * The window is the database's (marketpayctl db migrate stores webhook_secret_rotation_window):
 * 120 seconds, then 0, which keeps no previous secret and answers its end as null; the
 * stack's configuration puts the default back.
 */
START_TEST(test_window_from_config)
{
	struct merchant m;
	char secret[128], fresh[128], conf[1024];
	struct http_resp r;

	hooked_merchant(&m, secret);
	snprintf(conf, sizeof(conf), "%s", config_plus("rotate-120.conf",
	    "webhook_secret_rotation_window = 120"));
	ck_assert_int_eq(sh("\"$MARKETPAYCTL\" -c '%s' db migrate >/dev/null", conf), 0);
	ck_assert_str_eq(db_value("SELECT webhook_secret_rotation_window FROM mp_settings", NULL),
	    "120");
	rotate_ok(&m, NULL, fresh);
	ck_assert_int_le(labs(window_left(m.id) - 120), 5);
	ck_assert_str_eq(opened(m.id, "webhook_secret_previous_sealed"), secret);

	snprintf(conf, sizeof(conf), "%s", config_plus("rotate-0.conf",
	    "webhook_secret_rotation_window = 0"));
	ck_assert_int_eq(sh("\"$MARKETPAYCTL\" -c '%s' db migrate >/dev/null", conf), 0);
	snprintf(secret, sizeof(secret), "%s", fresh);
	rotate(m.auth, NULL, &r);
	assert_rotated(&r, m.id, fresh);
	ck_assert_str_eq(r.body + strlen(r.body) - strlen("\"previous_secret_expires_at\":null}"),
	    "\"previous_secret_expires_at\":null}");
	http_free(&r);
	ck_assert_str_eq(opened(m.id, "webhook_secret_sealed"), fresh);
	ck_assert_str_eq(opened(m.id, "webhook_secret_previous_sealed"), "");
	ck_assert_str_eq(db_value("SELECT webhook_secret_previous_until IS NULL FROM merchants"
	    " WHERE id = $1", m.id), "t");

	ck_assert_int_eq(sh(CTL "db migrate >/dev/null"), 0);
	ck_assert_str_eq(db_value("SELECT webhook_secret_rotation_window FROM mp_settings", NULL),
	    "86400");
	/* A key the configuration refuses: out of range. */
	snprintf(conf, sizeof(conf), "%s", config_plus("rotate-bad.conf",
	    "webhook_secret_rotation_window = 2592001"));
	ck_assert_int_ne(sh("\"$MARKETPAYCTL\" -c '%s' db migrate >/dev/null 2>&1", conf), 0);
	ck_assert_str_eq(db_value("SELECT webhook_secret_rotation_window FROM mp_settings", NULL),
	    "86400");
}
END_TEST

/*
 * RACERS rotations at once, lined up behind the merchant's row lock: each answers 200 with
 * its own secret; afterwards the current secret is one of theirs, the previous one another of
 * theirs (the one committed just before: never the first secret, never lost), and the window
 * stored is the one the current secret's reply gave.
 */
START_TEST(test_race)
{
	struct merchant m;
	char first[128], got[RACERS][128], current[128], previous[128];
	struct http_req q[RACERS];
	struct http_resp r[RACERS];
	const char *h[] = { NULL, NULL }, *p[1];
	int i, cur = -1, prev = -1;

	hooked_merchant(&m, first);
	h[0] = m.auth;
	for (i = 0; i < RACERS; i++)
		q[i] = (struct http_req){ "POST", ROTATE, h, NULL };
	p[0] = m.id;
	ck_assert_int_ge(http_parallel_held(db_hold("SELECT 1 FROM merchants WHERE id ="
	    " $1::bigint FOR UPDATE", 1, p), RACERS, RACERS, q, r), 2);
	for (i = 0; i < RACERS; i++) {
		ck_assert_msg(r[i].status == 200, "%ld %s", r[i].status, r[i].body);
		snprintf(got[i], sizeof(got[i]), "%s", http_json_str(&r[i], "secret"));
		ck_assert(matches(got[i], "^whsec_[A-Za-z0-9+/]{32}$"));
		note_secret(got[i]);
	}
	snprintf(current, sizeof(current), "%s", opened(m.id, "webhook_secret_sealed"));
	snprintf(previous, sizeof(previous), "%s", opened(m.id, "webhook_secret_previous_sealed"));
	for (i = 0; i < RACERS; i++) {
		ck_assert_msg(i == 0 || strcmp(got[i], got[0]) != 0, "two replies, one secret");
		if (strcmp(got[i], current) == 0)
			cur = i;
		if (strcmp(got[i], previous) == 0)
			prev = i;
	}
	ck_assert_msg(cur >= 0 && prev >= 0 && cur != prev, "current %d, previous %d", cur, prev);
	ck_assert_str_ne(previous, first);
	ck_assert_str_eq(http_json_str(&r[cur], "previous_secret_expires_at"),
	    db_value("SELECT mp_iso(webhook_secret_previous_until) FROM merchants WHERE id = $1",
	    m.id));
	for (i = 0; i < RACERS; i++)
		http_free(&r[i]);
}
END_TEST

/*
 * A worker without secrets_key_file: 503 with the endpoint's message, also for the replay of
 * a stored (sealed) reply, and nothing changes; with the key back, the replay works and a new
 * rotation too.
 */
START_TEST(test_no_secrets_key)
{
	struct merchant m;
	char secret[128], first[128], again[128], row[64], footprint[FOOTPRINT_LEN];
	struct http_resp r;

	hooked_merchant(&m, secret);
	rotate_ok(&m, "before-the-outage", first);
	snprintf(row, sizeof(row), "%s", secret_row(m.id));
	snprintf(footprint, sizeof(footprint), "%s", db_footprint(NULL, NULL));
	ck_assert_int_eq(sh("d=\"$MARKETPAY_STACK_DIR\" && \"$MP_STACK\" pool-stop \"$d\" && cp"
	    " \"$d/worker.conf\" \"$d/worker.conf.orig\" && sed -i 's|^secrets_key_file = .*|"
	    "secrets_key_file = /nonexistent/secrets.key|' \"$d/worker.conf\" && grep -q"
	    " nonexistent \"$d/worker.conf\" && \"$MP_STACK\" pool-start \"$d\" >/dev/null"), 0);
	rotate(m.auth, NULL, &r);
	ck_assert_int_eq(r.status, 503);
	ck_assert_str_eq(http_json_str(&r, "message"), NO_KEY);
	http_free(&r);
	rotate(m.auth, "before-the-outage", &r);
	ck_assert_msg(r.status == 503 && strstr(r.body, "whsec_") == NULL, "%ld %s", r.status,
	    r.body);
	http_free(&r);
	ck_assert_str_eq(secret_row(m.id), row);
	ck_assert_str_eq(db_footprint(NULL, NULL), footprint);
	ck_assert_int_eq(sh("d=\"$MARKETPAY_STACK_DIR\" && \"$MP_STACK\" pool-stop \"$d\" && mv"
	    " \"$d/worker.conf.orig\" \"$d/worker.conf\" && \"$MP_STACK\" pool-start \"$d\""
	    " >/dev/null"), 0);
	rotate_ok(&m, "before-the-outage", again);
	ck_assert_str_eq(again, first);
	rotate_ok(&m, NULL, again);
	ck_assert_str_eq(opened(m.id, "webhook_secret_previous_sealed"), first);
}
END_TEST

/*
 * The workers' role reaches the secret columns only through mp_rotate_webhook_secret
 * (check_intents.c: the direct writes are refused), which takes a sealed secret and refuses
 * anything shorter than one; as the owner, a merchant without a secret is MP043.
 */
START_TEST(test_worker_role)
{
	struct merchant m;
	char secret[128], sql[256], state[6], row[64];

	hooked_merchant(&m, secret);
	snprintf(row, sizeof(row), "%s", secret_row(m.id));
	snprintf(sql, sizeof(sql), "SELECT mp_rotate_webhook_secret(%s, '\\x%056d')", m.id, 0);
	ck_assert_str_eq(db_as("mp_worker", sql, state), "22023");
	ck_assert_str_eq(secret_row(m.id), row);
	snprintf(sql, sizeof(sql), "SELECT mp_rotate_webhook_secret(%s, '\\x%058d')", m.id, 0);
	ck_assert_str_eq(db_as("mp_worker", sql, state), "00000");
	ck_assert_str_eq(opened(m.id, "webhook_secret_previous_sealed"), secret);
	new_merchant(&m, "1234", "1.00", false);
	snprintf(row, sizeof(row), "%s", secret_row(m.id));
	ck_assert_str_eq(db_as("mp_worker", "SELECT webhook_secret_previous_until FROM merchants",
	    state), "42501");
	snprintf(sql, sizeof(sql), "SELECT mp_rotate_webhook_secret(%s, '\\x%058d')", m.id, 0);
	ck_assert_str_eq(db_as("mp_worker", sql, state), "MP043");
	ck_assert_str_eq(secret_row(m.id), row);
}
END_TEST

/*
 * marketpayctl merchant webhook ID --rotate-secret: prints the new secret once, keeps the
 * replaced one for the window; refuses --url beside it, a merchant without a secret and an
 * unknown one, changing nothing. --url afterwards replaces the secret at once and drops the
 * previous one.
 */
START_TEST(test_ctl_rotate)
{
	struct merchant m, bare;
	char secret[128], fresh[128], row[64];

	hooked_merchant(&m, secret);
	snprintf(fresh, sizeof(fresh), "%s", ctl("merchant webhook %s --rotate-secret", m.id));
	ck_assert(matches(fresh, "^whsec_[A-Za-z0-9+/]{32}$"));
	ck_assert_str_eq(opened(m.id, "webhook_secret_sealed"), fresh);
	ck_assert_str_eq(opened(m.id, "webhook_secret_previous_sealed"), secret);
	ck_assert_int_le(labs(window_left(m.id) - WINDOW), 5);

	snprintf(row, sizeof(row), "%s", secret_row(m.id));
	ck_assert_int_ne(sh(CTL "merchant webhook %s --rotate-secret --url https://x.example/"
	    " >/dev/null 2>&1", m.id), 0);
	ck_assert_int_ne(sh(CTL "merchant webhook %s --rotate-secret --keep-secret >/dev/null"
	    " 2>&1", m.id), 0);
	ck_assert_int_ne(sh(CTL "merchant webhook 999999999 --rotate-secret >/dev/null 2>&1"), 0);
	ck_assert_str_eq(secret_row(m.id), row);
	new_merchant(&bare, "1234", "1.00", false);
	ck_assert_int_ne(sh(CTL "merchant webhook %s --rotate-secret 2>\"$MARKETPAY_STACK_DIR/"
	    "rotate.err\" | grep -q .", bare.id), 0);
	ck_assert(file_has(stack_file("rotate.err"), "no webhook signing secret to rotate", 0));
	ck_assert_str_eq(opened(bare.id, "webhook_secret_sealed"), "");

	snprintf(secret, sizeof(secret), "%s", ctl("merchant webhook %s --url %s", m.id,
	    env("MARKETPAY_WEBHOOK_RECEIVER")));
	ck_assert_str_eq(opened(m.id, "webhook_secret_sealed"), secret);
	ck_assert_str_eq(opened(m.id, "webhook_secret_previous_sealed"), "");
	ck_assert_str_eq(db_value("SELECT webhook_secret_previous_until IS NULL FROM merchants"
	    " WHERE id = $1", m.id), "t");
}
END_TEST

/* The one delivery of event id, whose webhook-signature header goes into sig[256]. */
static struct json_object **
delivered(const char *id, char sig[256])
{
	struct json_object **reqs;
	int n;

	wait_status(id, "delivered");
	ck_assert_int_eq(receiver_wait(id, 1, WAIT_MS), 1);
	reqs = receiver_requests(id, &n);
	ck_assert_int_eq(n, 1);
	snprintf(sig, 256, "%s", receiver_field(reqs[0], "signature"));
	return reqs;
}

/*
 * A delivery made in the window carries two signatures, the new secret's first, so that an
 * endpoint holding either secret verifies it; once the window is over (its end moved into
 * the past), one signature, the new secret's. (This case needs marketpay-webhookd to sign
 * with the previous secret during the window: see marketpay-webhookd(8).)
 */
START_TEST(test_delivery_signed_with_both)
{
	struct merchant m;
	char old[128], fresh[128], sig[256], ev[64];
	struct json_object **reqs;

	hooked_merchant(&m, old);
	rotate_ok(&m, NULL, fresh);
	snprintf(ev, sizeof(ev), "%s", insert_event(m.id, "{\"rotated\":\"in the window\"}"));
	reqs = delivered(ev, sig);
	ck_assert_msg(matches(sig, "^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$"),
	    "two signatures in the window: %s", sig);
	ck_assert_msg(receiver_signature_ok(fresh, reqs[0]), "the new secret's: %s", sig);
	ck_assert_msg(receiver_signature_ok(old, reqs[0]), "the old secret's: %s", sig);
	/* The new secret's first: the first signature alone verifies with it. */
	sig[strcspn(sig, " ")] = '\0';
	json_object_object_add(reqs[0], "signature", json_object_new_string(sig));
	ck_assert(receiver_signature_ok(fresh, reqs[0]));
	ck_assert(!receiver_signature_ok(old, reqs[0]));
	receiver_free(reqs);

	ck_assert_ptr_nonnull(db_value("UPDATE merchants SET webhook_secret_previous_until ="
	    " now() - interval '1 second' WHERE id = $1 RETURNING 1", m.id));
	snprintf(ev, sizeof(ev), "%s", insert_event(m.id, "{\"rotated\":\"after the window\"}"));
	reqs = delivered(ev, sig);
	ck_assert_msg(matches(sig, "^v1,[A-Za-z0-9+/]{43}=$"), "one signature after: %s", sig);
	ck_assert(receiver_signature_ok(fresh, reqs[0]));
	ck_assert(!receiver_signature_ok(old, reqs[0]));
	receiver_free(reqs);
}
END_TEST

/* Each case starts with the stack's window, whatever a failed case before it left. */
static void
default_window(void)
{
	ck_assert_ptr_nonnull(db_value("UPDATE mp_settings SET webhook_secret_rotation_window ="
	    " 86400 RETURNING 1", NULL));
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("webhook-rotate", "secret rotation", 90, &t);

	env("MARKETPAY_WEBHOOK_RECEIVER");
	env("MP_STACK");
	tcase_add_checked_fixture(t, default_window, NULL);
	tcase_add_test(t, test_rotate);
	tcase_add_test(t, test_rotate_idempotent);
	tcase_add_test(t, test_refusals);
	tcase_add_test(t, test_window_from_config);
	tcase_add_test(t, test_race);
	tcase_add_test(t, test_no_secrets_key);
	tcase_add_test(t, test_worker_role);
	tcase_add_test(t, test_ctl_rotate);
	tcase_add_test(t, test_delivery_signed_with_both);
	return fixture_main(s, NULL, NULL);
}
