#ifndef MP_WEBHOOK_SIGN_H
#define MP_WEBHOOK_SIGN_H

#include <stddef.h>

#include "crypto.h"

/*
 * Webhook signing secrets and signatures, as the Standard Webhooks scheme has them: a secret
 * is "whsec_" + base64 of random key bytes, and a signature is "v1," + base64 of
 * HMAC-SHA256(key, id "." timestamp "." body).
 */

#define WEBHOOK_SECRET_PREFIX "whsec_"
#define WEBHOOK_SECRET_BYTES 24     /* random key bytes of a new secret */
#define WEBHOOK_SECRET_MAX 128      /* buffer for a secret string, NUL included */
#define WEBHOOK_SEALED_MAX (WEBHOOK_SECRET_MAX + CRYPTO_SEAL_OVERHEAD)
#define WEBHOOK_SIGNATURE_MAX 64    /* buffer for "v1," + 44 base64 characters + NUL */
#define WEBHOOK_SIGN_SECRETS_MAX 2  /* secrets one attempt is signed with: new, previous */
/* Buffer for the header value of WEBHOOK_SIGN_SECRETS_MAX signatures, spaces and NUL. */
#define WEBHOOK_SIGNATURES_MAX (WEBHOOK_SIGN_SECRETS_MAX * WEBHOOK_SIGNATURE_MAX)

/*
 * Makes a new secret of WEBHOOK_SECRET_BYTES random bytes into out (NUL-terminated).
 * Returns 0, or -1 when no random bytes are available.
 */
int webhook_sign_secret_new(char out[WEBHOOK_SECRET_MAX]);

/*
 * Seals secret under key into out (WEBHOOK_SEALED_MAX bytes) and sets *outlen. Returns 0, or
 * -1 when secret is not a well-formed whsec_ secret or the cipher fails.
 */
int webhook_sign_seal(const unsigned char key[CRYPTO_KEY_LEN], const char *secret,
    unsigned char out[WEBHOOK_SEALED_MAX], size_t *outlen);

/* Buffer for a sealed secret as PostgreSQL bytea hex: "\\x", two digits a byte, NUL. */
#define WEBHOOK_SEALED_HEX_MAX (2 + 2 * WEBHOOK_SEALED_MAX + 1)

/*
 * Makes a new secret into secret and, sealed under key, as bytea hex into hex: what is
 * stored for a new or rotated secret. Returns 0, or -1 when no random bytes are available or
 * the cipher fails (the caller wipes secret either way).
 */
int webhook_sign_secret_sealed(const unsigned char key[CRYPTO_KEY_LEN],
    char secret[WEBHOOK_SECRET_MAX], char hex[WEBHOOK_SEALED_HEX_MAX]);

/*
 * Opens len bytes that webhook_sign_seal made into out (NUL-terminated). Returns 0, or -1 when
 * they were sealed under another key, were tampered with, or do not hold a whsec_ secret;
 * out is then wiped.
 */
int webhook_sign_open(const unsigned char key[CRYPTO_KEY_LEN], const unsigned char *sealed,
    size_t len, char out[WEBHOOK_SECRET_MAX]);

/*
 * The webhook-signature header value for one attempt into out: "v1,<base64>". body is len
 * bytes, signed exactly as sent. Returns 0, or -1 when secret is malformed or on ENOMEM.
 */
int webhook_sign(const char *secret, const char *id, long long timestamp, const char *body,
    size_t len, char out[WEBHOOK_SIGNATURE_MAX]);

/*
 * The webhook-signature header value for one attempt signed with each of the n secrets (1 to
 * WEBHOOK_SIGN_SECRETS_MAX, none NULL), in their order, into out (outlen bytes; to be sure
 * of room, WEBHOOK_SIGNATURES_MAX): "v1,<base64>" pairs separated by one space, as Standard
 * Webhooks allows. During a rotation window the caller passes the current secret first,
 * then the previous one. Returns 0, or -1 (out then "") when n is out of range, a secret is
 * malformed, out is too small, or on ENOMEM.
 */
int webhook_sign_all(const char *const secrets[], size_t n, const char *id,
    long long timestamp, const char *body, size_t len, char *out, size_t outlen);

#endif
