#ifndef MP_PAY_H
#define MP_PAY_H

#include <stdbool.h>

#include "app.h"
#include "i18n.h"

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
	char message[512];     /* for the customer, translated: PAY_RETRY and PAY_FAILED */
	char status[16];       /* the session's status for PAY_CLOSED */
};

/* English, the catalogs' key: shown through _(). */
#define PAY_WRONG_PIN N_("Unknown account number or wrong PIN.")

/*
 * Wallet: customer account number + PIN, checked, counted and paid by mp_pay_wallet in one
 * call. Never logs the PIN.
 */
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

/* The customer cancels the open session; fills out (PAY_CLOSED with the status after). */
void pay_cancel(struct app *app, const char *session_id, struct pay_outcome *out);

/*
 * Fills out from the first row of a payment call's result r (outcome, transaction id, PIN
 * locked until, seconds left), or from e when r is NULL. Shared by the methods; r stays the
 * caller's.
 */
void pay_read(struct app *app, PGresult *r, enum err e, struct pay_outcome *out);

#endif
