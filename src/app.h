#ifndef MP_APP_H
#define MP_APP_H

#include <stdbool.h>

#include "config.h"
#include "crypto.h"
#include "db.h"
#include "worker_sql.h"

/* What lives across requests in one worker: the config, keys and the database connection. */
struct app {
	struct config cfg;
	struct db *db;
	bool have_secret;                       /* secrets_key_file was read */
	unsigned char secret[CRYPTO_KEY_LEN];   /* keys the checkout form's CSRF tokens */
	struct crypto_pkey *pin_key;            /* decrypts transfer PINs; NULL: not configured */
	char *pin_public_pem;                   /* its public half, for merchants */
	int reads;                              /* fd 0 is the pool's reads socket */
	int other_sock;                         /* the pool's other socket, for metrics; -1 */
};

#endif
