#ifndef MP_PAY_H
#define MP_PAY_H

#include <stdbool.h>

#include "app.h"

/* What a payment attempt on the hosted page came to. */
enum pay_result {
	PAY_PAID,        /* the session is paid now */
	PAY_FAILED,      /* processed and declined: the session is failed */
	PAY_RETRY,       /* a form mistake (bad PIN, malformed card): the session stays open */
	PAY_CLOSED,      /* the session was no longer open: see status */
	PAY_ERROR,       /* our fault or the database's: 500 or 503 */
	PAY__MAX
};

struct pay_outcome {
	enum pay_result result;
	int http_status;       /* for PAY_ERROR */
	char message[200];     /* for the customer: PAY_RETRY and PAY_FAILED */
	char status[16];       /* the session's status for PAY_CLOSED */
};

/* Wallet: customer account number + PIN (DESIGN.md section 5). Never logs the PIN. */
void pay_wallet(struct app *app, const char *session_id, const char *account, const char *pin,
    struct pay_outcome *out);

/*
 * Sandbox test cards (refused in production): 4242424242424242 pays, 4000000000000002 is
 * declined, 4000000000009995 is declined for insufficient funds. Only brand and last four
 * digits are stored; never the number or the CVC.
 */
void pay_test_card(struct app *app, const char *session_id, const char *number,
    const char *expiry, const char *cvc, struct pay_outcome *out);

/* Luhn check of a string of digits (at least two). */
bool pay_luhn(const char *digits);

/*
 * Pays the session through mp_pay_session from source (account id text, NULL = the funding
 * account) and fills out. Shared by the methods.
 */
void pay_session(struct app *app, const char *session_id, const char *method,
    const char *source, const char *brand, const char *last4, struct pay_outcome *out);

/* Ends an open session as failed (declined, with reason) or canceled; fills out. */
void pay_close(struct app *app, const char *session_id, const char *status, const char *reason,
    struct pay_outcome *out);

#endif
