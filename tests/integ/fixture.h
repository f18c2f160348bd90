#ifndef MP_TEST_FIXTURE_H
#define MP_TEST_FIXTURE_H

/*
 * What the integration suites share (tests/integration.sh runs them against one stack):
 * the merchants and keys made once, the stack's database and marketpayctl, the assertions
 * on a refused request, and each program's main().
 */

#include <check.h>
#include <libpq-fe.h>

#include "../unit/runner.h"
#include "http.h"

#define CREATE "/api/v1/payment/create-session"
#define SEND "/api/v1/payment/send-money-MultiVendor"
#define PUBKEY "/api/v1/payment/pin-public-key"
#define JSON_CT "Content-Type: application/json"
/* marketpayctl with the stack's config, as the start of a shell command (sh()). */
#define CTL "\"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" "
/* An ordinary create-session body: two items (15.50 AFN), user_id, email, a success URL. */
#define GOOD_BODY "{\"items\":[{\"id\":\"sku-1\",\"name\":\"Tea\",\"price\":12.50}," \
    "{\"id\":\"sku-2\",\"name\":\"Cup\",\"price\":3}],\"user_id\":\"order-42\"," \
    "\"email\":\"buyer@example.com\",\"redirect_success_url\":\"https://shop.example/ok\"}"

/* What the integration tests set up once, before any case runs (see fixture_init). */
struct fixture {
	char key_a[160];        /* active key of merchant A */
	char key_b[160];        /* active key of merchant B */
	char key_revoked[160];  /* revoked key of merchant A */
	char key_live[160];     /* production key of merchant A: wrong environment here */
	char merchant_a[32];
	char merchant_b[32];
	char auth_a[200];       /* "Authorization: API-KEY <key_a>" */
	char auth_b[200];
};

extern struct fixture fx;

/* Creates merchants and keys with marketpayctl; aborts the run when that fails. */
void fixture_init(void);

/*
 * The main() of a suite against the stack: libcurl set up, fixture_init(), then setup (may
 * be NULL) once in this process (the cases run forked and inherit what it made), every case
 * of s (run_suite), teardown (may be NULL). Returns the program's exit status.
 */
int fixture_main(Suite *s, void (*setup)(void), void (*teardown)(void));

/* Set-up the cases cannot do without: unless ok, says "<program>: <what> failed", exits 1. */
void need(int ok, const char *what);

/*
 * A new production (mp_live_) API key of merchant, stored in this sandbox database, into
 * key[129]: a key of the wrong environment. 0, or -1.
 */
int fixture_live_key(const char *merchant, char key[129]);

/* A connection to the stack's database as the role user (NULL: as stack.env says, the owner). */
PGconn *db_connect_as(const char *user);

/*
 * Runs sql on c with n parameters (n 0: PQexec, so sql may hold several statements); its
 * SQLSTATE into state[6] ("00000" when it ran), which it returns.
 */
const char *db_state(PGconn *c, const char *sql, int n, const char *const *params, char state[6]);

/*
 * Runs sql (no parameters) logged in as the database role user, on the stack's socket.
 * Returns its SQLSTATE in state[6]: "00000" when it ran, the refusal's otherwise, "LOGIN"
 * when the role could not log in (so a failed login is never taken for a refusal).
 */
const char *db_as(const char *user, const char *sql, char state[6]);

/*
 * Notes line, when it is an API key (mp_...) or a webhook secret (whsec_...), among the
 * secrets tests/integration.sh then looks for in every log. ctl() notes what it prints.
 */
void note_secret(const char *line);

/* Runs marketpayctl with the stack's config and the given arguments; returns its first
 * output line in a static buffer (NULL on failure). */
const char *ctl(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The single value of a query against the stack's database (static buffer), or NULL. */
const char *db_value(const char *sql, const char *param);

/* The same with n parameters (NULL = SQL NULL). */
const char *db_valuev(const char *sql, int n, const char *const *params);

/* The same on the open connection c: within its transaction, if it has one begun. */
const char *db_value_on(PGconn *c, const char *sql, int n, const char *const *params);

/*
 * Everything a refused request must leave as it was, as one comparable string (static
 * buffer, shorter than FOOTPRINT_LEN): the row counts of sessions, their items, idempotency
 * records, ledger transactions, ledger entries (and their sum), transfers (and the sum
 * reversed of them), webhook events, refunds, transfer reversals and event redeliveries; a
 * digest of every account (balance, version, status) and of every session (status, ledger
 * transaction, amount refunded); the database's environment. With session and acct (either
 * may be NULL) it starts with "status/method/" of that session and "balance/pin_failures/"
 * of that account.
 */
#define FOOTPRINT_LEN 512
const char *db_footprint(const char *session, const char *acct);

/* A 4xx reply (marketpay-api(7), ERRORS): status, success false, a message holding needle. */
void assert_fail(const struct http_resp *r, long status, const char *needle);

/* marketpayctl ledger verify finds the ledger whole. */
void assert_ledger_ok(void);

/* The balance of account acct, in minor units (the case fails when there is none). */
long long balance_of(const char *acct);

/* The stored status of payment session id, or NULL. */
const char *status_of(const char *id);

/*
 * POSTs body (len bytes; -1: strlen) to create-session as auth (an Authorization line, or
 * NULL) with extra (another header line, or NULL); the reply into r. 0, or -1 as http_do.
 */
int create(const char *auth, const char *body, long len, const char *extra, struct http_resp *r);

/* A session of the merchant behind auth, made with body (a 200); its id into id[37]. */
void new_session(const char *auth, const char *body, char id[37]);

/* A customer wallet with PIN 1234 holding balance (NULL: nothing); its number into acct[16]. */
void new_customer(const char *balance, char acct[16]);

/*
 * Begins a transaction as the owner and runs sql (n parameters) in it, so that it holds what
 * sql locked (the case fails unless it ran); db_release() commits it and closes c.
 */
PGconn *db_hold(const char *sql, int n, const char *const *params);

/*
 * Holds, in a transaction of its own, the lock that a create-session request of merchant with
 * Idempotency-Key key holds while it runs, as if one still were; db_release() ends it.
 */
PGconn *hold_idempotency_lock(const char *merchant, const char *key);
void db_release(PGconn *c);

/* How many of the database's backends wait for a lock now (-1: it could not be asked). */
int lock_waiters(void);

/*
 * A race that really is one: sends the n requests at once (http_parallel_reqs) while held
 * (db_hold) keeps locked what they all need, so they line up in the workers behind it; 300 ms
 * after want of them wait for a lock (or after 5 s), held is released (db_release) and they
 * go on together. Returns the most that were seen waiting, or -1 as http_parallel_reqs.
 */
int http_parallel_held(PGconn *held, int want, int n, const struct http_req *reqs,
    struct http_resp *out);

/* The message of a 400 with success false, or NULL when r is something else. */
const char *refusal(const struct http_resp *r);

/* Runs the shell command cmd; its standard output into out[n]; its exit status. */
int run_capture(const char *cmd, char *out, size_t n);

/* Runs a shell command; returns its exit status. */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* True when s (not NULL) matches the extended regular expression pattern. */
int matches(const char *s, const char *pattern);

#endif
