#ifndef MP_TEST_TRANSFERS_H
#define MP_TEST_TRANSFERS_H

#include <stdbool.h>

#include <openssl/evp.h>

#include "http.h"

/* What the transfer suites share: merchants that pay vendors, and the PINs they send. */

struct merchant {
	char id[32], auth[200], acct[16];   /* acct: its settlement account (ME...) */
};

/* The PIN key the service publishes (service_key_load); the cases inherit it. */
extern EVP_PKEY *service_key;

/* GET pin-public-key as auth: the service's PIN key (EVP_PKEY_free it). Exits on failure. */
EVP_PKEY *pin_key_fetch(const char *auth);

/* service_key = pin_key_fetch(auth); service_key_free() as the suite's teardown. */
void service_key_load(const char *auth);
void service_key_free(void);

/* A suite's setup: service_key_load() as a merchant made for it. */
void service_key_setup(void);

/* What a merchant sends for pin, sealed afresh (a new time and nonce) into out. */
const char *sealed(const char *pin, char out[1024]);

/* The right PIN of every merchant here, 1234, sealed afresh (static buffer). */
const char *pin_ok(void);

/* A new account (args: "--kind vendor", ...): its number into out[16]. */
void new_account(char out[16], const char *args);

/* A merchant with a key, the given PIN, settlement on or off, its account holding deposit. */
void new_merchant(struct merchant *m, const char *pin, const char *deposit, bool settle);

/* Points m's webhooks at the stack's receiver; the whsec_ secret they are signed with into
 * secret[128]. */
void merchant_webhook(const struct merchant *m, char secret[128]);

/* The merchant's count of consecutive wrong PINs, as text. */
const char *pin_failures(const struct merchant *m);

/* POSTs body to send-money-MultiVendor as auth, with extra (a header line, or NULL). */
void send_as(const char *auth, const char *body, const char *extra, struct http_resp *r);

/* A transfer's 200 (marketpay-api(7)) with n transfers: the first transaction_id, or NULL. */
const char *transfer_accepted(const struct http_resp *r, int n);

/* The body of a transfer of amounts[i] (JSON number text) to accts[i] (static buffer). */
const char *transfer_body(const char *pin, int n, char accts[][16], const char *const *amounts);

/*
 * m transfers amounts[i] to accts[i] with the right PIN, which must succeed (a 200); the
 * transfers' tr_ ids, in request order, into ids.
 */
void transfer_ok(const struct merchant *m, int n, char accts[][16], const char *const *amounts,
    char ids[][40]);

/* transfer_ok of amount to vendor alone: its id into id[40]. */
void new_transfer(const struct merchant *m, const char *vendor, const char *amount, char id[40]);

#endif
