#ifndef MP_AUTH_H
#define MP_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"
#include "err.h"
#include "req.h"

#define AUTH_KEY_MAX 128        /* longest key accepted at all */
#define AUTH_KEY_RANDOM_BYTES 24 /* a new key: prefix + 48 hex digits */

/*
 * Parses an Authorization header of the form "API-KEY <key>" (scheme case-insensitive, one
 * space, a key of letters, digits and '_'). Returns ERR_OK with *key and *keylen pointing into
 * header, or ERR_AUTH.
 */
enum err auth_parse(const char *header, const char **key, size_t *keylen);

/*
 * Authenticates req by its API key: the key must parse, carry this environment's prefix and
 * match an active key of an active merchant. On success sets req->merchant_id and
 * req->merchant_currency and returns true; otherwise sets a 401 {detail} (or 500/503)
 * response and returns false. The reply never tells which check failed.
 */
bool auth_request(struct app *app, struct req *req, const char *detail);

/*
 * Makes a new API key for env_prefix ("mp_test_"): writes the key (NUL-terminated) into
 * key[AUTH_KEY_MAX + 1] and its SHA-256 as "\\x<hex>" (bytea input) into digest[67].
 * Returns 0, or -1 when no random bytes could be had.
 */
int auth_new_key(const char *env_prefix, char *key, char *digest);

/* Writes the bytea input form "\\x<hex>" of SHA-256(key) into digest[67]; 0 or -1. */
int auth_digest(const char *key, size_t keylen, char *digest);

#endif
