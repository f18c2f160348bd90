#ifndef MPLOAD_OPS_H
#define MPLOAD_OPS_H

#include <signal.h>

#include <openssl/evp.h>

#include "client.h"
#include "stats.h"

enum ops_method {
	OPS_WALLET,   /* the customer's wallet: account number and PIN */
	OPS_CARD,     /* the sandbox test card 4242 4242 4242 4242 */
	OPS_BOTH,     /* each payment picks one at random */
	OPS__MAX
};

/* What every thread shares; set up before the threads start, only read afterwards. */
struct ops_config {
	char auth[256];            /* "Authorization: API-KEY <key>" */
	const char *run;           /* run id: part of every Idempotency-Key and user_id */
	EVP_PKEY *pin_key;         /* the service's PIN key; NULL: no transfers */
	const char *pin;           /* the merchant's transfer PIN, in clear */
	char **vendors;            /* vendor account numbers */
	int nvendors;
	int max_split;             /* vendors per transfer: 1 to this many */
	char **wallets;            /* customer accounts that pay (thread i uses i % nwallets) */
	int nwallets;
	const char *wallet_pin;
	enum ops_method method;
	int create_keys;           /* send Idempotency-Key on create-session (and retry it) */
	double retry_s;            /* give an operation up after this many seconds of retries */
	volatile sig_atomic_t *abort_retries;  /* set: stop retrying at once */
};

/* One load thread: its connection, its counters, its sequence of operations. */
struct ops_thread {
	const struct ops_config *cfg;
	struct client *cl;
	struct stats st;
	int id;
	unsigned long seq;
	unsigned int seed;         /* rand_r */
};

/*
 * Runs one operation of kind op, journalling and counting every request it sends, retrying
 * a retriable failure (no answer, 409, 500, 502, 503, 504) with the same request until it
 * succeeds or cfg->retry_s have passed. Returns 0 when it reached its goal, -1 otherwise.
 */
int ops_run(struct ops_thread *t, enum stats_op op);

#endif
