/* The wallet payment method: a customer account of this ledger, unlocked by its PIN. */
#include <stdbool.h>
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

static void
db_error(struct app *app, struct pay_outcome *out, enum err e)
{
	db_rollback(app->db);
	out->result = PAY_ERROR;
	out->http_status = e == ERR_UNAVAILABLE ? 503 : 500;
}

void
pay_wallet(struct app *app, const char *session_id, const char *account, const char *pin,
    struct pay_outcome *out)
{
	char digest[67] = "", max[16], secs[16], id[24];
	const char *p[3] = { account, max, secs };
	PGresult *r = NULL;
	bool right;
	enum err e;

	memset(out, 0, sizeof(*out));
	if (account == NULL || account[0] == '\0' || pin == NULL || pin[0] == '\0') {
		retry(out, "Enter your account number and PIN.");
		return;
	}
	if (pin_format_ok(pin) && pin_digest(app->cfg.pepper_file, pin, digest) != 0) {
		log_msg(LOG_LVL_ERROR, NULL, "pepper_file %s cannot be read", app->cfg.pepper_file);
		out->result = PAY_ERROR;
		out->http_status = 503;
		return;
	}
	snprintf(max, sizeof(max), "%ld", app->cfg.pin_max_attempts);
	snprintf(secs, sizeof(secs), "%ld", app->cfg.pin_lock_seconds);
	/*
	 * Read, compare and count under the account's row lock, in one transaction: parallel
	 * guesses are counted one after another and cannot overrun pin_max_attempts.
	 */
	if ((e = db_begin(app->db)) != ERR_OK || (r = db_run(app->db, DB_PIN_READ, 1, p, &e)) == NULL) {
		db_error(app, out, e);
		goto out;
	}
	/* Unknown, not a customer's, or no PIN set: the same answer as a wrong PIN. */
	if (PQntuples(r) != 1 || strcmp(PQgetvalue(r, 0, 1), "customer") != 0 ||
	    strlen(PQgetvalue(r, 0, 2)) != 64) {
		db_rollback(app->db);
		retry(out, WRONG);
		goto out;
	}
	if (strcmp(PQgetvalue(r, 0, 3), "t") == 0) {
		db_rollback(app->db);
		retry(out, LOCKED);
		goto out;
	}
	/* A malformed PIN counts as a wrong one; the digests compare in constant time. */
	right = digest[0] != '\0' && crypto_equal(digest + 2, PQgetvalue(r, 0, 2), 64);
	snprintf(id, sizeof(id), "%s", PQgetvalue(r, 0, 0));
	p[0] = id;
	PQclear(r);
	if ((r = db_run(app->db, right ? DB_PIN_OK : DB_PIN_FAILED, right ? 1 : 3, p, &e)) == NULL ||
	    (e = db_commit(app->db)) != ERR_OK) {
		db_error(app, out, e);
		goto out;
	}
	if (!right)
		retry(out, WRONG);
	else
		pay_session(app, session_id, "wallet", id, NULL, NULL, out);
out:
	crypto_wipe(digest, sizeof(digest));
	PQclear(r);
}
