/* The only file that includes OpenSSL headers. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "crypto.h"

int
crypto_sha256(const void *p, size_t len, unsigned char out[CRYPTO_SHA256_LEN])
{
	unsigned int outlen = 0;

	if (EVP_Digest(p, len, out, &outlen, EVP_sha256(), NULL) != 1 ||
	    outlen != CRYPTO_SHA256_LEN)
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
