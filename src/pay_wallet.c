/* The wallet payment method: a customer account of this ledger, unlocked by its PIN. */
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "log.h"
#include "pay.h"
#include "pin.h"

#define WRONG "Unknown account number or wrong PIN."
#define LOCKED "Too many wrong PINs: this account is locked for a while."

static void
retry(struct pay_outcome *out, const char *msg)
{
	out->result = PAY_RETRY;
	snprintf(out->message, sizeof(out->message), "%s", msg);
}

void
pay_wallet(struct app *app, const char *session_id, const char *account, const char *pin,
    struct pay_outcome *out)
{
	char digest[67] = "", max[16], secs[16];
	const char *p[3] = { account, max, secs };
	PGresult *r = NULL;
	enum err e;

	memset(out, 0, sizeof(*out));
	if (account == NULL || account[0] == '\0' || pin == NULL || pin[0] == '\0') {
		retry(out, "Enter your account number and PIN.");
		return;
	}
	/* The attempt is counted before the PIN is compared: parallel guesses cannot overrun. */
	snprintf(max, sizeof(max), "%ld", app->cfg.pin_max_attempts);
	snprintf(secs, sizeof(secs), "%ld", app->cfg.pin_lock_seconds);
	if ((r = db_run(app->db, DB_PIN_CLAIM, 3, p, &e)) == NULL) {
		out->result = PAY_ERROR;
		out->http_status = e == ERR_UNAVAILABLE ? 503 : 500;
		return;
	}
	/* Unknown, not a customer's, or no PIN set: the same answer as a wrong PIN. */
	if (strcmp(PQgetvalue(r, 0, 0), "locked") == 0) {
		retry(out, LOCKED);
		goto out;
	}
	if (strcmp(PQgetvalue(r, 0, 0), "claimed") != 0) {
		retry(out, WRONG);
		goto out;
	}
	if (pin_format_ok(pin) && pin_digest(app->cfg.pepper_file, pin, digest) != 0) {
		log_msg(LOG_LVL_ERROR, NULL, "pepper_file %s cannot be read", app->cfg.pepper_file);
		out->result = PAY_ERROR;
		out->http_status = 503;
		goto out;
	}
	/* A malformed PIN counts as a wrong one; the digests compare in constant time. */
	if (!pin_format_ok(pin) || !crypto_equal(digest + 2, PQgetvalue(r, 0, 2), 64)) {
		retry(out, WRONG);
		goto out;
	}
	p[0] = PQgetvalue(r, 0, 1);
	PQclear(db_run(app->db, DB_PIN_OK, 1, p, &e));
	pay_session(app, session_id, "wallet", PQgetvalue(r, 0, 1), NULL, NULL, out);
out:
	crypto_wipe(digest, sizeof(digest));
	PQclear(r);
}
