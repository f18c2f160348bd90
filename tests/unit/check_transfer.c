/* Unit tests of the transfer body rules and of PIN decryption (RSA-OAEP-SHA256). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "crypto.h"
#include "json.h"
#include "money.h"
#include "transfer.h"
#include "runner.h"

#define V1 "{\"account_number\":\"VE1234567890\",\"amount\":"
#define V2 "{\"account_number\":\"VE0987654321\",\"amount\":"

struct body_case {
	const char *body;
	const char *message;   /* NULL: valid */
	const char *accounts;  /* the array text for valid ones */
	const char *amounts;
	int64_t total;
};

static const struct body_case bodies[] = {
	{ "{\"pin\":\"x\",\"vendors\":[" V1 "12.00}," V2 "24}]}", NULL,
	  "{VE1234567890,VE0987654321}", "{1200,2400}", 3600 },
	{ "{\"pin\":\"x\",\"vendors\":[" V1 "0.01}]}", NULL, "{VE1234567890}", "{1}", 1 },
	{ "{\"vendors\":[" V1 "1}]}", "pin is required", NULL, NULL, 0 },
	{ "{\"pin\":\"\",\"vendors\":[" V1 "1}]}", "pin must not be empty", NULL, NULL, 0 },
	{ "{\"pin\":\"x\"}", "vendors is required", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":{}}", "vendors must be an array", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[]}", "vendors must not be empty", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[1]}", "vendors[0] must be an object", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[{\"amount\":1}]}", "vendors[0].account_number is required",
	  NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[{\"account_number\":5,\"amount\":1}]}",
	  "vendors[0].account_number must be a string", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[{\"account_number\":\"\",\"amount\":1}]}",
	  "vendors[0].account_number must not be empty", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[{\"account_number\":\"VE1}\",\"amount\":1}]}",
	  "vendors[0].account_number: no such account", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[{\"account_number\":\"VE1234567890\"}]}",
	  "vendors[0].amount is required", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[" V1 "\"1\"}]}", "vendors[0].amount must be a number",
	  NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[" V1 "0}]}", "vendors[0].amount must be greater than 0",
	  NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[" V1 "-3}]}", "vendors[0].amount must not be negative",
	  NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[" V1 "1.001}]}",
	  "vendors[0].amount must have at most two decimal places", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[" V1 "1e2}]}",
	  "vendors[0].amount must be a plain decimal number such as 12.50", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[" V1 "99999999999999999999}]}",
	  "vendors[0].amount is above the maximum amount", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[" V1 "999999999.99}," V2 "0.01}]}",
	  "the total of vendors[].amount is above the maximum amount", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[" V1 "1}," V2 "1}," V1 "2}]}",
	  "vendors[2].account_number repeats vendors[0].account_number", NULL, NULL, 0 },
	{ "{\"pin\":\"x\",\"vendors\":[" V1 "1}],\"currency\":\"USD\"}",
	  "currency is not a known field", NULL, NULL, 0 },
};

START_TEST(test_bodies)
{
	const struct body_case *c = &bodies[_i];
	struct json_object *root;
	struct transfer_in in;
	char msg[256] = "";
	bool ok;

	root = json_parse_strict(c->body, strlen(c->body), msg, sizeof(msg));
	ck_assert_msg(root != NULL, "%s", msg);
	ok = transfer_validate(root, 16, MONEY_MAX_DEFAULT, &in, msg, sizeof(msg));
	if (c->message == NULL) {
		ck_assert_msg(ok, "%s: %s", c->body, msg);
		ck_assert_str_eq(in.accounts, c->accounts);
		ck_assert_str_eq(in.amounts, c->amounts);
		ck_assert_int_eq(in.total, c->total);
		free(in.accounts);
		free(in.amounts);
	} else {
		ck_assert_msg(!ok, "accepted %s", c->body);
		ck_assert_str_eq(msg, c->message);
	}
	json_object_put(root);
}
END_TEST

START_TEST(test_max_vendors)
{
	char body[8192] = "{\"pin\":\"x\",\"vendors\":[", msg[256];
	struct json_object *root;
	struct transfer_in in;
	int i;

	for (i = 0; i < 17; i++)
		snprintf(body + strlen(body), sizeof(body) - strlen(body),
		    "%s{\"account_number\":\"VE%010d\",\"amount\":1}", i ? "," : "", i);
	strcat(body, "]}");
	root = json_parse_strict(body, strlen(body), msg, sizeof(msg));
	ck_assert_ptr_nonnull(root);
	ck_assert(!transfer_validate(root, 16, MONEY_MAX_DEFAULT, &in, msg, sizeof(msg)));
	ck_assert_str_eq(msg, "vendors must have at most 16 entries");
	ck_assert(transfer_validate(root, 17, MONEY_MAX_DEFAULT, &in, msg, sizeof(msg)));
	ck_assert_int_eq(in.total, 1700);
	free(in.accounts);
	free(in.amounts);
	json_object_put(root);
}
END_TEST

static char keyfile[64], otherfile[64];

/* RSA-OAEP-SHA256 of text to the public half of the key in path, as a merchant does it. */
static size_t
encrypt_to(const char *path, const char *text, unsigned char *out, size_t outlen)
{
	FILE *fp = fopen(path, "r");
	EVP_PKEY *pkey = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(pkey, NULL);
	size_t n = outlen;

	fclose(fp);
	ck_assert(ctx != NULL && EVP_PKEY_encrypt_init(ctx) == 1);
	ck_assert(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1);
	ck_assert(EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) == 1);
	ck_assert(EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) == 1);
	ck_assert(EVP_PKEY_encrypt(ctx, out, &n, (const unsigned char *)text, strlen(text)) == 1);
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(pkey);
	return n;
}

START_TEST(test_pin_decrypt)
{
	struct crypto_pkey *k = crypto_pkey_load(keyfile);
	unsigned char ct[512], plain[64];
	size_t n;
	char *pem;

	ck_assert_ptr_nonnull(k);
	pem = crypto_pkey_public_pem(k);
	ck_assert_ptr_nonnull(pem);
	ck_assert(strncmp(pem, "-----BEGIN PUBLIC KEY-----\n", 27) == 0);
	free(pem);
	n = encrypt_to(keyfile, "2468", ct, sizeof(ct));
	ck_assert_int_eq(crypto_pkey_decrypt(k, ct, n, plain, sizeof(plain)), 4);
	ck_assert(memcmp(plain, "2468", 4) == 0);
	/* Too small an output buffer, one flipped bit, a short input, another key: refused. */
	ck_assert_int_eq(crypto_pkey_decrypt(k, ct, n, plain, 3), -1);
	ct[10] ^= 1;
	ck_assert_int_eq(crypto_pkey_decrypt(k, ct, n, plain, sizeof(plain)), -1);
	ck_assert_int_eq(crypto_pkey_decrypt(k, ct, n - 1, plain, sizeof(plain)), -1);
	n = encrypt_to(otherfile, "2468", ct, sizeof(ct));
	ck_assert_int_eq(crypto_pkey_decrypt(k, ct, n, plain, sizeof(plain)), -1);
	crypto_pkey_free(k);
	ck_assert_ptr_null(crypto_pkey_load("/nonexistent/key.pem"));
}
END_TEST

/* A key below 2048 bits is neither made nor loaded: the workers would refuse transfers. */
START_TEST(test_pin_key_size)
{
	EVP_PKEY *weak = EVP_RSA_gen(1024);
	struct crypto_pkey *k;
	FILE *fp;

	ck_assert_int_eq(crypto_pkey_generate(otherfile, 1024), -1);
	ck_assert_ptr_nonnull(weak);
	ck_assert_ptr_nonnull(fp = fopen(otherfile, "w"));
	ck_assert_int_eq(PEM_write_PrivateKey(fp, weak, NULL, NULL, 0, NULL, NULL), 1);
	fclose(fp);
	EVP_PKEY_free(weak);
	ck_assert_ptr_null(crypto_pkey_load(otherfile));
	ck_assert_int_eq(crypto_pkey_generate(otherfile, 3072), 0);
	ck_assert_ptr_nonnull(k = crypto_pkey_load(otherfile));
	ck_assert_int_eq(crypto_pkey_bits(k), 3072);
	crypto_pkey_free(k);
	ck_assert_ptr_nonnull(k = crypto_pkey_load(keyfile));
	ck_assert_int_eq(crypto_pkey_bits(k), 2048);
	crypto_pkey_free(k);
}
END_TEST

START_TEST(test_base64)
{
	static const char *const bad[] = { "", "A", "AAA", "AA=A", "A===", "AA AA", "AAA\n",
	    "****" };
	unsigned char *p;
	size_t n, i;
	char *s;

	p = crypto_unbase64("aGVsbG8=", &n);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(n, 5);
	ck_assert(memcmp(p, "hello", 5) == 0);
	free(p);
	s = crypto_base64((const unsigned char *)"hello", 5);
	ck_assert_str_eq(s, "aGVsbG8=");
	free(s);
	for (i = 0; i < NELEM(bad); i++)
		ck_assert_msg(crypto_unbase64(bad[i], &n) == NULL, "accepted \"%s\"", bad[i]);
}
END_TEST

static void
make_keys(void)
{
	snprintf(keyfile, sizeof(keyfile), "/tmp/mp-pinkey-%ld.pem", (long)getpid());
	snprintf(otherfile, sizeof(otherfile), "/tmp/mp-pinkey-%ld-b.pem", (long)getpid());
	ck_assert_int_eq(crypto_pkey_generate(keyfile, 2048), 0);
	ck_assert_int_eq(crypto_pkey_generate(otherfile, 2048), 0);
}

static void
remove_keys(void)
{
	unlink(keyfile);
	unlink(otherfile);
}

int
main(void)
{
	Suite *s = suite_create("transfer");
	TCase *t = tcase_create("body"), *p = tcase_create("pin");

	tcase_add_loop_test(t, test_bodies, 0, NELEM(bodies));
	tcase_add_test(t, test_max_vendors);
	suite_add_tcase(s, t);
	tcase_add_unchecked_fixture(p, make_keys, remove_keys);
	tcase_set_timeout(p, 30);
	tcase_add_test(p, test_pin_decrypt);
	tcase_add_test(p, test_base64);
	tcase_add_test(p, test_pin_key_size);
	suite_add_tcase(s, p);
	return run_suite(s);
}
