#ifndef MP_CRYPTO_H
#define MP_CRYPTO_H

#include <stddef.h>

#define CRYPTO_SHA256_LEN 32

/* SHA-256 of len bytes at p into out[32]. Returns 0, or -1 when OpenSSL fails. */
int crypto_sha256(const void *p, size_t len, unsigned char out[CRYPTO_SHA256_LEN]);

/* Lower-case hex of len bytes into out, which holds 2 * len + 1 bytes (NUL-terminated). */
void crypto_hex(const unsigned char *p, size_t len, char *out);

/* Fills out with len cryptographically random bytes. Returns 0, or -1 on failure. */
int crypto_random(unsigned char *out, size_t len);

/* Constant-time equality of two len-byte buffers: 1 when equal, else 0. */
int crypto_equal(const void *a, const void *b, size_t len);

#endif
