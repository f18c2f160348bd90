/* The wallet payment method: a customer account of this ledger, unlocked by its PIN. */
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "log.h"
#include "pay.h"
#include "pin.h"

#define WRONG "Unknown account number or wrong PIN."

static void
retry(struct pay_outcome *out, const char *msg)
{
	out->result = PAY_RETRY;
	snprintf(out->message, sizeof(out->message), "%s", msg);
}

static void
record_failure(struct app *app, const char *account_id, struct pay_outcome *out)
{
	char max[16], secs[16];
	const char *p[3] = { account_id, max, secs };
	PGresult *r;
	enum err e;

	snprintf(max, sizeof(max), "%ld", app->cfg.pin_max_attempts);
	snprintf(secs, sizeof(secs), "%ld", app->cfg.pin_lock_seconds);
	if ((r = db_run(app->db, DB_PIN_FAILED, 3, p, &e)) == NULL) {
		out->result = PAY_ERROR;
		out->http_status = e == ERR_UNAVAILABLE ? 503 : 500;
		return;
	}
	if (strcmp(PQgetvalue(r, 0, 1), "t") == 0)
		retry(out, "Too many wrong PINs: this account is locked for a while.");
	else
		retry(out, WRONG);
	PQclear(r);
}

void
pay_wallet(struct app *app, const char *session_id, const char *account, const char *pin,
    struct pay_outcome *out)
{
	char digest[67];
	const char *p[1] = { account };
	PGresult *r = NULL;
	enum err e;

	memset(out, 0, sizeof(*out));
	if (account == NULL || account[0] == '\0' || pin == NULL || pin[0] == '\0') {
		retry(out, "Enter your account number and PIN.");
		return;
	}
	if ((r = db_run(app->db, DB_WALLET_ACCOUNT, 1, p, &e)) == NULL) {
		out->result = PAY_ERROR;
		out->http_status = e == ERR_UNAVAILABLE ? 503 : 500;
		return;
	}
	/* Unknown, not a customer's, or no PIN set: the same answer as a wrong PIN. */
	if (PQntuples(r) != 1 || strcmp(PQgetvalue(r, 0, 1), "customer") != 0 ||
	    strlen(PQgetvalue(r, 0, 3)) != 64) {
		retry(out, WRONG);
		goto out;
	}
	if (strcmp(PQgetvalue(r, 0, 4), "t") == 0) {
		retry(out, "Too many wrong PINs: this account is locked for a while.");
		goto out;
	}
	if (pin_digest(app->cfg.pepper_file, pin, digest) != 0 && pin_format_ok(pin)) {
		log_msg(LOG_LVL_ERROR, NULL, "pepper_file %s cannot be read", app->cfg.pepper_file);
		out->result = PAY_ERROR;
		out->http_status = 503;
		goto out;
	}
	/* A malformed PIN counts as a wrong one; the digests compare in constant time. */
	if (!pin_format_ok(pin) || !crypto_equal(digest + 2, PQgetvalue(r, 0, 3), 64)) {
		record_failure(app, PQgetvalue(r, 0, 0), out);
		goto out;
	}
	p[0] = PQgetvalue(r, 0, 0);
	PQclear(db_run(app->db, DB_PIN_OK, 1, p, &e));
	pay_session(app, session_id, "wallet", PQgetvalue(r, 0, 0), NULL, NULL, out);
out:
	crypto_wipe(digest, sizeof(digest));
	PQclear(r);
}
