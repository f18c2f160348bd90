/* Refunds: money back from the merchant to where a paid session's payment came from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intent.h"
#include "refund.h"
#include "valid.h"
#include "worker_sql.h"

/* One entry of reverse_transfers. */
struct reverse_in {
	const char *transfer_id;
	int64_t amount;
	bool has_amount;
};

#define R(f) offsetof(struct refund_in, f)
#define V(f) offsetof(struct reverse_in, f)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define TRANSFER_ID_LEN 35      /* "tr_" and 32 hex digits */
#define REVERSE_MAX 64          /* entries, whatever max_vendors says */

static const struct valid_field refund_fields[] = {
	INTENT_FIELDS(struct refund_in, refund.),
	{ "reverse_transfers", VALID_ARRAY, false, false, 0, NULL, NULL, R(reverse_transfers),
	  VALID_NO_PRESENT },
};

static const struct valid_field reverse_fields[] = {
	{ "transfer_id", VALID_STRING, true, true, 64, NULL, NULL, V(transfer_id),
	  VALID_NO_PRESENT },
	{ "amount", VALID_MONEY, false, false, 0, NULL, NULL, V(amount), V(has_amount) },
};

/* The PostgreSQL array texts of the reversals: ids are checked to be tr_ and hex only. */
static bool
array_texts(struct refund_in *in, const struct reverse_in *v, size_t n)
{
	size_t i;

	in->transfers = malloc(n * (TRANSFER_ID_LEN + 1) + 3);
	in->amounts = malloc(n * 21 + 3);
	if (in->transfers == NULL || in->amounts == NULL)
		return false;
	strcpy(in->transfers, "{");
	strcpy(in->amounts, "{");
	for (i = 0; i < n; i++) {
		sprintf(in->transfers + strlen(in->transfers), "%s%s", i ? "," : "",
		    v[i].transfer_id);
		if (v[i].has_amount)
			sprintf(in->amounts + strlen(in->amounts), "%s%lld", i ? "," : "",
			    (long long)v[i].amount);
		else
			strcat(in->amounts, i ? ",NULL" : "NULL");
	}
	strcat(in->transfers, "}");
	strcat(in->amounts, "}");
	return true;
}

/* reverse_transfers: each entry's fields, no transfer twice, at most max_vendors entries. */
static bool
check_reversals(const struct config *cfg, void *arg, char *msg, size_t msglen)
{
	struct refund_in *in = arg;
	struct reverse_in v[REVERSE_MAX];
	char prefix[48];
	size_t i, j, n;

	if (in->reverse_transfers == NULL)
		return true;
	if ((n = valid_objects(in->reverse_transfers, "reverse_transfers",
	    cfg->max_vendors < REVERSE_MAX ? (size_t)cfg->max_vendors : REVERSE_MAX,
	    reverse_fields, NELEM(reverse_fields), cfg->max_amount, v, sizeof(v[0]), msg,
	    msglen)) == 0)
		return false;
	for (i = 0; i < n; i++) {
		snprintf(prefix, sizeof(prefix), "reverse_transfers[%zu].", i);
		/* The same words as for a well-formed id the merchant has no transfer by. */
		if (!intent_id_ok(v[i].transfer_id, "tr_")) {
			snprintf(msg, msglen, "%stransfer_id: no such transfer", prefix);
			return false;
		}
		for (j = 0; j < i; j++)
			if (strcmp(v[j].transfer_id, v[i].transfer_id) == 0) {
				snprintf(msg, msglen, "%stransfer_id repeats reverse_transfers[%zu]."
				    "transfer_id", prefix, j);
				return false;
			}
	}
	if (!array_texts(in, v, n)) {
		free(in->transfers);
		free(in->amounts);
		in->transfers = in->amounts = NULL;
		snprintf(msg, msglen, "out of memory");
		return false;
	}
	return true;
}

static void
release(void *arg)
{
	struct refund_in *in = arg;

	free(in->transfers);
	free(in->amounts);
}

const struct body_spec refund_body = {
	refund_fields, NELEM(refund_fields), sizeof(struct refund_in), check_reversals, NULL,
	release,
};

enum err
refund_create(struct app *app, struct req *req, void *arg)
{
	static const struct intent_reply out = { NULL, "Refund succeeded.", "refund",
	    "payment session not found", NULL };
	const struct refund_in *in = arg;
	char amount[24];
	const char *p[6] = { req->merchant, req->param, intent_amount(&in->refund, amount),
	    in->refund.reason, in->transfers, in->amounts };

	return intent_run(app, req, DB_REFUND_CREATE, 6, p, &out);
}

enum err
refund_get(struct app *app, struct req *req, void *in)
{
	static const struct intent_reply out = { "re_", "Refund found.", "refund",
	    "refund not found", NULL };

	(void)in;
	return intent_get(app, req, DB_REFUND_GET, DB_REFUND_GET_KEY, &out);
}
