/* Standard Webhooks signing secrets: made, sealed at rest, opened, and used to sign. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook_sign.h"

#define PREFIX_LEN (sizeof(WEBHOOK_SECRET_PREFIX) - 1)
/* Standard Webhooks asks for keys of 24 to 64 bytes. */
#define KEY_MIN 24
#define KEY_MAX 64

/*
 * The HMAC key of a secret, the bytes the base64 after "whsec_" stands for. Returns a buffer
 * the caller wipes and frees, or NULL when the secret is malformed or on ENOMEM.
 */
static unsigned char *
secret_key(const char *secret, size_t *keylen)
{
	unsigned char *key;

	if (strncmp(secret, WEBHOOK_SECRET_PREFIX, PREFIX_LEN) != 0 ||
	    strlen(secret) >= WEBHOOK_SECRET_MAX ||
	    (key = crypto_unbase64(secret + PREFIX_LEN, keylen)) == NULL)
		return NULL;
	if (*keylen < KEY_MIN || *keylen > KEY_MAX) {
		crypto_wipe(key, *keylen);
		free(key);
		return NULL;
	}
	return key;
}

/* True when secret is a well-formed whsec_ secret. */
static int
secret_ok(const char *secret)
{
	unsigned char *key;
	size_t keylen;

	if ((key = secret_key(secret, &keylen)) == NULL)
		return 0;
	crypto_wipe(key, keylen);
	free(key);
	return 1;
}

int
webhook_sign_secret_new(char out[WEBHOOK_SECRET_MAX])
{
	unsigned char raw[WEBHOOK_SECRET_BYTES];
	char *text = NULL;
	int rc = -1;

	if (crypto_random(raw, sizeof(raw)) != 0 ||
	    (text = crypto_base64(raw, sizeof(raw))) == NULL)
		goto out;
	snprintf(out, WEBHOOK_SECRET_MAX, "%s%s", WEBHOOK_SECRET_PREFIX, text);
	rc = 0;
out:
	crypto_wipe(raw, sizeof(raw));
	if (text != NULL)
		crypto_wipe(text, strlen(text));
	free(text);
	return rc;
}

int
webhook_sign_seal(const unsigned char key[CRYPTO_KEY_LEN], const char *secret,
    unsigned char out[WEBHOOK_SEALED_MAX], size_t *outlen)
{
	size_t len = strlen(secret);

	if (!secret_ok(secret) || crypto_seal(key, (const unsigned char *)secret, len, out) != 0)
		return -1;
	*outlen = len + CRYPTO_SEAL_OVERHEAD;
	return 0;
}

int
webhook_sign_secret_sealed(const unsigned char key[CRYPTO_KEY_LEN],
    char secret[WEBHOOK_SECRET_MAX], char hex[WEBHOOK_SEALED_HEX_MAX])
{
	unsigned char sealed[WEBHOOK_SEALED_MAX];
	size_t len;

	if (webhook_sign_secret_new(secret) != 0 || webhook_sign_seal(key, secret, sealed, &len) != 0)
		return -1;
	crypto_bytea_hex(sealed, len, hex);
	return 0;
}

int
webhook_sign_open(const unsigned char key[CRYPTO_KEY_LEN], const unsigned char *sealed,
    size_t len, char out[WEBHOOK_SECRET_MAX])
{
	size_t plain;

	/* The plaintext and its NUL must fit in out. */
	if (len <= CRYPTO_SEAL_OVERHEAD || len - CRYPTO_SEAL_OVERHEAD >= WEBHOOK_SECRET_MAX)
		return -1;
	plain = len - CRYPTO_SEAL_OVERHEAD;
	if (crypto_open(key, sealed, len, (unsigned char *)out) == 0) {
		out[plain] = '\0';
		if (strlen(out) == plain && secret_ok(out))
			return 0;
	}
	crypto_wipe(out, WEBHOOK_SECRET_MAX);
	return -1;
}

/*
 * The signed content of one attempt, id "." timestamp "." body (the body byte for byte), into
 * a buffer the caller frees (its length into *msglen). NULL on ENOMEM.
 */
static char *
signed_content(const char *id, long long timestamp, const char *body, size_t len,
    size_t *msglen)
{
	char stamp[24], *msg;
	size_t idlen = strlen(id), stamplen;

	stamplen = (size_t)snprintf(stamp, sizeof(stamp), "%lld", timestamp);
	*msglen = idlen + 1 + stamplen + 1 + len;
	if ((msg = malloc(*msglen)) == NULL)
		return NULL;
	memcpy(msg, id, idlen);
	msg[idlen] = '.';
	memcpy(msg + idlen + 1, stamp, stamplen);
	msg[idlen + 1 + stamplen] = '.';
	memcpy(msg + idlen + stamplen + 2, body, len);
	return msg;
}

/* "v1,<base64 HMAC>" of msg under secret into out; 0, or -1 (malformed secret, ENOMEM). */
static int
sign_content(const char *secret, const char *msg, size_t msglen,
    char out[WEBHOOK_SIGNATURE_MAX])
{
	unsigned char *key = NULL, mac[CRYPTO_SHA256_LEN];
	char *text = NULL;
	size_t keylen = 0;
	int rc = -1;

	if ((key = secret_key(secret, &keylen)) == NULL ||
	    crypto_hmac_sha256(key, keylen, msg, msglen, mac) != 0 ||
	    (text = crypto_base64(mac, sizeof(mac))) == NULL)
		goto out;
	snprintf(out, WEBHOOK_SIGNATURE_MAX, "v1,%s", text);
	rc = 0;
out:
	if (key != NULL)
		crypto_wipe(key, keylen);
	free(key);
	free(text);
	return rc;
}

int
webhook_sign(const char *secret, const char *id, long long timestamp, const char *body,
    size_t len, char out[WEBHOOK_SIGNATURE_MAX])
{
	return webhook_sign_all(&secret, 1, id, timestamp, body, len, out, WEBHOOK_SIGNATURE_MAX);
}

int
webhook_sign_all(const char *const secrets[], size_t n, const char *id, long long timestamp,
    const char *body, size_t len, char *out, size_t outlen)
{
	char sig[WEBHOOK_SIGNATURE_MAX], *msg = NULL;
	size_t msglen = 0, used = 0, i, siglen;
	int rc = -1;

	if (outlen > 0)
		out[0] = '\0';
	if (n < 1 || n > WEBHOOK_SIGN_SECRETS_MAX ||
	    (msg = signed_content(id, timestamp, body, len, &msglen)) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if (secrets[i] == NULL || sign_content(secrets[i], msg, msglen, sig) != 0)
			goto out;
		/* One space between signatures, and the NUL: all of it must fit. */
		siglen = strlen(sig);
		if (used + (i > 0) + siglen >= outlen)
			goto out;
		if (i > 0)
			out[used++] = ' ';
		memcpy(out + used, sig, siglen + 1);
		used += siglen;
	}
	rc = 0;
out:
	if (rc != 0 && outlen > 0)
		out[0] = '\0';
	free(msg);
	return rc;
}
