#include <stdio.h>
#include <string.h>

#include "pay.h"

static void
db_failed(struct pay_outcome *out, enum err e)
{
	out->result = PAY_ERROR;
	out->http_status = e == ERR_UNAVAILABLE ? 503 : 500;
}

void
pay_session(struct app *app, const char *session_id, const char *method, const char *source,
    const char *brand, const char *last4, struct pay_outcome *out)
{
	const char *p[6] = { session_id, method, source, brand, last4,
	    app->cfg.environment == CONFIG_PRODUCTION ? "true" : "false" };
	const char *outcome, *state;
	PGresult *r;
	enum err e;

	if ((r = db_run(app->db, DB_PAY, 6, p, &e)) == NULL) {
		state = e == ERR_INVALID ? db_sqlstate(app->db) : "";
		/* The ledger refused the customer's account: a mistake they can correct. */
		out->result = PAY_RETRY;
		if (strcmp(state, "MP001") == 0)
			snprintf(out->message, sizeof(out->message),
			    "This account cannot be used for payments.");
		else if (strcmp(state, "MP002") == 0)
			snprintf(out->message, sizeof(out->message),
			    "This account holds another currency.");
		else
			db_failed(out, e == ERR_INVALID ? ERR_DB : e);
		return;
	}
	outcome = PQgetvalue(r, 0, 0);
	if (strcmp(outcome, "paid") == 0)
		out->result = PAY_PAID;
	else if (strcmp(outcome, "already_paid") == 0) {
		/* Another submit paid it first: this one moved no money. */
		out->result = PAY_CLOSED;
		snprintf(out->status, sizeof(out->status), "paid");
	} else if (strcmp(outcome, "insufficient_funds") == 0) {
		out->result = PAY_FAILED;
		snprintf(out->message, sizeof(out->message), "Payment declined: insufficient funds.");
	} else {
		out->result = PAY_CLOSED;
		snprintf(out->status, sizeof(out->status), "%s", outcome);
	}
	PQclear(r);
}

void
pay_close(struct app *app, const char *session_id, const char *status, const char *reason,
    struct pay_outcome *out)
{
	const char *p[3] = { session_id, status, reason };
	PGresult *r;
	enum err e;

	if ((r = db_run(app->db, DB_CLOSE, 3, p, &e)) == NULL) {
		db_failed(out, e);
		return;
	}
	out->result = strcmp(PQgetvalue(r, 0, 0), "failed") == 0 ? PAY_FAILED : PAY_CLOSED;
	snprintf(out->status, sizeof(out->status), "%s", PQgetvalue(r, 0, 0));
	if (reason != NULL)
		snprintf(out->message, sizeof(out->message), "%s", reason);
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
