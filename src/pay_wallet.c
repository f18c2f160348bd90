/* The wallet payment method: a customer account of this ledger, unlocked by its PIN. */
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "i18n.h"
#include "log.h"
#include "pay.h"
#include "pin.h"

void
pay_wallet(struct app *app, const char *session_id, const char *account, const char *pin,
    struct pay_outcome *out)
{
	char digest[PIN_DIGEST_LEN] = "", legacy[PIN_DIGEST_LEN] = "", owner[64];
	const char *p[4] = { session_id, account, NULL, NULL };
	PGresult *r;
	enum err e;

	memset(out, 0, sizeof(*out));
	if (account == NULL || account[0] == '\0' || pin == NULL || pin[0] == '\0') {
		out->result = PAY_RETRY;
		snprintf(out->message, sizeof(out->message), "%s",
		    _("Enter your account number and PIN."));
		return;
	}
	/*
	 * The digests are made here (the pepper never reaches the database); comparing them,
	 * counting the attempt and paying happen in one call under the account's row lock, so
	 * parallel guesses are counted one after another. A malformed PIN counts as a wrong one.
	 */
	snprintf(owner, sizeof(owner), "account:%s", account);
	if (pin_format_ok(pin) && pin_digest(app->cfg.pepper_file, owner, pin, digest,
	    legacy) != 0) {
		log_msg(LOG_LVL_ERROR, NULL, "pepper_file %s cannot be read", app->cfg.pepper_file);
		out->result = PAY_ERROR;
		out->http_status = 503;
		return;
	}
	p[2] = digest[0] != '\0' ? digest : NULL;
	p[3] = legacy[0] != '\0' ? legacy : NULL;
	r = db_run(app->db, DB_PAY_WALLET, 4, p, &e);
	pay_read(app, r, e, out);
	PQclear(r);
	crypto_wipe(digest, sizeof(digest));
	crypto_wipe(legacy, sizeof(legacy));
}
