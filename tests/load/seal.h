#ifndef MPLOAD_SEAL_H
#define MPLOAD_SEAL_H

#include <stddef.h>

#include <openssl/evp.h>

/* The service's PIN key from its PEM (GET /api/v1/payment/pin-public-key); NULL when the PEM
 * is not a public key. Free with EVP_PKEY_free. */
EVP_PKEY *seal_load(const char *pem);

/*
 * base64 of len bytes of plain RSA-encrypted under k with padding (RSA_PKCS1_OAEP_PADDING
 * with md for OAEP and MGF1, or RSA_PKCS1_PADDING with md NULL) into out (outlen >= 1024 for
 * keys up to 4096 bits). Returns 0, or -1 on an OpenSSL failure. Thread-safe.
 */
int seal_raw(EVP_PKEY *k, const void *plain, size_t len, int padding, const EVP_MD *md,
    char *out, size_t outlen);

/*
 * What merchants send for a transfer PIN: base64(RSA-OAEP-SHA256("PIN:UNIX_TIME:NONCE"))
 * under k, MGF1 SHA-256, made now with a fresh random nonce, into out. Returns 0 or -1.
 */
int seal_pin(EVP_PKEY *k, const char *pin, char *out, size_t outlen);

/* The same with the time and nonce given (stale and replayed PINs in tests). */
int seal_pin_at(EVP_PKEY *k, const char *pin, long long when, const char *nonce, char *out,
    size_t outlen);

#endif
