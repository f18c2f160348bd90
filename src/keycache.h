#ifndef MP_KEYCACHE_H
#define MP_KEYCACHE_H

#include <stdbool.h>
#include <time.h>

#include "apikey.h"
#include "db.h"

/*
 * The merchants of the API keys a worker has seen, so that authenticating a request costs
 * no round trip to the database. An entry holds a key's SHA-256 digest (never the key), its
 * merchant and currency. Every entry is forgotten when the database notifies channel
 * marketpay_keys (sql/013_key_cache.sql: a key revoked, a merchant disabled, ...), when the
 * connection was made anew (notifications may have been missed), and after KEYCACHE_TTL_S
 * seconds whatever happens. Unknown or refused keys are never kept.
 */

#define KEYCACHE_SIZE 64
#define KEYCACHE_TTL_S 60

struct keycache_entry {
	char digest[APIKEY_DIGEST_LEN + 1];   /* "" = free */
	long long merchant_id;
	char currency[8];
	time_t at;                            /* CLOCK_MONOTONIC seconds when kept */
};

struct keycache {
	struct keycache_entry e[KEYCACHE_SIZE];
	unsigned long generation;             /* db_generation when last synced */
	unsigned next;                        /* the entry the next miss replaces */
};

/* The LISTEN every connection of the worker makes (db_set_on_connect's hook). */
int keycache_listen(struct db *db, void *arg);

/*
 * Brings the cache up to date with the database after db_ready: reads the notifications
 * that arrived, and forgets everything on one or on a new connection.
 */
void keycache_sync(struct keycache *kc, struct db *db);

/* The entry of digest, fresh, or NULL. */
const struct keycache_entry *keycache_get(const struct keycache *kc, const char *digest);

/* Keeps digest's merchant and currency (replacing the oldest-placed entry when full). */
void keycache_put(struct keycache *kc, const char *digest, long long merchant_id,
    const char *currency);

#endif
