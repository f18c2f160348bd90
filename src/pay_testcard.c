/* Sandbox test cards: documented numbers decide the outcome; money comes from funding. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "i18n.h"
#include "pay.h"

struct test_card {
	const char *number;
	enum pay_result result;
	const char *reason;    /* for declines: stored as it is, shown translated */
};

static const struct test_card cards[] = {
	{ "4242424242424242", PAY_PAID, NULL },
	{ "4000000000000002", PAY_FAILED, N_("Card declined.") },
	{ "4000000000009995", PAY_FAILED, N_("Card declined: insufficient funds.") },
};

#define NCARDS (sizeof(cards) / sizeof(cards[0]))

static void
retry(struct pay_outcome *out, const char *msg)
{
	out->result = PAY_RETRY;
	snprintf(out->message, sizeof(out->message), "%s", msg);
}

/* "MM/YY" of this month or later. */
static bool
expiry_ok(const char *s)
{
	int mm, yy, n = 0;
	time_t now = time(NULL);
	struct tm tm;

	if (strlen(s) != 5 || sscanf(s, "%2d/%2d%n", &mm, &yy, &n) != 2 || n != 5 ||
	    mm < 1 || mm > 12)
		return false;
	gmtime_r(&now, &tm);
	return 2000 + yy > tm.tm_year + 1900 ||
	    (2000 + yy == tm.tm_year + 1900 && mm >= tm.tm_mon + 1);
}

static const char *
brand(const char *digits)
{
	switch (digits[0]) {
	case '4': return "visa";
	case '5': return "mastercard";
	case '3': return "amex";
	default:  return "card";
	}
}

void
pay_test_card(struct app *app, const char *session_id, const char *number, const char *expiry,
    const char *cvc, struct pay_outcome *out)
{
	char digits[24] = "", last4[5];
	const char *p[4];
	size_t i, n = 0;
	PGresult *r;
	enum err e;

	memset(out, 0, sizeof(*out));
	if (app->cfg.environment == CONFIG_PRODUCTION) {
		retry(out, _("Test cards are accepted in the sandbox only."));
		return;
	}
	/* Spaces between digit groups are allowed; nothing else. */
	for (i = 0; number != NULL && number[i] != '\0'; i++) {
		if (number[i] == ' ')
			continue;
		if (number[i] < '0' || number[i] > '9' || n + 1 >= sizeof(digits)) {
			n = 0;
			break;
		}
		digits[n++] = number[i];
	}
	digits[n] = '\0';
	if (n < 12 || n > 19 || !pay_luhn(digits)) {
		retry(out, _("The card number is not valid."));
		goto out;
	}
	if (expiry == NULL || !expiry_ok(expiry)) {
		retry(out, _("The expiry date must be MM/YY, this month or later."));
		goto out;
	}
	if (cvc == NULL || (strlen(cvc) != 3 && strlen(cvc) != 4) ||
	    strspn(cvc, "0123456789") != strlen(cvc)) {
		retry(out, _("The security code is 3 or 4 digits."));
		goto out;
	}
	memcpy(last4, digits + n - 4, 5);
	for (i = 0; i < NCARDS; i++)
		if (strcmp(digits, cards[i].number) == 0)
			break;
	if (i == NCARDS) {
		retry(out, _("This is not a sandbox test card: use one of the cards listed "
		    "below."));
		goto out;
	}
	/* The database pays only sandbox sessions with a test card, whatever is asked here. */
	p[0] = session_id;
	p[1] = brand(digits);
	p[2] = last4;
	p[3] = cards[i].reason;
	r = db_run(app->db, DB_PAY_TEST_CARD, 4, p, &e);
	pay_read(app, r, e, out);
	if (out->result == PAY_CLOSED && strcmp(out->status, "failed") == 0 &&
	    cards[i].reason != NULL) {
		out->result = PAY_FAILED;
		snprintf(out->message, sizeof(out->message), "%s", _(cards[i].reason));
	}
	PQclear(r);
out:
	memset(digits, 0, sizeof(digits));
}
