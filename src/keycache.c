/* The worker's cache of API key digests: see keycache.h for when it forgets. */
#include <stdio.h>
#include <string.h>

#include "keycache.h"

static time_t
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

int
keycache_listen(struct db *db, void *arg)
{
	(void)arg;
	return db_script(db, "LISTEN marketpay_keys") == ERR_OK ? 0 : -1;
}

static void
forget(struct keycache *kc)
{
	memset(kc->e, 0, sizeof(kc->e));
	kc->next = 0;
}

void
keycache_sync(struct keycache *kc, struct db *db)
{
	/* Both first: the notifications must be read whatever the generation says. */
	int n = db_notifications(db);
	unsigned long g = db_generation(db);

	if (n != 0 || g != kc->generation)
		forget(kc);
	kc->generation = g;
}

const struct keycache_entry *
keycache_get(const struct keycache *kc, const char *digest)
{
	time_t now = now_s();
	int i;

	for (i = 0; i < KEYCACHE_SIZE; i++)
		if (kc->e[i].digest[0] != '\0' && strcmp(kc->e[i].digest, digest) == 0)
			return now - kc->e[i].at < KEYCACHE_TTL_S ? &kc->e[i] : NULL;
	return NULL;
}

void
keycache_put(struct keycache *kc, const char *digest, long long merchant_id,
    const char *currency)
{
	struct keycache_entry *e = NULL;
	int i;

	if (strlen(digest) != APIKEY_DIGEST_LEN || strlen(currency) >= sizeof(e->currency))
		return;
	for (i = 0; i < KEYCACHE_SIZE && e == NULL; i++)
		if (strcmp(kc->e[i].digest, digest) == 0)
			e = &kc->e[i];
	if (e == NULL) {
		e = &kc->e[kc->next];
		kc->next = (kc->next + 1) % KEYCACHE_SIZE;
	}
	memcpy(e->digest, digest, APIKEY_DIGEST_LEN + 1);
	e->merchant_id = merchant_id;
	snprintf(e->currency, sizeof(e->currency), "%s", currency);
	e->at = now_s();
}
