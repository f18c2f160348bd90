#include <string.h>

#include "crypto.h"
#include "pin.h"

bool
pin_format_ok(const char *pin)
{
	size_t n = pin == NULL ? 0 : strlen(pin);

	return n >= PIN_MIN && n <= PIN_MAX && strspn(pin, "0123456789") == n;
}

int
pin_digest(const char *pepper_file, const char *pin, char digest[67])
{
	unsigned char pepper[CRYPTO_KEY_LEN], md[CRYPTO_SHA256_LEN];
	int rc = -1;

	if (!pin_format_ok(pin) || crypto_load_key(pepper_file, pepper) != 0)
		return -1;
	if (crypto_hmac_sha256(pepper, sizeof(pepper), pin, strlen(pin), md) == 0) {
		digest[0] = '\\';
		digest[1] = 'x';
		crypto_hex(md, sizeof(md), digest + 2);
		rc = 0;
	}
	crypto_wipe(pepper, sizeof(pepper));
	return rc;
}
