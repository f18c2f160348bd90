#ifndef MP_CRYPTO_H
#define MP_CRYPTO_H

#include <stddef.h>

#define CRYPTO_SHA256_LEN 32

/* SHA-256 of len bytes at p into out[32]. Returns 0, or -1 when OpenSSL fails. */
int crypto_sha256(const void *p, size_t len, unsigned char out[CRYPTO_SHA256_LEN]);

/* Lower-case hex of len bytes into out, which holds 2 * len + 1 bytes (NUL-terminated). */
void crypto_hex(const unsigned char *p, size_t len, char *out);

/*
 * PostgreSQL's bytea input form of len bytes (a backslash, 'x', lower-case hex) into out,
 * which holds 2 * len + 3 bytes (NUL-terminated).
 */
void crypto_bytea_hex(const unsigned char *p, size_t len, char *out);

/* Fills out with len cryptographically random bytes. Returns 0, or -1 on failure. */
int crypto_random(unsigned char *out, size_t len);

/* Constant-time equality of two len-byte buffers: 1 when equal, else 0. */
int crypto_equal(const void *a, const void *b, size_t len);

/* Overwrites len bytes at p with zeros in a way the compiler keeps. */
void crypto_wipe(void *p, size_t len);

/* HMAC-SHA256 of len bytes at p under key (keylen bytes) into out[32]. 0, or -1. */
int crypto_hmac_sha256(const void *key, size_t keylen, const void *p, size_t len,
    unsigned char out[CRYPTO_SHA256_LEN]);

/*
 * Standard base64 (with padding) of len bytes. Returns a NUL-terminated string the caller
 * frees, or NULL on ENOMEM.
 */
char *crypto_base64(const unsigned char *p, size_t len);

/*
 * Decodes standard base64 text (padding required, no whitespace). Returns a buffer the
 * caller frees and its length in *outlen, or NULL when text is not base64 or on ENOMEM.
 */
unsigned char *crypto_unbase64(const char *text, size_t *outlen);

#define CRYPTO_KEY_LEN 32          /* a secrets key file holds exactly this many bytes */
#define CRYPTO_SEAL_OVERHEAD 28    /* 12-byte nonce + 16-byte tag */

/*
 * Reads a key file of exactly CRYPTO_KEY_LEN bytes into key. Returns 0, or -1 when the file
 * cannot be read or has another size.
 */
int crypto_load_key(const char *path, unsigned char key[CRYPTO_KEY_LEN]);

/*
 * AES-256-GCM: seals len bytes into out (len + CRYPTO_SEAL_OVERHEAD bytes: nonce, ciphertext,
 * tag) under key. Returns 0, or -1 on failure.
 */
int crypto_seal(const unsigned char key[CRYPTO_KEY_LEN], const unsigned char *p, size_t len,
    unsigned char *out);

/*
 * Opens what crypto_seal made (len bytes) into out (len - CRYPTO_SEAL_OVERHEAD bytes).
 * Returns 0, or -1 when it was tampered with, sealed under another key, or too short.
 */
int crypto_open(const unsigned char key[CRYPTO_KEY_LEN], const unsigned char *p, size_t len,
    unsigned char *out);

/* An RSA key pair for transfer PIN encryption; opaque outside crypto.c. */
struct crypto_pkey;

/* The smallest RSA key loaded or made: 2048 bits (112-bit security, NIST SP 800-57). */
#define CRYPTO_PKEY_MIN_BITS 2048

/*
 * Loads a PEM private key from path. NULL when it cannot be read or parsed, is not RSA or
 * has fewer than CRYPTO_PKEY_MIN_BITS bits.
 */
struct crypto_pkey *crypto_pkey_load(const char *path);

/* The key's size in bits. */
int crypto_pkey_bits(const struct crypto_pkey *k);

/* Frees k (NULL is fine). */
void crypto_pkey_free(struct crypto_pkey *k);

/* The public half as PEM ("-----BEGIN PUBLIC KEY-----..."); the caller frees. NULL on error. */
char *crypto_pkey_public_pem(const struct crypto_pkey *k);

/*
 * RSA-OAEP (SHA-256, MGF1 SHA-256) decryption of len bytes into out (outlen bytes at most).
 * Returns the plaintext length, or -1 when it does not decrypt under k.
 */
long crypto_pkey_decrypt(const struct crypto_pkey *k, const unsigned char *in, size_t len,
    unsigned char *out, size_t outlen);

/*
 * Makes a new RSA key of bits (at least CRYPTO_PKEY_MIN_BITS) and writes its private PEM to
 * path (mode 0640). 0 or -1.
 */
int crypto_pkey_generate(const char *path, int bits);

#endif
