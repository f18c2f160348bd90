/* The transfer PIN as merchants send it: RSA-OAEP (SHA-256) to the service's key, base64. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include "seal.h"

EVP_PKEY *
seal_load(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *k;

	if (b == NULL)
		return NULL;
	k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
	BIO_free(b);
	return k;
}

int
seal_raw(EVP_PKEY *k, const void *plain, size_t len, int padding, const EVP_MD *md,
    char *out, size_t outlen)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(k, NULL);
	unsigned char ct[1024];
	size_t n = sizeof(ct);
	int ok;

	ok = c != NULL && EVP_PKEY_encrypt_init(c) > 0 &&
	    EVP_PKEY_CTX_set_rsa_padding(c, padding) > 0 &&
	    (padding != RSA_PKCS1_OAEP_PADDING || (EVP_PKEY_CTX_set_rsa_oaep_md(c, md) > 0 &&
	    EVP_PKEY_CTX_set_rsa_mgf1_md(c, md) > 0)) &&
	    EVP_PKEY_encrypt(c, NULL, &n, plain, len) > 0 &&
	    n <= sizeof(ct) && (n + 2) / 3 * 4 + 1 <= outlen &&
	    EVP_PKEY_encrypt(c, ct, &n, plain, len) > 0;
	EVP_PKEY_CTX_free(c);
	if (!ok)
		return -1;
	EVP_EncodeBlock((unsigned char *)out, ct, (int)n);
	return 0;
}

int
seal_pin_at(EVP_PKEY *k, const char *pin, long long when, const char *nonce, char *out,
    size_t outlen)
{
	char plain[128];
	int n = snprintf(plain, sizeof(plain), "%s:%lld:%s", pin, when, nonce);

	if (n < 0 || (size_t)n >= sizeof(plain))
		return -1;
	return seal_raw(k, plain, (size_t)n, RSA_PKCS1_OAEP_PADDING, EVP_sha256(), out, outlen);
}

int
seal_pin(EVP_PKEY *k, const char *pin, char *out, size_t outlen)
{
	unsigned char r[16];
	char nonce[33];
	int i;

	if (RAND_bytes(r, sizeof(r)) != 1)
		return -1;
	for (i = 0; i < 16; i++)
		snprintf(nonce + 2 * i, 3, "%02x", r[i]);
	return seal_pin_at(k, pin, (long long)time(NULL), nonce, out, outlen);
}
