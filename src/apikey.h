#ifndef MP_APIKEY_H
#define MP_APIKEY_H

#include <stddef.h>

#include "crypto.h"

/*
 * API keys as the workers check them and marketpayctl mints them: the environment's
 * prefix ("mp_test_") and random hex digits; only their SHA-256 is stored.
 */
#define APIKEY_MAX 128            /* longest key accepted at all */
#define APIKEY_RANDOM_BYTES 24    /* a new key: prefix + 48 hex digits */
#define APIKEY_DIGEST_LEN (2 + 2 * CRYPTO_SHA256_LEN)  /* "\\x<hex>", without the NUL */

/*
 * Makes a new API key for env_prefix ("mp_test_"): writes the key (NUL-terminated) into
 * key[APIKEY_MAX + 1] and its digest as apikey_digest does. Returns 0, or -1 when no random
 * bytes could be had.
 */
int apikey_new(const char *env_prefix, char *key, char *digest);

/*
 * Writes the bytea input form "\\x<hex>" of SHA-256(key) into digest[APIKEY_DIGEST_LEN + 1].
 * Returns 0, or -1 when OpenSSL failed.
 */
int apikey_digest(const char *key, size_t keylen, char *digest);

#endif
