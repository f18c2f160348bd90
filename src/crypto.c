/* The only file that includes OpenSSL headers. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/rand.h>

#include "crypto.h"

int
crypto_sha256(const void *p, size_t len, unsigned char out[CRYPTO_SHA256_LEN])
{
	/*
	 * Fetched once, and one context kept: OpenSSL 3 would otherwise look the algorithm up,
	 * and make and free a context, on every call (once per request, for the API key). What
	 * the context keeps between calls is the last digest: its final step wipes the block
	 * of input it held, as freeing the context would.
	 */
	static EVP_MD *sha256;
	static EVP_MD_CTX *ctx;
	unsigned int outlen = 0;

	if (sha256 == NULL && (sha256 = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL)
		return -1;
	if (ctx == NULL && (ctx = EVP_MD_CTX_new()) == NULL)
		return -1;
	if (EVP_DigestInit_ex2(ctx, sha256, NULL) != 1 || EVP_DigestUpdate(ctx, p, len) != 1 ||
	    EVP_DigestFinal_ex(ctx, out, &outlen) != 1 || outlen != CRYPTO_SHA256_LEN)
		return -1;
	return 0;
}

void
crypto_hex(const unsigned char *p, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * len] = '\0';
}

void
crypto_bytea_hex(const unsigned char *p, size_t len, char *out)
{
	out[0] = '\\';
	out[1] = 'x';
	crypto_hex(p, len, out + 2);
}

int
crypto_random(unsigned char *out, size_t len)
{
	return RAND_bytes(out, (int)len) == 1 ? 0 : -1;
}

int
crypto_equal(const void *a, const void *b, size_t len)
{
	return CRYPTO_memcmp(a, b, len) == 0;
}

void
crypto_wipe(void *p, size_t len)
{
	OPENSSL_cleanse(p, len);
}

int
crypto_hmac_sha256(const void *key, size_t keylen, const void *p, size_t len,
    unsigned char out[CRYPTO_SHA256_LEN])
{
	unsigned int outlen = 0;

	if (HMAC(EVP_sha256(), key, (int)keylen, p, len, out, &outlen) == NULL ||
	    outlen != CRYPTO_SHA256_LEN)
		return -1;
	return 0;
}

char *
crypto_base64(const unsigned char *p, size_t len)
{
	char *out = malloc(4 * ((len + 2) / 3) + 1);

	if (out == NULL)
		return NULL;
	EVP_EncodeBlock((unsigned char *)out, p, (int)len);
	return out;
}

unsigned char *
crypto_unbase64(const char *text, size_t *outlen)
{
	size_t len = strlen(text), pad = 0;
	unsigned char *out;
	int n;

	if (len == 0 || len % 4 != 0 ||
	    strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != len)
		return NULL;
	if (text[len - 1] == '=')
		pad++;
	if (text[len - 2] == '=')
		pad++;
	/* '=' only as the last one or two characters. */
	if (memchr(text, '=', len - pad) != NULL || (out = malloc(len / 4 * 3 + 1)) == NULL)
		return NULL;
	n = EVP_DecodeBlock(out, (const unsigned char *)text, (int)len);
	if (n < 0 || (size_t)n < pad) {
		free(out);
		return NULL;
	}
	*outlen = (size_t)n - pad;
	return out;
}

int
crypto_load_key(const char *path, unsigned char key[CRYPTO_KEY_LEN])
{
	FILE *fp = fopen(path, "rb");
	unsigned char extra;
	size_t n;

	if (fp == NULL)
		return -1;
	n = fread(key, 1, CRYPTO_KEY_LEN, fp);
	if (n != CRYPTO_KEY_LEN || fread(&extra, 1, 1, fp) != 0) {
		fclose(fp);
		OPENSSL_cleanse(key, CRYPTO_KEY_LEN);
		return -1;
	}
	fclose(fp);
	return 0;
}

int
crypto_seal(const unsigned char key[CRYPTO_KEY_LEN], const unsigned char *p, size_t len,
    unsigned char *out)
{
	EVP_CIPHER_CTX *ctx = NULL;
	int n = 0, rc = -1;

	if (RAND_bytes(out, 12) != 1 || (ctx = EVP_CIPHER_CTX_new()) == NULL)
		goto out;
	if (EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, out) != 1 ||
	    EVP_EncryptUpdate(ctx, out + 12, &n, p, (int)len) != 1 ||
	    EVP_EncryptFinal_ex(ctx, out + 12 + n, &n) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, out + 12 + len) != 1)
		goto out;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(ctx);
	return rc;
}

int
crypto_open(const unsigned char key[CRYPTO_KEY_LEN], const unsigned char *p, size_t len,
    unsigned char *out)
{
	EVP_CIPHER_CTX *ctx = NULL;
	size_t clen;
	int n = 0, rc = -1;

	if (len < CRYPTO_SEAL_OVERHEAD || (ctx = EVP_CIPHER_CTX_new()) == NULL)
		goto out;
	clen = len - CRYPTO_SEAL_OVERHEAD;
	if (EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, p) != 1 ||
	    EVP_DecryptUpdate(ctx, out, &n, p + 12, (int)clen) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, (void *)(p + 12 + clen)) != 1 ||
	    EVP_DecryptFinal_ex(ctx, out + n, &n) != 1)
		goto out;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(ctx);
	return rc;
}

struct crypto_pkey {
	EVP_PKEY *pkey;
};

struct crypto_pkey *
crypto_pkey_load(const char *path)
{
	struct crypto_pkey *k = NULL;
	FILE *fp = fopen(path, "r");
	EVP_PKEY *pkey;

	if (fp == NULL)
		return NULL;
	pkey = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	fclose(fp);
	if (pkey == NULL || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA ||
	    EVP_PKEY_get_bits(pkey) < CRYPTO_PKEY_MIN_BITS || (k = malloc(sizeof(*k))) == NULL) {
		EVP_PKEY_free(pkey);
		return NULL;
	}
	k->pkey = pkey;
	return k;
}

int
crypto_pkey_bits(const struct crypto_pkey *k)
{
	return EVP_PKEY_get_bits(k->pkey);
}

void
crypto_pkey_free(struct crypto_pkey *k)
{
	if (k == NULL)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

char *
crypto_pkey_public_pem(const struct crypto_pkey *k)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *out = NULL;
	long n;

	if (bio == NULL)
		return NULL;
	if (PEM_write_bio_PUBKEY(bio, k->pkey) == 1 && (n = BIO_get_mem_data(bio, &data)) > 0 &&
	    (out = malloc((size_t)n + 1)) != NULL) {
		memcpy(out, data, (size_t)n);
		out[n] = '\0';
	}
	BIO_free(bio);
	return out;
}

long
crypto_pkey_decrypt(const struct crypto_pkey *k, const unsigned char *in, size_t len,
    unsigned char *out, size_t outlen)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(k->pkey, NULL);
	unsigned char *buf = NULL;
	size_t n = 0;
	long rc = -1;

	if (ctx == NULL || EVP_PKEY_decrypt_init(ctx) != 1 ||
	    EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) != 1 ||
	    EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) != 1 ||
	    EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) != 1 ||
	    EVP_PKEY_decrypt(ctx, NULL, &n, in, len) != 1 || (buf = malloc(n)) == NULL ||
	    EVP_PKEY_decrypt(ctx, buf, &n, in, len) != 1 || n > outlen)
		goto out;
	memcpy(out, buf, n);
	rc = (long)n;
out:
	if (buf != NULL)
		OPENSSL_clear_free(buf, n);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

int
crypto_pkey_generate(const char *path, int bits)
{
	EVP_PKEY *pkey;
	FILE *fp = NULL;
	int fd, rc = -1;

	if (bits < CRYPTO_PKEY_MIN_BITS || (pkey = EVP_RSA_gen((unsigned int)bits)) == NULL)
		return -1;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640)) < 0 ||
	    (fp = fdopen(fd, "w")) == NULL) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (PEM_write_PrivateKey(fp, pkey, NULL, NULL, 0, NULL, NULL) == 1)
		rc = 0;
	if (fclose(fp) != 0)
		rc = -1;
out:
	EVP_PKEY_free(pkey);
	return rc;
}
