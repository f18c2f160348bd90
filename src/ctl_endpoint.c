/* marketpayctl webhook endpoints, webhook reset-endpoint: the delivery breakers. */
#include <stdio.h>
#include <string.h>

#include "ctl.h"

int
ctl_webhook_endpoints(struct ctl *c, int argc, char **argv)
{
	(void)argv;
	if (argc != 0)
		return ctl_fail("usage: marketpayctl webhook endpoints");
	/* One line each: merchant, state, failures, in flight, due, open until, url, error. */
	return ctl_exec_rows(c, "webhook endpoints",
	    "SELECT merchant_id, state, failures, in_flight, due,"
	    " coalesce(mp_iso(open_until), '-'), coalesce(url, '-'),"
	    " coalesce(translate(last_error, E'\\t\\n', '  '), '')"
	    " FROM webhook_endpoint_health ORDER BY merchant_id", 0, NULL);
}

int
ctl_webhook_reset_endpoint(struct ctl *c, int argc, char **argv)
{
	const char *p[1];
	char missing[64];

	if (argc != 1 || !ctl_is_id(argv[0]))
		return ctl_fail("usage: marketpayctl webhook reset-endpoint MERCHANT_ID");
	p[0] = argv[0];
	snprintf(missing, sizeof(missing), "no merchant %s", argv[0]);
	/* Closed by hand (the operator knows it is fixed): its waiting events go out at once. */
	return ctl_exec_print(c, "webhook reset-endpoint",
	    "UPDATE webhook_endpoints SET failures = 0, opens = 0, open_until = NULL,"
	    " opened_at = NULL WHERE merchant_id = $1::bigint"
	    " RETURNING merchant_id, pg_notify('marketpay_webhooks', merchant_id::text)", 1, p,
	    missing);
}
