/*
 * The collections of the merchant API (marketpay-api(7), LISTS), one transfer, and the
 * balance: each a list spec or one statement.
 */
#include <string.h>

#include "auth.h"
#include "intent.h"
#include "list.h"
#include "lists.h"
#include "session.h"
#include "valid.h"
#include "worker_sql.h"

static bool
session_id_ok(const char *s)
{
	return valid_uuid(s);
}

static bool
refund_id_ok(const char *s)
{
	return intent_id_ok(s, "re_");
}

static bool
transfer_id_ok(const char *s)
{
	return intent_id_ok(s, "tr_");
}

/* "btx_" and the ledger entry's id. */
static bool
btx_id_ok(const char *s)
{
	size_t n = strlen(s);

	return strncmp(s, "btx_", 4) == 0 && n > 4 && n <= 4 + 18 && s[4] != '0' &&
	    strspn(s + 4, "0123456789") == n - 4;
}

static bool
one_of(const char *s, const char *const *set)
{
	for (; *set != NULL; set++)
		if (strcmp(s, *set) == 0)
			return true;
	return false;
}

static bool
status_ok(const char *s)
{
	static const char *const set[] = { "open", "paid", "failed", "canceled", "expired",
		"refunded", NULL };

	return one_of(s, set);
}

static bool
type_ok(const char *s)
{
	static const char *const set[] = { "payment", "refund", "transfer", "transfer_reversal",
		"deposit", "adjustment", NULL };

	return one_of(s, set);
}

static bool
user_id_ok(const char *s)
{
	return strlen(s) <= 50;
}

/* Two capital letters and ten digits, as the accounts table's CHECK has it. */
static bool
account_number_ok(const char *s)
{
	return strlen(s) == 12 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == 2 &&
	    strspn(s + 2, "0123456789") == 10;
}

static const struct list_spec sessions = { "sessions", session_id_ok, "payment session",
	{ { "user_id", user_id_ok, "must be at most 50 characters" },
	  { "status", status_ok,
	    "must be one of open, paid, failed, canceled, expired, refunded" } },
	session_url };

static const struct list_spec refunds = { "refunds", refund_id_ok, "refund",
	{ { "session_id", session_id_ok, "must be a payment session id (a UUID)" },
	  { NULL, NULL, NULL } }, NULL };

static const struct list_spec transfers = { "transfers", transfer_id_ok, "transfer",
	{ { "account_number", account_number_ok,
	    "must be two capital letters and ten digits" }, { NULL, NULL, NULL } }, NULL };

static const struct list_spec balance_transactions = { "balance_transactions", btx_id_ok,
	"balance transaction",
	{ { "type", type_ok, "must be one of payment, refund, transfer, transfer_reversal, "
	    "deposit, adjustment" }, { NULL, NULL, NULL } }, NULL };

enum err
sessions_list(struct app *app, struct req *req, void *in)
{
	(void)in;
	return list_run(app, req, &sessions);
}

enum err
refunds_list(struct app *app, struct req *req, void *in)
{
	(void)in;
	return list_run(app, req, &refunds);
}

enum err
transfers_list(struct app *app, struct req *req, void *in)
{
	(void)in;
	return list_run(app, req, &transfers);
}

/* The CSV's header: DB_LIST_CSV's columns (enum list_csv_col), named as the JSON has them. */
static const char *const btx_columns[] = { "id", "type", "amount", "balance_after",
	"currency", "source", "transaction_id", "created_at" };

enum err
balance_transactions_list(struct app *app, struct req *req, void *in)
{
	(void)in;
	if (list_wants_csv(req))
		return list_csv(app, req, &balance_transactions, DB_LIST_CSV, btx_columns,
		    (int)(sizeof(btx_columns) / sizeof(btx_columns[0])));
	return list_run(app, req, &balance_transactions);
}

enum err
transfer_get(struct app *app, struct req *req, void *in)
{
	static const struct intent_reply out = { "tr_", "Transfer found.", "transfer",
	    "transfer not found", NULL };

	(void)in;
	return intent_get(app, req, DB_TRANSFER_GET, DB_TRANSFER_GET_KEY, &out);
}

enum err
balance_get(struct app *app, struct req *req, void *in)
{
	static const struct intent_reply balance = { NULL, NULL, "balance", NULL, NULL };
	const char *p[2] = { req->merchant, NULL };
	bool own_key = req->auth_deferred;
	int col = own_key ? INTENT_KEY_OBJECT : INTENT_OBJECT;
	PGresult *r;
	enum err e;

	(void)in;
	if (own_key) {
		/* The key not looked up yet (the route's own_auth): the balance's statement does. */
		p[0] = req->key_digest;
		p[1] = config_env_name(&app->cfg);
		r = db_run(app->db, DB_BALANCE_KEY, 2, p, &e);
	} else
		r = db_run(app->db, DB_BALANCE, 1, p, &e);
	if (r == NULL)
		return e == ERR_INVALID ? ERR_INTERNAL : e;
	if (own_key && !auth_found(req, r, &e))
		return e;
	if (PQntuples(r) != 1 || PQgetisnull(r, 0, col))
		e = ERR_DB;
	else if (intent_reply_object(app, req, &balance, r, col) != 0)
		e = ERR_NOMEM;
	PQclear(r);
	return e;
}
