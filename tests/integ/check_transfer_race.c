/*
 * Integration tests of POST /api/v1/payment/send-money-MultiVendor across requests, against
 * the real stack (tests/integration.sh): the PIN (refusals, what counts as a guess, freshness
 * and replays of an encrypted PIN, escalating locks, the operator's unlock, parallel
 * guessing), Idempotency-Key replays, and concurrent transfers racing for one balance. The
 * single-request contract: check_transfer.c.
 */
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "../load/seal.h"
#include "checkout_form.h"
#include "fixture.h"
#include "http.h"
#include "refunds.h"
#include "transfers.h"

/* Set up once in the parent before the cases run (they run forked and inherit it). */
static char vendor[2][16];

/* plain (len bytes) under k with padding and md, base64, into out. */
static const char *
sealed_raw(EVP_PKEY *k, const char *plain, size_t len, int padding, const EVP_MD *md,
    char out[1024])
{
	need(seal_raw(k, plain, len, padding, md, out, 1024) == 0, "encrypting a PIN");
	return out;
}

/* The body of a transfer of a0 to vendor[0] and, when a1 is not NULL, a1 to vendor[1]. */
static const char *
body_of(const char *pin, const char *a0, const char *a1)
{
	static char b[2048];
	int n;

	n = snprintf(b, sizeof(b), "{\"pin\":\"%s\",\"vendors\":[{\"account_number\":\"%s\","
	    "\"amount\":%s}", pin, vendor[0], a0);
	if (a1 != NULL)
		n += snprintf(b + n, sizeof(b) - (size_t)n, ",{\"account_number\":\"%s\",\"amount\":%s}",
		    vendor[1], a1);
	snprintf(b + n, sizeof(b) - (size_t)n, "]}");
	return b;
}

/*
 * Encrypted PINs that are refused. Only a well-formed wrong PIN is a guess ("invalid PIN",
 * counted); anything that does not decode, decrypt or parse is the merchant's coding mistake
 * (400 saying how to encrypt it, not counted), and a stale or replayed one is refused before
 * the PIN is compared (not counted either).
 */
static const struct {
	const char *needle;
	bool counted;
} bad_pins[] = {
	{ "invalid PIN", true },                    /* 0: a wrong PIN, well formed */
	{ "pin cannot be decrypted", false },       /* 1: the right PIN under another key */
	{ "pin cannot be decrypted", false },       /* 2: OAEP with SHA-1 (Node's default) */
	{ "pin cannot be decrypted", false },       /* 3: PKCS#1 v1.5 */
	{ "pin cannot be decrypted", false },       /* 4: not base64 */
	{ "pin cannot be decrypted", false },       /* 5: truncated */
	{ "pin cannot be decrypted", false },       /* 6: random bytes */
	{ "pin cannot be decrypted", false },       /* 7: the raw PIN */
	{ "pin must decrypt to PIN:UNIX_TIME:NONCE", false },  /* 8: the bare PIN, sealed */
	{ "pin must decrypt to PIN:UNIX_TIME:NONCE", false },  /* 9: "4321\0junk" */
	{ "pin must decrypt to PIN:UNIX_TIME:NONCE", false },  /* 10: trailing bytes */
	{ "pin must decrypt to PIN:UNIX_TIME:NONCE", false },  /* 11: a short nonce */
	{ "pin was encrypted more than 300 seconds", false },  /* 12: made an hour ago */
	{ "pin was encrypted more than 300 seconds", false },  /* 13: made an hour ahead */
};
#define NBAD_PIN ((int)(sizeof(bad_pins) / sizeof(bad_pins[0])))

static const char *
bad_pin(int i, char out[1024])
{
	unsigned char junk[256];
	char plain[128];
	EVP_PKEY *other;
	int n;

	switch (i) {
	case 0: return sealed("9999", out);
	case 1:
		need((other = EVP_RSA_gen(2048)) != NULL, "RSA key generation");
		need(seal_pin(other, "1234", out, 1024) == 0, "encrypting a PIN");
		EVP_PKEY_free(other);
		return out;
	case 2:
		n = snprintf(plain, sizeof(plain), "1234:%lld:%s", (long long)time(NULL),
		    "0123456789abcdef0123");
		return sealed_raw(service_key, plain, (size_t)n, RSA_PKCS1_OAEP_PADDING, EVP_sha1(),
		    out);
	case 3:
		return sealed_raw(service_key, "1234", 4, RSA_PKCS1_PADDING, NULL, out);
	case 4: return "not base64!";
	case 5:
		memcpy(out, pin_ok(), 100);
		out[100] = '\0';
		return out;
	case 6:
		memset(junk, 0x5a, sizeof(junk));
		EVP_EncodeBlock((unsigned char *)out, junk, sizeof(junk));
		return out;
	case 7: return "1234";
	case 8:
		return sealed_raw(service_key, "1234", 4, RSA_PKCS1_OAEP_PADDING, EVP_sha256(), out);
	case 9:
		return sealed_raw(service_key, "4321\0junk", 9, RSA_PKCS1_OAEP_PADDING, EVP_sha256(),
		    out);
	case 10:
		n = snprintf(plain, sizeof(plain), "1234:%lld:0123456789abcdef0123\n",
		    (long long)time(NULL));
		return sealed_raw(service_key, plain, (size_t)n, RSA_PKCS1_OAEP_PADDING,
		    EVP_sha256(), out);
	case 11:
		need(seal_pin_at(service_key, "1234", (long long)time(NULL), "short", out, 1024) == 0,
		    "encrypting a PIN");
		return out;
	default:
		need(seal_pin_at(service_key, "1234", (long long)time(NULL) + (i == 12 ? -3600 : 3600),
		    "0123456789abcdef0123", out, 1024) == 0, "encrypting a PIN");
		return out;
	}
}

START_TEST(test_bad_pin)
{
	struct merchant m;
	char before[FOOTPRINT_LEN], pin[1024];
	struct http_resp r;

	new_merchant(&m, "1234", "50.00", true);
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	send_as(m.auth, body_of(bad_pin(_i, pin), "5", NULL), NULL, &r);
	assert_fail(&r, 400, bad_pins[_i].needle);
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	ck_assert_str_eq(pin_failures(&m), bad_pins[_i].counted ? "1" : "0");
	/* The right PIN still works afterwards (a positive control). */
	send_as(m.auth, body_of(pin_ok(), "5", NULL), NULL, &r);
	ck_assert_msg(transfer_accepted(&r, 1) != NULL, "%ld %s", r.status, r.body);
	http_free(&r);
}
END_TEST

START_TEST(test_pin_replay)
{
	struct merchant m;
	char body[2048], before[FOOTPRINT_LEN], pin[1024];
	struct http_resp r;

	/* A captured body, sent again: the PIN inside it was spent by the first. */
	new_merchant(&m, "1234", "50.00", true);
	snprintf(body, sizeof(body), "%s", body_of(sealed("1234", pin), "5", NULL));
	send_as(m.auth, body, NULL, &r);
	ck_assert_msg(transfer_accepted(&r, 1) != NULL, "%ld %s", r.status, r.body);
	http_free(&r);
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	send_as(m.auth, body, NULL, &r);
	assert_fail(&r, 400, "pin was already used");
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	ck_assert_int_eq(balance_of(m.acct), 4500);
	ck_assert_str_eq(pin_failures(&m), "0");
	/* Nor can its PIN be lifted into another transfer. */
	send_as(m.auth, body_of(pin, "1", "1"), NULL, &r);
	assert_fail(&r, 400, "pin was already used");
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
}
END_TEST

START_TEST(test_check_order)
{
	struct merchant m;
	char wrong[1024], body[2048];
	struct http_resp r;

	new_merchant(&m, "1234", "10.00", true);
	sealed("4321", wrong);
	/* An invalid body is refused before the PIN is looked at: no attempt counted. */
	snprintf(body, sizeof(body), "{\"pin\":\"%s\",\"vendors\":[]}", wrong);
	send_as(m.auth, body, NULL, &r);
	assert_fail(&r, 400, "vendors must not be empty");
	http_free(&r);
	ck_assert_str_eq(pin_failures(&m), "0");
	/* The PIN comes before the vendors and the balance: nothing about them leaks. */
	snprintf(body, sizeof(body), "{\"pin\":\"%s\",\"vendors\":[{\"account_number\":"
	    "\"VE0000000000\",\"amount\":1}]}", wrong);
	send_as(m.auth, body, NULL, &r);
	assert_fail(&r, 400, "invalid PIN");
	ck_assert_str_eq(refusal(&r), "invalid PIN");
	http_free(&r);
	send_as(m.auth, body_of(sealed("4321", wrong), "500", NULL), NULL, &r);
	ck_assert_str_eq(refusal(&r), "invalid PIN");
	http_free(&r);
	ck_assert_str_eq(pin_failures(&m), "2");
	/* The right PIN works and clears the count: only consecutive failures lock. */
	send_as(m.auth, body_of(pin_ok(), "1", NULL), NULL, &r);
	ck_assert_msg(transfer_accepted(&r, 1) != NULL, "%ld %s", r.status, r.body);
	http_free(&r);
	ck_assert_str_eq(pin_failures(&m), "0");
}
END_TEST

/* The merchant's lock: seconds left (rounded), or -1 for the hard lock, 0 for none. */
static long
lock_left(const struct merchant *m)
{
	return atol(db_value("SELECT CASE WHEN pin_locked_until = 'infinity' THEN -1"
	    " WHEN pin_locked_until > now() THEN round(extract(epoch FROM pin_locked_until - now()))"
	    " ELSE 0 END FROM merchants WHERE id = $1::bigint", m->id));
}

/* Five wrong PINs in a row: each refused, the last one locks. */
static void
five_wrong(const struct merchant *m, const char *lock_needle)
{
	char wrong[1024];
	struct http_resp r;
	int i;

	for (i = 0; i < 5; i++) {
		send_as(m->auth, body_of(sealed("0000", wrong), "1", NULL), NULL, &r);
		assert_fail(&r, 400, i < 4 ? "invalid PIN" : lock_needle);
		http_free(&r);
	}
}

START_TEST(test_pin_lockout)
{
	static const long lock[] = { 900, 3600, 14400 };   /* pin_lock_seconds times 4^n */
	struct merchant m;
	char before[FOOTPRINT_LEN], buf[32];
	struct http_resp r;
	int n;

	new_merchant(&m, "1234", "10.00", true);
	for (n = 0; n < 3; n++) {
		five_wrong(&m, "invalid PIN; transfers are locked after too many wrong PINs until 2");
		ck_assert_str_eq(pin_failures(&m), "5");
		ck_assert_msg(labs(lock_left(&m) - lock[n]) <= 5, "lock %d: %ld s, not %ld", n,
		    lock_left(&m), lock[n]);
		/* Locked: the right PIN is refused too, says until when, nothing moves. */
		snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
		send_as(m.auth, body_of(pin_ok(), "1", NULL), NULL, &r);
		assert_fail(&r, 400, "transfers are locked after too many wrong PINs until 2");
		ck_assert_ptr_nonnull(http_header(&r, "Retry-After", buf, sizeof(buf)));
		ck_assert_msg(labs(atol(buf) - lock[n]) <= 5, "Retry-After %s", buf);
		http_free(&r);
		ck_assert_str_eq(db_footprint(NULL, NULL), before);
		ck_assert_str_eq(pin_failures(&m), "5");
		/* The lock runs out (moved into the past); the count starts afresh. */
		ck_assert_ptr_nonnull(db_value("UPDATE merchants SET pin_locked_until = now() -"
		    " interval '1 second' WHERE id = $1::bigint RETURNING 1", m.id));
	}
	/* After three timed locks the fourth is for good: only the operator lifts it. */
	five_wrong(&m, "invalid PIN; transfers are locked after too many wrong PINs until the "
	    "operator unlocks them");
	ck_assert_int_eq(lock_left(&m), -1);
	send_as(m.auth, body_of(pin_ok(), "1", NULL), NULL, &r);
	assert_fail(&r, 400, "locked after too many wrong PINs until the operator unlocks them");
	ck_assert_ptr_null(http_header(&r, "Retry-After", buf, sizeof(buf)));
	http_free(&r);
	ck_assert_int_eq(balance_of(m.acct), 1000);
	ck_assert_int_eq(sh(CTL "merchant unlock %s >/dev/null", m.id), 0);
	ck_assert_int_eq(lock_left(&m), 0);
	send_as(m.auth, body_of(pin_ok(), "1", NULL), NULL, &r);
	ck_assert_msg(transfer_accepted(&r, 1) != NULL, "%ld %s", r.status, r.body);
	http_free(&r);
	ck_assert_int_eq(balance_of(m.acct), 900);
	ck_assert_str_eq(db_value("SELECT pin_failures || '/' || pin_locks FROM merchants WHERE id ="
	    " $1::bigint", m.id), "0/0");
}
END_TEST

/* Counts replies in tally: [0] "invalid PIN", [1] locked, [2] anything else. */
static void
tally_guesses(struct http_resp *r, int n, int tally[3])
{
	const char *msg;
	int i, k;

	for (i = 0; i < n; i++) {
		msg = refusal(&r[i]);
		k = msg == NULL ? 2 : strcmp(msg, "invalid PIN") == 0 ? 0 :
		    strstr(msg, "locked") != NULL ? 1 : 2;
		if (k == 2)
			fprintf(stderr, "guess %d: %ld %s\n", i, r[i].status, r[i].body);
		tally[k]++;
		http_free(&r[i]);
	}
}

START_TEST(test_race_pin_guessing)
{
	enum { N = 12 };
	static char bodies[N][2048];
	struct merchant m;
	struct http_resp r[N];
	struct http_req q[N];
	char wrong[1024];
	const char *h[] = { JSON_CT, NULL, NULL }, *p[1];
	int i, waiting, tally[3] = { 0, 0, 0 };

	/* Four wrong guesses one by one: one is left before the lock. */
	new_merchant(&m, "1234", "10.00", true);
	h[1] = m.auth;
	p[0] = m.id;
	for (i = 0; i < 4; i++) {
		send_as(m.auth, body_of(sealed("5555", wrong), "1", NULL), NULL, &r[0]);
		assert_fail(&r[0], 400, "invalid PIN");
		http_free(&r[0]);
	}
	/*
	 * Then N at once. Holding the merchant's row for a moment lines them up in the workers,
	 * as a burst on a busy machine would; they must still get one guess between them.
	 */
	for (i = 0; i < N; i++)
		q[i] = (struct http_req){ "POST", SEND, h,
		    strcpy(bodies[i], body_of(sealed("5555", wrong), "1", NULL)) };
	waiting = http_parallel_held(db_hold("SELECT 1 FROM merchants WHERE id = $1::bigint FOR"
	    " UPDATE", 1, p), 2, N, q, r);
	ck_assert_int_ge(waiting, 0);
	tally_guesses(r, N, tally);
	ck_assert_msg(tally[2] == 0, "%d replies were neither 'invalid PIN' nor locked", tally[2]);
	ck_assert_msg(tally[0] <= 1, "%d guesses were tried after the 4th wrong PIN, not 1 (%d"
	    " requests were waiting together)", tally[0], waiting);
	ck_assert_str_eq(pin_failures(&m), "5");
	ck_assert_str_eq(db_value("SELECT pin_locked_until > now() FROM merchants WHERE id ="
	    " $1::bigint", m.id), "t");
	ck_assert_int_eq(balance_of(m.acct), 1000);
}
END_TEST

START_TEST(test_idempotency)
{
	struct merchant m;
	char body[2048], before[FOOTPRINT_LEN], buf[64];
	struct http_resp r1, r2, r3;

	new_merchant(&m, "1234", "100.00", true);
	snprintf(body, sizeof(body), "%s", body_of(pin_ok(), "7", "8.10"));
	send_as(m.auth, body, "Idempotency-Key: payout-2024-06-01", &r1);
	send_as(m.auth, body, "Idempotency-Key: payout-2024-06-01", &r2);
	ck_assert_msg(transfer_accepted(&r1, 2) != NULL, "%ld %s", r1.status, r1.body);
	ck_assert_int_eq(r2.status, 200);
	ck_assert_str_eq(r2.body, r1.body);
	ck_assert_ptr_null(http_header(&r1, "Idempotent-Replayed", buf, sizeof(buf)));
	ck_assert_str_eq(http_header(&r2, "Idempotent-Replayed", buf, sizeof(buf)), "true");
	/* The money moved once. */
	ck_assert_int_eq(balance_of(m.acct), 10000 - 1510);
	ck_assert_str_eq(db_value("SELECT count(*) FROM transfers WHERE merchant_id = $1::bigint",
	    m.id), "2");
	/* The same key with another body is refused and moves nothing. */
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	send_as(m.auth, body_of(pin_ok(), "7", "8.11"), "Idempotency-Key: payout-2024-06-01", &r3);
	ck_assert_msg(r3.status == 422 && strstr(r3.body, "Idempotency-Key") != NULL, "%ld %s",
	    r3.status, r3.body);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	http_free(&r1);
	http_free(&r2);
	http_free(&r3);
}
END_TEST

START_TEST(test_race_balance)
{
	enum { N = 200, K = 7 };
	struct merchant m;
	struct http_resp r[N];
	const char *h[] = { JSON_CT, NULL, NULL }, *id, *msg;
	char ids[K * 40 + 8] = "";
	static char bodies[N][2048];
	const char *each[N];
	long long v0 = balance_of(vendor[0]);
	int i, ok = 0, short_ = 0;

	/* Money for exactly K transfers of 10.00, and N asking at once: K win, none overdraws. */
	new_merchant(&m, "1234", "70.00", true);
	h[1] = m.auth;
	for (i = 0; i < N; i++)
		each[i] = strcpy(bodies[i], body_of(pin_ok(), "10.00", NULL));
	ck_assert_int_eq(http_parallel_each(N, SEND, h, each, r), 0);
	for (i = 0; i < N; i++) {
		if ((id = transfer_accepted(&r[i], 1)) != NULL) {
			if (ok < K)
				snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%s",
				    ok ? "," : "", id);
			ok++;
		} else if ((msg = refusal(&r[i])) != NULL &&
		    strstr(msg, "exceeds the available balance") != NULL)
			short_++;
		else
			ck_abort_msg("reply %d: %ld %s", i, r[i].status, r[i].body);
		http_free(&r[i]);
	}
	ck_assert_int_eq(ok, K);
	ck_assert_int_eq(short_, N - K);
	ck_assert_int_eq(balance_of(m.acct), 0);
	ck_assert_int_eq(balance_of(vendor[0]), v0 + K * 1000);
	/* Each winner's reply names its own stored transfer, each its own ledger transaction. */
	ck_assert_str_eq(db_valuev("SELECT count(*) || ' ' || count(DISTINCT ledger_transaction_id)"
	    " || ' ' || count(*) FILTER (WHERE id = ANY(string_to_array($1, ','))) FROM transfers"
	    " WHERE merchant_id = $2::bigint", 2, (const char *const[]){ ids, m.id }), "7 7 7");
	ck_assert_str_eq(pin_failures(&m), "0");
	assert_ledger_ok();
}
END_TEST

START_TEST(test_race_idempotency)
{
	enum { N = 50 };
	struct merchant m;
	struct http_resp r[N];
	const char *h[] = { JSON_CT, NULL, "Idempotency-Key: payout-race", NULL };
	long long v0 = balance_of(vendor[0]), v1 = balance_of(vendor[1]);
	char buf[64];
	int i, fresh = 0;

	/* One retry storm with one key: one transfer, and every reply is the same reply. */
	new_merchant(&m, "1234", "100.00", true);
	h[1] = m.auth;
	ck_assert_int_eq(http_parallel(N, SEND, h, body_of(pin_ok(), "1", "2.50"), r), 0);
	ck_assert_msg(transfer_accepted(&r[0], 2) != NULL, "reply 0: %ld %s", r[0].status,
	    r[0].body);
	for (i = 0; i < N; i++) {
		ck_assert_msg(r[i].status == 200, "reply %d: %ld %s", i, r[i].status, r[i].body);
		ck_assert_str_eq(r[i].body, r[0].body);
		fresh += http_header(&r[i], "Idempotent-Replayed", buf, sizeof(buf)) == NULL;
	}
	for (i = 0; i < N; i++)
		http_free(&r[i]);
	ck_assert_int_eq(fresh, 1);
	ck_assert_str_eq(db_value("SELECT (SELECT count(*) FROM ledger_transactions WHERE kind ="
	    " 'transfer' AND merchant_id = $1::bigint) || ' ' || (SELECT count(*) FROM transfers"
	    " WHERE merchant_id = $1::bigint)", m.id), "1 2");
	ck_assert_int_eq(balance_of(m.acct), 10000 - 350);
	ck_assert_int_eq(balance_of(vendor[0]), v0 + 100);
	ck_assert_int_eq(balance_of(vendor[1]), v1 + 250);
	assert_ledger_ok();
}
END_TEST

/*
 * Holds a transfer of merchant m under way: mp_transfer_send with a wrong PIN (nonce: 16 to
 * 64 characters, its own each time) in a transaction left open, which keeps what the
 * function locked; the merchant's row is its first lock. db_release ends it.
 */
static PGconn *
transfer_under_way(const struct merchant *m, const char *nonce)
{
	const char *p[3] = { m->id, nonce, vendor[0] };

	/* Any verdict but the wrong PIN's is cast to a number, which fails db_hold, naming it. */
	return db_hold("SELECT CASE outcome WHEN 'wrong_pin' THEN 1 ELSE outcome::int END FROM"
	    " mp_transfer_send($1::bigint, '\\x00', NULL, extract(epoch FROM now())::bigint, $2,"
	    " ARRAY[$3], ARRAY[100::bigint], 'UTC')", 3, p);
}

/*
 * A transfer under way keeps the merchant's other transfers, refunds and reversals waiting
 * (they run one at a time, in the lock order sql/009 gives), and nothing else: the
 * merchant's create-session and checkout payment, whose rows' foreign keys read the
 * merchant's row, go on at once. They waited for the transfer to commit while it locked
 * the row FOR UPDATE (sql/037).
 */
START_TEST(test_transfer_holds_up_no_sale)
{
	const char *h[] = { JSON_CT, NULL, NULL };
	char sid[37], card[256];
	struct merchant m;
	struct form_post pay;
	struct http_req reqs[2];
	struct http_resp out[2];
	PGconn *held;
	int i;

	new_merchant(&m, "1234", "100.00", true);
	h[1] = m.auth;
	open_session(m.auth, "5.00", "buyer-1", sid);
	form_post(sid, card_fields(TEST_CARD, card), &pay);
	reqs[0] = (struct http_req){ "POST", CREATE, h, GOOD_BODY };
	reqs[1] = pay.req;
	held = transfer_under_way(&m, "held-transfer-0001");
	ck_assert_int_eq(http_parallel_held(held, 1, 2, reqs, out), 0);
	ck_assert_msg(out[0].status == 200, "create-session: %ld %s", out[0].status, out[0].body);
	assert_paid(&out[1], sid);
	for (i = 0; i < 2; i++)
		http_free(&out[i]);

	/* A refund of the merchant's does wait for its transfer, then is made. */
	reqs[0] = (struct http_req){ "POST", refunds_path(sid), h, "{\"amount\":1.00}" };
	held = transfer_under_way(&m, "held-transfer-0002");
	ck_assert_int_ge(http_parallel_held(held, 1, 1, reqs, out), 1);
	ck_assert_msg(out[0].status == 200, "refund: %ld %s", out[0].status, out[0].body);
	http_free(&out[0]);
	assert_ledger_ok();
}
END_TEST

static void
setup(void)
{
	new_account(vendor[0], "--kind vendor");
	new_account(vendor[1], "--kind vendor");
	service_key_setup();
}

static Suite *
race_suite(void)
{
	Suite *s = suite_create("transfer-race");
	TCase *pin = tcase_create("pin");
	TCase *race = tcase_create("repeats and races");

	tcase_set_timeout(pin, 60);
	tcase_add_loop_test(pin, test_bad_pin, 0, NBAD_PIN);
	tcase_add_test(pin, test_pin_replay);
	tcase_add_test(pin, test_check_order);
	tcase_add_test(pin, test_pin_lockout);
	tcase_add_test(pin, test_race_pin_guessing);
	suite_add_tcase(s, pin);
	tcase_set_timeout(race, 180);
	tcase_add_test(race, test_idempotency);
	tcase_add_test(race, test_race_balance);
	tcase_add_test(race, test_race_idempotency);
	tcase_add_test(race, test_transfer_holds_up_no_sale);
	suite_add_tcase(s, race);
	return s;
}

int
main(void)
{
	return fixture_main(race_suite(), setup, service_key_free);
}
