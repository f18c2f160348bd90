/* Unit tests for auth.c (header parsing, key making) and crypto.c (SHA-256, compare). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "auth.h"
#include "crypto.h"
#include "runner.h"

#define DIGEST_LEN (2 + 2 * CRYPTO_SHA256_LEN)  /* "\\x" + 64 hex digits */

static const struct {
	const char *header;
	const char *key;    /* NULL: rejected */
} parse_cases[] = {
	{ "API-KEY mp_test_abc", "mp_test_abc" },
	{ "api-key x", "x" },
	{ "Api-Key x", "x" },
	{ "API-KEY mp_live_0123456789abcdefABCDEF", "mp_live_0123456789abcdefABCDEF" },
	{ NULL, NULL },
	{ "", NULL },
	{ "Bearer x", NULL },
	{ "Basic eDp5", NULL },
	{ "API-KEY", NULL },
	{ "API-KEY ", NULL },
	{ "API-KEY  x", NULL },
	{ " API-KEY x", NULL },
	{ "API-KEY x y", NULL },
	{ "API-KEY x\t", NULL },
	{ "API-KEY x\n", NULL },
	{ "API-KEY x\r\n", NULL },
	{ "API-KEY\tx", NULL },
	{ "API-KEYx", NULL },
	{ "API-KEY: x", NULL },
	{ "API-KEY mp-test", NULL },
	{ "API-KEY mp_test_\xc3\xa9", NULL },
	{ "API-KEY a=b", NULL },
	{ "API-KEY x;y", NULL },
};

START_TEST(test_parse_table)
{
	const char *header = parse_cases[_i].header, *want = parse_cases[_i].key;
	const char *key = NULL;
	size_t keylen = 0;
	enum err e = auth_parse(header, &key, &keylen);

	if (want == NULL) {
		ck_assert_msg(e == ERR_AUTH, "\"%s\" accepted", header ? header : "(null)");
		ck_assert_ptr_null(key);
		return;
	}
	ck_assert_msg(e == ERR_OK, "\"%s\" rejected", header);
	/* The key points into the header, right after "API-KEY ". */
	ck_assert_ptr_eq(key, header + 8);
	ck_assert_uint_eq(keylen, strlen(want));
	ck_assert_mem_eq(key, want, keylen);
}
END_TEST

/* Keys up to APIKEY_MAX characters are read; one more is refused. */
START_TEST(test_parse_length)
{
	char header[8 + APIKEY_MAX + 2];
	const char *key;
	size_t keylen, n;

	for (n = APIKEY_MAX - 1; n <= APIKEY_MAX + 1; n++) {
		memcpy(header, "API-KEY ", 8);
		memset(header + 8, 'k', n);
		header[8 + n] = '\0';
		key = NULL;
		keylen = 0;
		if (n <= APIKEY_MAX) {
			ck_assert_msg(auth_parse(header, &key, &keylen) == ERR_OK, "%zu-char key", n);
			ck_assert_uint_eq(keylen, n);
		} else
			ck_assert_msg(auth_parse(header, &key, &keylen) == ERR_AUTH, "%zu-char key", n);
	}
}
END_TEST

static bool
all_hex(const char *s, size_t n)
{
	return strspn(s, "0123456789abcdef") >= n;
}

START_TEST(test_new_key)
{
	static const char *const prefixes[] = { "mp_test_", "mp_live_" };
	char key[2][APIKEY_MAX + 1], digest[2][DIGEST_LEN + 1], again[DIGEST_LEN + 1];
	char hex[2 * CRYPTO_SHA256_LEN + 1];
	unsigned char md[CRYPTO_SHA256_LEN];
	const char *parsed, *prefix;
	size_t plen, keylen, i, j;
	char header[APIKEY_MAX + 16];

	for (i = 0; i < NELEM(prefixes); i++) {
		prefix = prefixes[i];
		plen = strlen(prefix);
		for (j = 0; j < 2; j++) {
			memset(key[j], 'X', sizeof(key[j]));
			memset(digest[j], 'X', sizeof(digest[j]));
			ck_assert_int_eq(apikey_new(prefix, key[j], digest[j]), 0);
			ck_assert_uint_eq(strlen(key[j]), plen + 2 * APIKEY_RANDOM_BYTES);
			ck_assert_uint_eq(strlen(key[j]), plen + 48);
			ck_assert(strncmp(key[j], prefix, plen) == 0);
			ck_assert_msg(all_hex(key[j] + plen, 48), "not hex: %s", key[j]);
			ck_assert_uint_eq(strlen(digest[j]), 66);
			ck_assert(digest[j][0] == '\\' && digest[j][1] == 'x');
			ck_assert_msg(all_hex(digest[j] + 2, 64), "not hex: %s", digest[j]);

			/* The digest is SHA-256 of the whole key, prefix included. */
			ck_assert_int_eq(apikey_digest(key[j], strlen(key[j]), again), 0);
			ck_assert_str_eq(again, digest[j]);
			ck_assert_int_eq(crypto_sha256(key[j], strlen(key[j]), md), 0);
			crypto_hex(md, sizeof(md), hex);
			ck_assert_str_eq(digest[j] + 2, hex);

			/* A new key passes our own parser. */
			snprintf(header, sizeof(header), "API-KEY %s", key[j]);
			ck_assert_int_eq(auth_parse(header, &parsed, &keylen), ERR_OK);
			ck_assert_uint_eq(keylen, strlen(key[j]));
		}
		ck_assert_str_ne(key[0], key[1]);
		ck_assert_str_ne(digest[0], digest[1]);
	}
}
END_TEST

/* FIPS 180-2 test vectors. */
START_TEST(test_sha256_vectors)
{
	static const struct {
		const char *in;
		size_t repeat;
		const char *hex;
	} v[] = {
		{ "", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "a", 1000000,
		  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
	};
	unsigned char md[CRYPTO_SHA256_LEN];
	char hex[2 * CRYPTO_SHA256_LEN + 1], digest[DIGEST_LEN + 1];
	size_t i, len;
	char *buf;

	for (i = 0; i < NELEM(v); i++) {
		len = strlen(v[i].in) * v[i].repeat;
		buf = malloc(len + 1);
		ck_assert_ptr_nonnull(buf);
		if (v[i].repeat > 1)
			memset(buf, v[i].in[0], len);
		else
			memcpy(buf, v[i].in, len);
		ck_assert_int_eq(crypto_sha256(buf, len, md), 0);
		crypto_hex(md, sizeof(md), hex);
		ck_assert_str_eq(hex, v[i].hex);
		ck_assert_int_eq(apikey_digest(buf, len, digest), 0);
		ck_assert(digest[0] == '\\' && digest[1] == 'x');
		ck_assert_str_eq(digest + 2, v[i].hex);
		free(buf);
	}
}
END_TEST

START_TEST(test_hex)
{
	static const unsigned char bytes[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xff };
	char out[2 * sizeof(bytes) + 2];

	memset(out, 'X', sizeof(out));
	crypto_hex(bytes, sizeof(bytes), out);
	ck_assert_str_eq(out, "00017f80abff");
	crypto_hex(bytes, 0, out);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_equal)
{
	static const char a[] = "mp_test_0123456789", b[] = "mp_test_0123456789";
	const size_t n = sizeof(a) - 1;  /* the characters, without the NUL */
	char c[sizeof(a)];

	ck_assert_int_eq(crypto_equal(a, b, n), 1);
	ck_assert_int_eq(crypto_equal(a, "x", 0), 1);
	memcpy(c, a, sizeof(a));
	c[0] ^= 1;                   /* first byte differs */
	ck_assert_int_eq(crypto_equal(a, c, n), 0);
	memcpy(c, a, sizeof(a));
	c[n - 1] ^= 0x80;            /* last byte differs */
	ck_assert_int_eq(crypto_equal(a, c, n), 0);
	ck_assert_int_eq(crypto_equal(a, c, n - 1), 1);  /* ... and is outside len */
}
END_TEST

START_TEST(test_random)
{
	unsigned char x[32], y[32];

	ck_assert_int_eq(crypto_random(x, sizeof(x)), 0);
	ck_assert_int_eq(crypto_random(y, sizeof(y)), 0);
	ck_assert_int_eq(crypto_equal(x, y, sizeof(x)), 0);
}
END_TEST

static Suite *
auth_suite(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("auth");

	tcase_add_loop_test(tc, test_parse_table, 0, (int)NELEM(parse_cases));
	tcase_add_test(tc, test_parse_length);
	tcase_add_test(tc, test_new_key);
	suite_add_tcase(s, tc);
	tc = tcase_create("crypto");
	tcase_add_test(tc, test_sha256_vectors);
	tcase_add_test(tc, test_hex);
	tcase_add_test(tc, test_equal);
	tcase_add_test(tc, test_random);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(auth_suite());
}
