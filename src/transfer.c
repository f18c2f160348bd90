/* Multi-vendor settlement: one request splits the merchant's balance across vendors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "crypto.h"
#include "json.h"
#include "money.h"
#include "settle_pin.h"
#include "sqlstate.h"
#include "transfer.h"
#include "valid.h"

struct vendor_in {
	const char *account_number;
	int64_t amount;
};

#define T(f) offsetof(struct transfer_in, f)
#define V(f) offsetof(struct vendor_in, f)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define ACCOUNT_LEN 12
/* The route's input: the body, then the PIN it carries once opened. */
struct transfer_req {
	struct transfer_in in;     /* first: the field table's offsets are into it */
	struct settle_pin pin;
};

static const struct valid_field transfer_fields[] = {
	{ "pin", VALID_STRING, true, true, 4096, NULL, NULL, T(pin), VALID_NO_PRESENT },
	{ "vendors", VALID_ARRAY, true, false, 0, NULL, NULL, T(vendors), VALID_NO_PRESENT },
};

static const struct valid_field vendor_fields[] = {
	{ "account_number", VALID_STRING, true, true, 64, NULL, NULL, V(account_number),
	  VALID_NO_PRESENT },
	{ "amount", VALID_MONEY, true, false, 0, NULL, NULL, V(amount), VALID_NO_PRESENT },
};

/* Two letters and ten digits: the form of every account number (accounts.account_number). */
static bool
account_form(const char *s)
{
	return strlen(s) == ACCOUNT_LEN && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == 2 &&
	    strspn(s + 2, "0123456789") == ACCOUNT_LEN - 2;
}

/* The vendors array: each vendor's fields, no account twice, their count and total. */
static bool
check_vendors(const struct config *cfg, void *arg, char *msg, size_t msglen)
{
	struct transfer_in *in = arg;
	struct vendor_in v[1000];
	size_t i, j, n;
	char prefix[32];

	if ((n = valid_objects(in->vendors, "vendors", cfg->max_vendors < (long)NELEM(v) ?
	    (size_t)cfg->max_vendors : NELEM(v), vendor_fields, NELEM(vendor_fields),
	    cfg->max_amount, v, sizeof(v[0]), msg, msglen)) == 0)
		return false;
	for (i = 0; i < n; i++) {
		snprintf(prefix, sizeof(prefix), "vendors[%zu].", i);
		if (!account_form(v[i].account_number)) {
			snprintf(msg, msglen, "%saccount_number: no such account", prefix);
			return false;
		}
		for (j = 0; j < i; j++)
			if (strcmp(v[j].account_number, v[i].account_number) == 0) {
				snprintf(msg, msglen, "%saccount_number repeats vendors[%zu]."
				    "account_number", prefix, j);
				return false;
			}
		/* Each is at most max_amount, far below INT64_MAX: the sum cannot overflow. */
		if ((in->total += v[i].amount) > cfg->max_amount) {
			snprintf(msg, msglen, "the total of vendors[].amount is above the maximum "
			    "amount");
			return false;
		}
	}
	/* Array literals for the database: the tokens are checked digits and letters only. */
	in->accounts = malloc(n * (ACCOUNT_LEN + 1) + 3);
	in->amounts = malloc(n * 21 + 3);
	if (in->accounts == NULL || in->amounts == NULL) {
		free(in->accounts);
		free(in->amounts);
		in->accounts = in->amounts = NULL;
		snprintf(msg, msglen, "out of memory");
		return false;
	}
	strcpy(in->accounts, "{");
	strcpy(in->amounts, "{");
	for (i = 0; i < n; i++) {
		sprintf(in->accounts + strlen(in->accounts), "%s%s", i ? "," : "",
		    v[i].account_number);
		sprintf(in->amounts + strlen(in->amounts), "%s%lld", i ? "," : "",
		    (long long)v[i].amount);
	}
	strcat(in->accounts, "}");
	strcat(in->amounts, "}");
	return true;
}

/* The RSA work, before the Idempotency-Key's lock. */
static bool
open_pin(struct app *app, struct req *req, void *arg)
{
	struct transfer_req *t = arg;

	return settle_pin_open(app, req, t->in.pin, &t->pin);
}

static void
release(void *arg)
{
	struct transfer_req *t = arg;

	free(t->in.accounts);
	free(t->in.amounts);
	crypto_wipe(t, sizeof(*t));
}

const struct body_spec transfer_body = {
	transfer_fields, NELEM(transfer_fields), sizeof(struct transfer_req), check_vendors,
	open_pin, release,
};

bool
transfer_validate(struct json_object *root, long max_vendors, int64_t max_amount,
    struct transfer_in *in, char *msg, size_t msglen)
{
	struct config cfg = { .max_vendors = max_vendors, .max_amount = max_amount };
	const struct body_spec spec = { transfer_fields, NELEM(transfer_fields), sizeof(*in),
	    check_vendors, NULL, NULL };

	return body_validate(&spec, &cfg, root, in, msg, msglen);
}

/* A vendor or ledger refusal of mp_transfer_send (sql/) as the merchant's 400. */
static void
refused(struct req *req, PGresult *r, const struct transfer_in *in)
{
	static const struct { const char *state, *rule; } rules[] = {
		{ SQLSTATE_NO_ACCOUNT, ": no such account" },
		{ SQLSTATE_OWN_ACCOUNT, " is the merchant's own account" },
		{ SQLSTATE_NOT_VENDOR, " is not a vendor account" },
		{ SQLSTATE_NOT_ACTIVE, " is not active" },
	};
	const char *state = PQgetvalue(r, 0, TRANSFER_SEND_OUTCOME);
	const char *detail = PQgetvalue(r, 0, TRANSFER_SEND_DETAIL);
	const char *message = PQgetvalue(r, 0, TRANSFER_SEND_MESSAGE);
	char total[MONEY_BUFLEN];
	size_t i;

	for (i = 0; i < NELEM(rules); i++)
		if (strcmp(state, rules[i].state) == 0) {
			req_fail(req, 400, "vendors[%s].account_number%s", detail, rules[i].rule);
			return;
		}
	if (strcmp(state, SQLSTATE_VENDOR_CURRENCY) == 0)
		req_fail(req, 400, "vendors[%s].account_number %s", detail, message);
	else if (strcmp(state, SQLSTATE_FUNDS) == 0)
		req_fail(req, 400, "the total %s exceeds the available balance",
		    money_format(in->total, total));
	else if (strcmp(state, SQLSTATE_ACCOUNT_UNUSABLE) == 0)
		/* An account became unusable after the checks above: the ledger names it. */
		req_fail(req, 400, "%s", message);
	else
		req_fail_err(req, ERR_INTERNAL);
}

/* The 200: each transfer's id and amount, the date, the total and the group id. */
static int
reply_done(struct req *req, PGresult *r, int64_t total)
{
	struct jtext t = { 0 };
	char money[MONEY_BUFLEN];
	int i;

	jtext_success(&t, "Transfer completed.");
	jtext_lit(&t, ",\"transaction_detail\":[");
	for (i = 0; i < PQntuples(r); i++) {
		jtext_lit(&t, i == 0 ? "{\"transaction_id\":" : ",{\"transaction_id\":");
		jtext_string(&t, PQgetvalue(r, i, TRANSFER_SEND_ID));
		jtext_lit(&t, ",\"amount\":");
		jtext_string(&t, money_format(strtoll(PQgetvalue(r, i, TRANSFER_SEND_AMOUNT), NULL,
		    10), money));
		jtext_lit(&t, "}");
	}
	jtext_lit(&t, "],\"transaction_date\":");
	jtext_string(&t, PQgetvalue(r, 0, TRANSFER_SEND_DATE));
	/* The total as a JSON number with its two decimals, never a double. */
	jtext_lit(&t, ",\"amount\":");
	jtext_lit(&t, money_format(total, money));
	jtext_lit(&t, ",\"group_id\":");
	jtext_string(&t, PQgetvalue(r, 0, TRANSFER_SEND_GROUP));
	jtext_lit(&t, "}");
	return req_reply_text(req, &t);
}

enum err
transfer_send(struct app *app, struct req *req, void *arg)
{
	const struct transfer_req *t = arg;
	const char *p[8] = { req->merchant, t->pin.digest, t->pin.legacy, t->pin.issued_at,
	    t->pin.nonce, t->in.accounts, t->in.amounts, app->cfg.timezone };
	PGresult *r;
	enum err e;

	/*
	 * One call checks the PIN, counts the attempt, spends the nonce and moves the money; a
	 * refusal comes back as a row, and what it recorded is committed with it.
	 */
	if ((r = db_run(app->db, DB_TRANSFER_SEND, 8, p, &e)) == NULL)
		/* Refusals come back as rows: one that was raised is our fault (500). */
		return e == ERR_INVALID ? ERR_INTERNAL : e;
	if (PQntuples(r) < 1)
		e = ERR_DB;
	else if (strcmp(PQgetvalue(r, 0, TRANSFER_SEND_OUTCOME), "ok") != 0) {
		req->keep_on_refusal = true;
		if (!settle_pin_refused(req, r))
			refused(req, r, &t->in);
	} else if (PQgetisnull(r, 0, TRANSFER_SEND_GROUP))
		e = ERR_DB;
	else if (reply_done(req, r, t->in.total) != 0)
		e = ERR_NOMEM;
	PQclear(r);
	return e;
}
