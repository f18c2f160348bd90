#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "pin.h"

bool
pin_format_ok(const char *pin)
{
	size_t n = pin == NULL ? 0 : strlen(pin);

	return n >= PIN_MIN && n <= PIN_MAX && strspn(pin, "0123456789") == n;
}

static int
hmac_text(const unsigned char *pepper, const char *msg, size_t len, char out[PIN_DIGEST_LEN])
{
	unsigned char md[CRYPTO_SHA256_LEN];

	if (crypto_hmac_sha256(pepper, CRYPTO_KEY_LEN, msg, len, md) != 0)
		return -1;
	crypto_bytea_hex(md, sizeof(md), out);
	return 0;
}

int
pin_digest(const char *pepper_file, const char *owner, const char *pin,
    char digest[PIN_DIGEST_LEN], char legacy[PIN_DIGEST_LEN])
{
	unsigned char pepper[CRYPTO_KEY_LEN];
	char msg[256];
	int n, rc = -1;

	digest[0] = '\0';
	if (legacy != NULL)
		legacy[0] = '\0';
	if (!pin_format_ok(pin) || owner == NULL || crypto_load_key(pepper_file, pepper) != 0)
		return -1;
	/* A NUL separates owner and PIN: neither can carry one, so no two pairs collide. */
	n = snprintf(msg, sizeof(msg), "marketpay-pin-v2:%s", owner);
	if (n > 0 && (size_t)n + 1 + PIN_MAX < sizeof(msg)) {
		memcpy(msg + n + 1, pin, strlen(pin));
		rc = hmac_text(pepper, msg, (size_t)n + 1 + strlen(pin), digest);
		if (rc == 0 && legacy != NULL)
			rc = hmac_text(pepper, pin, strlen(pin), legacy);
	}
	if (rc != 0) {
		digest[0] = '\0';
		if (legacy != NULL)
			legacy[0] = '\0';
	}
	crypto_wipe(msg, sizeof(msg));
	crypto_wipe(pepper, sizeof(pepper));
	return rc;
}

/* Digits only, between min and max of them, up to the next ':' (or the end); -1 if not. */
static long
digits(const unsigned char *p, size_t len, size_t min, size_t max)
{
	size_t i = 0;

	while (i < len && p[i] >= '0' && p[i] <= '9')
		i++;
	return i >= min && i <= max && (i == len || p[i] == ':') ? (long)i : -1;
}

bool
pin_parse_sealed(const unsigned char *p, size_t len, struct pin_sealed *out)
{
	long n, t;
	size_t i;
	char num[16];

	memset(out, 0, sizeof(*out));
	if ((n = digits(p, len, PIN_MIN, PIN_MAX)) < 0 || (size_t)n == len)
		return false;
	memcpy(out->pin, p, (size_t)n);
	p += n + 1;
	len -= (size_t)n + 1;
	if ((t = digits(p, len, 1, 12)) < 0 || (size_t)t == len)
		goto bad;
	memcpy(num, p, (size_t)t);
	num[t] = '\0';
	out->issued_at = strtoll(num, NULL, 10);
	p += t + 1;
	len -= (size_t)t + 1;
	if (len < PIN_NONCE_MIN || len > PIN_NONCE_MAX)
		goto bad;
	for (i = 0; i < len; i++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", p[i])
		    == NULL || p[i] == '\0')
			goto bad;
	memcpy(out->nonce, p, len);
	return true;
bad:
	crypto_wipe(out, sizeof(*out));
	return false;
}
