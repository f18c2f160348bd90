#include <string.h>

#include "apikey.h"

int
apikey_digest(const char *key, size_t keylen, char *digest)
{
	unsigned char md[CRYPTO_SHA256_LEN];

	if (crypto_sha256(key, keylen, md) != 0)
		return -1;
	crypto_bytea_hex(md, sizeof(md), digest);
	return 0;
}

int
apikey_new(const char *env_prefix, char *key, char *digest)
{
	unsigned char raw[APIKEY_RANDOM_BYTES];
	size_t n = strlen(env_prefix);

	if (crypto_random(raw, sizeof(raw)) != 0)
		return -1;
	memcpy(key, env_prefix, n);
	crypto_hex(raw, sizeof(raw), key + n);
	return apikey_digest(key, strlen(key), digest);
}
