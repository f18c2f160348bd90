/* Transfer reversals: money back from a vendor to the merchant who sent it. */
#include "intent.h"
#include "reversal.h"
#include "worker_sql.h"

static const struct valid_field reversal_fields[] = {
	INTENT_FIELDS(struct intent_in, ),
};

const struct body_spec reversal_body = {
	reversal_fields, sizeof(reversal_fields) / sizeof(reversal_fields[0]),
	sizeof(struct intent_in), NULL, NULL, NULL,
};

enum err
reversal_create(struct app *app, struct req *req, void *arg)
{
	static const struct intent_reply out = { "tr_", "Transfer reversed.", "reversal",
	    "transfer not found", NULL };
	const struct intent_in *in = arg;
	char amount[24];
	const char *p[4] = { req->merchant, req->param, intent_amount(in, amount), in->reason };

	return intent_run(app, req, DB_REVERSAL_CREATE, 4, p, &out);
}
