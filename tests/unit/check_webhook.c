/*
 * Unit tests for the webhook modules: Standard Webhooks signatures, secrets, the schedule,
 * the merchants with a backlog.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "config.h"
#include "crypto.h"
#include "webhook_backlog.h"
#include "webhook_schedule.h"
#include "webhook_sign.h"
#include "runner.h"

/* The example of the Standard Webhooks specification and its reference libraries. */
#define VEC_SECRET "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define VEC_ID "msg_p5jXN8AQM9LWM0D4loKWxJek"
#define VEC_TS 1614265330LL
#define VEC_BODY "{\"test\": 2432232314}"
#define VEC_SIG "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

START_TEST(test_sign_vector)
{
	char sig[WEBHOOK_SIGNATURE_MAX];

	ck_assert_int_eq(webhook_sign(VEC_SECRET, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY), sig),
	    0);
	ck_assert_str_eq(sig, VEC_SIG);
}
END_TEST

/* Each part of the signed content counts: change any one and the signature changes. */
START_TEST(test_sign_covers_everything)
{
	char sig[WEBHOOK_SIGNATURE_MAX];

	ck_assert_int_eq(webhook_sign(VEC_SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJeK", VEC_TS, VEC_BODY,
	    strlen(VEC_BODY), sig), 0);
	ck_assert_str_ne(sig, VEC_SIG);
	ck_assert_int_eq(webhook_sign(VEC_SECRET, VEC_ID, VEC_TS + 1, VEC_BODY, strlen(VEC_BODY),
	    sig), 0);
	ck_assert_str_ne(sig, VEC_SIG);
	ck_assert_int_eq(webhook_sign(VEC_SECRET, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY) - 1,
	    sig), 0);
	ck_assert_str_ne(sig, VEC_SIG);
	ck_assert_int_eq(webhook_sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSx", VEC_ID, VEC_TS,
	    VEC_BODY, strlen(VEC_BODY), sig), 0);
	ck_assert_str_ne(sig, VEC_SIG);
}
END_TEST

/* The body is signed byte for byte: NUL bytes and multibyte UTF-8 included. */
START_TEST(test_sign_binary_body)
{
	static const char body[] = "{\"a\":\"\xc3\xa9\"}\0tail";
	char one[WEBHOOK_SIGNATURE_MAX], two[WEBHOOK_SIGNATURE_MAX];

	ck_assert_int_eq(webhook_sign(VEC_SECRET, VEC_ID, VEC_TS, body, sizeof(body) - 1, one), 0);
	ck_assert_int_eq(webhook_sign(VEC_SECRET, VEC_ID, VEC_TS, body, strlen(body), two), 0);
	ck_assert_str_ne(one, two);
	ck_assert_int_eq(strlen(one), 3 + 44);
}
END_TEST

static const char *const bad_secrets[] = {
	"",
	"whsec_",
	"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",          /* no prefix */
	"whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS",     /* not a multiple of 4 */
	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa!w",    /* not base64 */
	"whsec_MfKQ9r8GKYqr TwjUPD8ILPZIo2LaLaSw",
	"whsec_MfKQ9r8GKYqrTwjUPD8I",                /* 15 bytes: too short a key */
	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw=",
};

START_TEST(test_sign_bad_secret)
{
	char sig[WEBHOOK_SIGNATURE_MAX];

	ck_assert_int_eq(webhook_sign(bad_secrets[_i], VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY),
	    sig), -1);
}
END_TEST

/* A second secret (the key bytes 0 to 23) and the vector's signature under it (Python's hmac). */
#define VEC_SECRET2 "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX"
#define VEC_SIG2 "v1,/485aUtxlie+TIScVpHggMfqOB4so2KWb7+Gf727B44="

/*
 * Signed with two secrets (a rotation window): both signatures, the first secret's first,
 * one space between; with one secret, what webhook_sign makes.
 */
START_TEST(test_sign_all)
{
	const char *const both[] = { VEC_SECRET2, VEC_SECRET }, *const one[] = { VEC_SECRET };
	const char *want = VEC_SIG2 " " VEC_SIG;
	char out[WEBHOOK_SIGNATURES_MAX], other[WEBHOOK_SIGNATURE_MAX];

	ck_assert_int_eq(webhook_sign(VEC_SECRET2, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY),
	    other), 0);
	ck_assert_str_eq(other, VEC_SIG2);
	ck_assert_int_eq(webhook_sign_all(both, 2, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY), out,
	    sizeof(out)), 0);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(strlen(out), 2 * (3 + 44) + 1);
	ck_assert_int_eq(webhook_sign_all(one, 1, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY), out,
	    sizeof(out)), 0);
	ck_assert_str_eq(out, VEC_SIG);
	/* The exact room is enough; one byte less is refused, and leaves "". */
	ck_assert_int_eq(webhook_sign_all(both, 2, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY), out,
	    strlen(want) + 1), 0);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(webhook_sign_all(both, 2, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY), out,
	    strlen(want)), -1);
	ck_assert_str_eq(out, "");
}
END_TEST

/* What webhook_sign_all refuses: no secret, too many, a NULL one, a malformed one. */
START_TEST(test_sign_all_refuses)
{
	const char *const three[] = { VEC_SECRET, VEC_SECRET2, VEC_SECRET };
	const char *const holes[] = { VEC_SECRET, NULL };
	const char *const bad[] = { VEC_SECRET, "whsec_MfKQ9r8GKYqrTwjUPD8I" };
	char out[WEBHOOK_SIGNATURES_MAX];

	ck_assert_int_eq(webhook_sign_all(three, 0, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY),
	    out, sizeof(out)), -1);
	ck_assert_int_eq(webhook_sign_all(three, 3, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY),
	    out, sizeof(out)), -1);
	ck_assert_int_eq(webhook_sign_all(holes, 2, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY),
	    out, sizeof(out)), -1);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(webhook_sign_all(bad, 2, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY), out,
	    sizeof(out)), -1);
	ck_assert_str_eq(out, "");
	/* The positive control: the first of them alone signs. */
	ck_assert_int_eq(webhook_sign_all(bad, 1, VEC_ID, VEC_TS, VEC_BODY, strlen(VEC_BODY), out,
	    sizeof(out)), 0);
	ck_assert_str_eq(out, VEC_SIG);
}
END_TEST

START_TEST(test_secret_new)
{
	char a[WEBHOOK_SECRET_MAX], b[WEBHOOK_SECRET_MAX];
	unsigned char *raw;
	size_t len = 0;

	ck_assert_int_eq(webhook_sign_secret_new(a), 0);
	ck_assert_int_eq(webhook_sign_secret_new(b), 0);
	ck_assert_str_ne(a, b);
	/* whsec_ + base64 of 24 bytes: 32 characters, no padding. */
	ck_assert_int_eq(strlen(a), 6 + 32);
	ck_assert(strncmp(a, "whsec_", 6) == 0);
	raw = crypto_unbase64(a + 6, &len);
	ck_assert_ptr_nonnull(raw);
	ck_assert_int_eq(len, WEBHOOK_SECRET_BYTES);
	free(raw);
}
END_TEST

START_TEST(test_seal_open)
{
	unsigned char key[CRYPTO_KEY_LEN], other[CRYPTO_KEY_LEN], sealed[WEBHOOK_SEALED_MAX];
	char out[WEBHOOK_SECRET_MAX];
	size_t len = 0;

	memset(key, 7, sizeof(key));
	memset(other, 8, sizeof(other));
	ck_assert_int_eq(webhook_sign_seal(key, VEC_SECRET, sealed, &len), 0);
	ck_assert_int_eq(len, strlen(VEC_SECRET) + CRYPTO_SEAL_OVERHEAD);
	/* Not stored in the clear. */
	ck_assert_ptr_null(memmem(sealed, len, "MfKQ9r8G", 8));
	ck_assert_int_eq(webhook_sign_open(key, sealed, len, out), 0);
	ck_assert_str_eq(out, VEC_SECRET);
	ck_assert_int_eq(webhook_sign_open(other, sealed, len, out), -1);
	ck_assert_int_eq(webhook_sign_open(key, sealed, len - 1, out), -1);
	ck_assert_int_eq(webhook_sign_open(key, sealed, CRYPTO_SEAL_OVERHEAD, out), -1);
	sealed[CRYPTO_SEAL_OVERHEAD / 2] ^= 1;
	ck_assert_int_eq(webhook_sign_open(key, sealed, len, out), -1);
	/* Only well-formed secrets are sealed. */
	ck_assert_int_eq(webhook_sign_seal(key, "whsec_short", sealed, &len), -1);
	ck_assert_int_eq(webhook_sign_seal(key, "plain text", sealed, &len), -1);
}
END_TEST

/* A new secret sealed as bytea hex: "\\x" and hex that opens to that secret. */
START_TEST(test_secret_sealed)
{
	unsigned char key[CRYPTO_KEY_LEN], sealed[WEBHOOK_SEALED_MAX];
	char secret[WEBHOOK_SECRET_MAX], hex[WEBHOOK_SEALED_HEX_MAX], out[WEBHOOK_SECRET_MAX];
	size_t len, i;
	unsigned int byte;

	memset(key, 7, sizeof(key));
	ck_assert_int_eq(webhook_sign_secret_sealed(key, secret, hex), 0);
	ck_assert(strncmp(secret, "whsec_", 6) == 0);
	ck_assert(strncmp(hex, "\\x", 2) == 0);
	len = (strlen(hex) - 2) / 2;
	ck_assert_int_eq(len, strlen(secret) + CRYPTO_SEAL_OVERHEAD);
	ck_assert_ptr_null(strstr(hex, secret + 6));
	for (i = 0; i < len; i++) {
		ck_assert_int_eq(sscanf(hex + 2 + 2 * i, "%2x", &byte), 1);
		sealed[i] = (unsigned char)byte;
	}
	ck_assert_int_eq(webhook_sign_open(key, sealed, len, out), 0);
	ck_assert_str_eq(out, secret);
}
END_TEST

struct sched {
	const char *text;
	size_t n;
	long delay[4];   /* the first ones */
};

static const struct sched good_schedules[] = {
	{ "5", 1, { 5 } },
	{ "5,300,1800,7200,18000,36000,36000", 7, { 5, 300, 1800, 7200 } },
	{ "1,1,1", 3, { 1, 1, 1 } },
	{ " 5 , 300 ", 2, { 5, 300 } },
	{ "5,\t300", 2, { 5, 300 } },
	{ "007", 1, { 7 } },
	{ "2592000", 1, { 2592000 } },
	{ "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", 32, { 1, 1, 1, 1 } },
};

START_TEST(test_schedule_good)
{
	const struct sched *t = &good_schedules[_i];
	struct webhook_schedule s;
	char err[256] = "";
	size_t i;

	ck_assert_msg(webhook_schedule_parse(t->text, &s, err, sizeof(err)) == 0, "%s: %s",
	    t->text, err);
	ck_assert_int_eq(s.n, t->n);
	for (i = 0; i < t->n && i < NELEM(t->delay); i++)
		ck_assert_int_eq(s.delay[i], t->delay[i]);
}
END_TEST

static const char *const bad_schedules[] = {
	"", " ", ",", "5,", ",5", "5,,6", "5;6", "5 6", "a", "5a", "-1", "+5", "0", "5,0",
	"1.5", "1e3", "0x10", "2592001", "99999999999999999999999",
	"1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1",
	"5\n", "\xc2\xa0" "5",
};

START_TEST(test_schedule_bad)
{
	struct webhook_schedule s;
	char err[256] = "";

	ck_assert_msg(webhook_schedule_parse(bad_schedules[_i], &s, err, sizeof(err)) == -1,
	    "accepted \"%s\"", bad_schedules[_i]);
	ck_assert_ptr_nonnull(strstr(err, "webhook_retry_schedule must be"));
	ck_assert_int_eq(s.n, 0);
}
END_TEST

/* The attempt after which the event is dead: the first plus one per schedule entry. */
START_TEST(test_schedule_next)
{
	struct webhook_schedule s;
	char err[256];

	ck_assert_int_eq(webhook_schedule_parse("5,300,1800", &s, err, sizeof(err)), 0);
	ck_assert_int_eq(webhook_schedule_next(&s, 1), 5);
	ck_assert_int_eq(webhook_schedule_next(&s, 2), 300);
	ck_assert_int_eq(webhook_schedule_next(&s, 3), 1800);
	ck_assert_int_eq(webhook_schedule_next(&s, 4), -1);
	ck_assert_int_eq(webhook_schedule_next(&s, 5), -1);
	ck_assert_int_eq(webhook_schedule_next(&s, 0), -1);
}
END_TEST

/* The default of the configuration parses, and gives the design's retries. */
START_TEST(test_schedule_default)
{
	struct webhook_schedule s;
	char err[256] = "";
	size_t i;

	for (i = 0; i < config_nkeys; i++)
		if (strcmp(config_keys[i].name, "webhook_retry_schedule") == 0)
			break;
	ck_assert_int_lt(i, config_nkeys);
	ck_assert_msg(webhook_schedule_parse(config_keys[i].def, &s, err, sizeof(err)) == 0, "%s",
	    err);
	ck_assert_int_eq(s.n, 7);
	ck_assert_int_eq(webhook_schedule_next(&s, 1), 5);
	ck_assert_int_eq(webhook_schedule_next(&s, 7), 36000);
	ck_assert_int_eq(webhook_schedule_next(&s, 8), -1);
}
END_TEST

/* A claim that takes an endpoint's whole in-flight limit found a backlog; one below it not. */
START_TEST(test_backlog_whole_limit)
{
	struct webhook_backlog b = { .n = 0 };
	const long long m[] = { 7, 8, 7, 9, 7 };
	bool from[5];

	webhook_backlog_claimed(&b, m, 5, 3, from);
	ck_assert(from[0] && from[2] && from[4]);
	ck_assert(!from[1] && !from[3]);
	webhook_backlog_claimed(&b, m, 5, 4, from);
	ck_assert(!from[0] && !from[1] && !from[2] && !from[3] && !from[4]);
	ck_assert(!webhook_backlog_pending(&b));
}
END_TEST

/*
 * Once its backlogged deliveries are recorded, a merchant's next claim goes at once and what
 * it gets is from the backlog, however few; the merchants recorded are forgotten at the
 * claim, so a claim that gets none of theirs ends the haste.
 */
START_TEST(test_backlog_recorded)
{
	struct webhook_backlog b = { .n = 0 };
	const long long m[] = { 8, 7 };
	bool from[2];

	webhook_backlog_recorded(&b, 7);
	webhook_backlog_recorded(&b, 7);
	ck_assert(webhook_backlog_pending(&b));
	ck_assert_uint_eq(b.n, 1);
	webhook_backlog_claimed(&b, m, 2, 10, from);
	ck_assert(!from[0] && from[1]);
	ck_assert(!webhook_backlog_pending(&b));
	webhook_backlog_claimed(&b, m, 2, 10, from);
	ck_assert(!from[0] && !from[1]);
	webhook_backlog_recorded(&b, 7);
	webhook_backlog_claimed(&b, NULL, 0, 10, from);
	ck_assert(!webhook_backlog_pending(&b));
}
END_TEST

/* Past the table's size a merchant is not remembered, and nothing else breaks. */
START_TEST(test_backlog_full)
{
	struct webhook_backlog b = { .n = 0 };
	const long long last = WEBHOOK_BACKLOG_MAX + 1;
	bool from[1];
	long long i;

	for (i = 1; i <= WEBHOOK_BACKLOG_MAX + 1; i++)
		webhook_backlog_recorded(&b, i);
	ck_assert_uint_eq(b.n, WEBHOOK_BACKLOG_MAX);
	webhook_backlog_claimed(&b, &last, 1, 10, from);
	ck_assert(!from[0]);
}
END_TEST

static Suite *
webhook_suite(void)
{
	Suite *s = suite_create("webhook");
	TCase *sign = tcase_create("sign");
	TCase *sched = tcase_create("schedule");
	TCase *backlog = tcase_create("backlog");

	tcase_add_test(sign, test_sign_vector);
	tcase_add_test(sign, test_sign_covers_everything);
	tcase_add_test(sign, test_sign_binary_body);
	tcase_add_loop_test(sign, test_sign_bad_secret, 0, NELEM(bad_secrets));
	tcase_add_test(sign, test_sign_all);
	tcase_add_test(sign, test_sign_all_refuses);
	tcase_add_test(sign, test_secret_new);
	tcase_add_test(sign, test_seal_open);
	tcase_add_test(sign, test_secret_sealed);
	suite_add_tcase(s, sign);
	tcase_add_loop_test(sched, test_schedule_good, 0, NELEM(good_schedules));
	tcase_add_loop_test(sched, test_schedule_bad, 0, NELEM(bad_schedules));
	tcase_add_test(sched, test_schedule_next);
	tcase_add_test(sched, test_schedule_default);
	suite_add_tcase(s, sched);
	tcase_add_test(backlog, test_backlog_whole_limit);
	tcase_add_test(backlog, test_backlog_recorded);
	tcase_add_test(backlog, test_backlog_full);
	suite_add_tcase(s, backlog);
	return s;
}

int
main(void)
{
	return run_suite(webhook_suite());
}
