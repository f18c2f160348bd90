/*
 * libFuzzer target: an Authorization header value as auth_request reads it,
 * auth_parse then the environment prefix and apikey_digest. The input is the value of the
 * FastCGI parameter HTTP_AUTHORIZATION, so it ends at its first NUL. A key that parses
 * must be what "API-KEY <key>" promises: one space after the scheme, at most APIKEY_MAX
 * letters, digits and '_', pointing into the header.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char chars[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
	char *header = fuzz_str(data, size), digest[2 + 64 + 1];
	const char *key = NULL, *prefix = config_key_prefix(&fuzz_app.cfg);
	size_t keylen = 0, i;

	if (auth_parse(header, &key, &keylen) != ERR_OK) {
		free(header);
		return 0;
	}
	FUZZ_ASSERT(strncasecmp(header, "API-KEY ", 8) == 0);
	FUZZ_ASSERT(key == header + 8);
	FUZZ_ASSERT(keylen >= 1 && keylen <= APIKEY_MAX && keylen == strlen(key));
	for (i = 0; i < keylen; i++)
		FUZZ_ASSERT(key[i] != '\0' && strchr(chars, key[i]) != NULL);
	/* What auth_request does next, short of the database. */
	(void)strncmp(key, prefix, strlen(prefix));
	FUZZ_ASSERT(apikey_digest(key, keylen, digest) == 0);
	FUZZ_ASSERT(digest[0] == '\\' && digest[1] == 'x' && strlen(digest) == 66);
	FUZZ_ASSERT(strspn(digest + 2, "0123456789abcdef") == 64);
	free(header);
	return 0;
}
