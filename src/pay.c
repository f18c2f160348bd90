#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "log.h"
#include "pay.h"
#include "sqlstate.h"

/* What mp_pay_wallet, mp_pay_test_card and mp_cancel_session answer, for the page. */
struct outcome_row {
	const char *outcome;
	enum pay_result result;
	const char *message;   /* PAY_RETRY and PAY_FAILED; NULL: status is the outcome */
};

static const struct outcome_row outcomes[] = {
	{ "paid", PAY_PAID, NULL },
	{ "insufficient_funds", PAY_FAILED, N_("Payment declined: insufficient funds.") },
	{ "wrong_pin", PAY_RETRY, PAY_WRONG_PIN },
	{ "account_unusable", PAY_RETRY, N_("This account cannot be used for payments.") },
	{ "currency_mismatch", PAY_RETRY, N_("This account holds another currency.") },
};

#define NOUTCOMES (sizeof(outcomes) / sizeof(outcomes[0]))

/* The lock's message, after the wrong PIN's when wrong_pin; until "" is the hard lock. */
static void
locked(struct pay_outcome *out, bool wrong_pin, const char *until)
{
	char when[20], shown[64], text[400];

	out->result = PAY_RETRY;
	if (until[0] == '\0')
		snprintf(text, sizeof(text), "%s", _("Too many wrong PINs: this account is locked "
		    "until the service's support unlocks it."));
	else {
		snprintf(when, sizeof(when), "%.10s %.5s", until, until + 11);
		snprintf(text, sizeof(text), _("Too many wrong PINs: this account is locked until "
		    "%s UTC."), i18n_number(i18n_current(), when, shown, sizeof(shown)));
	}
	snprintf(out->message, sizeof(out->message), "%s%s%s", wrong_pin ? _(PAY_WRONG_PIN) : "",
	    wrong_pin ? " " : "", text);
}

void
pay_read(struct app *app, PGresult *r, enum err e, struct pay_outcome *out)
{
	const char *outcome, *until;
	size_t i;

	if (r == NULL) {
		out->result = PAY_ERROR;
		/* A refusal of ours that escaped the payment functions is our fault: 500. */
		out->http_status = err_http_status(e == ERR_INVALID ? ERR_INTERNAL : e);
		/* The database refuses a test card outside the sandbox whatever the worker says. */
		if (e == ERR_INVALID && strcmp(db_sqlstate(app->db), SQLSTATE_NOT_SANDBOX) == 0) {
			out->result = PAY_RETRY;
			snprintf(out->message, sizeof(out->message), "%s",
			    _("Test cards are accepted in the sandbox only."));
		}
		return;
	}
	outcome = PQgetvalue(r, 0, PAY_COL_OUTCOME);
	until = PQgetisnull(r, 0, PAY_COL_LOCKED_UNTIL) ? NULL :
	    PQgetvalue(r, 0, PAY_COL_LOCKED_UNTIL);
	if (strcmp(outcome, "locked") == 0) {
		locked(out, false, until != NULL ? until : "");
		return;
	}
	if (strcmp(outcome, "wrong_pin") == 0 && until != NULL) {
		locked(out, true, until);
		if (until[0] == '\0')
			log_msg(LOG_LVL_WARN, NULL, "a wallet PIN is now locked until the operator "
			    "unlocks it (marketpayctl account unlock)");
		return;
	}
	for (i = 0; i < NOUTCOMES; i++)
		if (strcmp(outcome, outcomes[i].outcome) == 0) {
			out->result = outcomes[i].result;
			if (outcomes[i].message != NULL)
				snprintf(out->message, sizeof(out->message), "%s",
				    _(outcomes[i].message));
			return;
		}
	/* The session was no longer open: its status says how it ended. */
	out->result = PAY_CLOSED;
	snprintf(out->status, sizeof(out->status), "%s",
	    strcmp(outcome, "already_paid") == 0 ? "paid" : outcome);
}

void
pay_cancel(struct app *app, const char *session_id, struct pay_outcome *out)
{
	const char *p[1] = { session_id };
	PGresult *r;
	enum err e;

	memset(out, 0, sizeof(*out));
	if ((r = db_run(app->db, DB_CANCEL, 1, p, &e)) == NULL) {
		pay_read(app, NULL, e, out);
		return;
	}
	out->result = PAY_CLOSED;
	snprintf(out->status, sizeof(out->status), "%s", PQgetvalue(r, 0, CANCEL_STATUS));
	PQclear(r);
}

bool
pay_luhn(const char *digits)
{
	size_t n = strlen(digits), i;
	int sum = 0, d;

	if (n < 2 || strspn(digits, "0123456789") != n)
		return false;
	for (i = 0; i < n; i++) {
		d = digits[n - 1 - i] - '0';
		if (i % 2 == 1 && (d *= 2) > 9)
			d -= 9;
		sum += d;
	}
	return sum % 10 == 0;
}
