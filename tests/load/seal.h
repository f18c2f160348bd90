#ifndef MPLOAD_SEAL_H
#define MPLOAD_SEAL_H

#include <stddef.h>

#include <openssl/evp.h>

/* The service's PIN key from its PEM (GET /api/v1/payment/pin-public-key); NULL when the PEM
 * is not a public key. Free with EVP_PKEY_free. */
EVP_PKEY *seal_load(const char *pem);

/*
 * base64(RSA-OAEP-SHA256(pin)) under k, MGF1 SHA-256, as merchants send it, into out
 * (outlen >= 1024 for keys up to 4096 bits). Randomised: a new value every call. Returns 0,
 * or -1 on an OpenSSL failure. Thread-safe (k is only read).
 */
int seal_pin(EVP_PKEY *k, const char *pin, char *out, size_t outlen);

#endif
