/* The transfer PIN as merchants send it: RSA-OAEP (SHA-256) to the service's key, base64. */
#include <string.h>

#include <openssl/pem.h>
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
seal_pin(EVP_PKEY *k, const char *pin, char *out, size_t outlen)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(k, NULL);
	unsigned char ct[1024];
	size_t n = sizeof(ct);
	int ok;

	ok = c != NULL && EVP_PKEY_encrypt_init(c) > 0 &&
	    EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) > 0 &&
	    EVP_PKEY_CTX_set_rsa_oaep_md(c, EVP_sha256()) > 0 &&
	    EVP_PKEY_CTX_set_rsa_mgf1_md(c, EVP_sha256()) > 0 &&
	    EVP_PKEY_encrypt(c, NULL, &n, (const unsigned char *)pin, strlen(pin)) > 0 &&
	    n <= sizeof(ct) && (n + 2) / 3 * 4 + 1 <= outlen &&
	    EVP_PKEY_encrypt(c, ct, &n, (const unsigned char *)pin, strlen(pin)) > 0;
	EVP_PKEY_CTX_free(c);
	if (!ok)
		return -1;
	EVP_EncodeBlock((unsigned char *)out, ct, (int)n);
	return 0;
}
