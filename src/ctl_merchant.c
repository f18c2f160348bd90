/*
 * marketpayctl merchant create, list, show, disable, enable: merchants of this environment.
 * (merchant webhook, pin, unlock, settlement live beside what they set.)
 */
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "webhook_url.h"

int
ctl_merchant_create(struct ctl *c, int argc, char **argv)
{
	const char *name = NULL, *currency = config_currency(&c->cfg), *webhook = NULL, *p[3];
	char why[512];
	PGresult *r;
	int i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
			name = argv[++i];
		else if (strcmp(argv[i], "--currency") == 0 && i + 1 < argc)
			currency = argv[++i];
		else if (strcmp(argv[i], "--webhook-url") == 0 && i + 1 < argc)
			webhook = argv[++i];
		else
			return ctl_fail("usage: marketpayctl merchant create --name NAME "
			    "[--currency CODE] [--webhook-url URL]");
	}
	if (name == NULL || name[0] == '\0' || strlen(name) > 200)
		return ctl_fail("--name is required, 1 to 200 characters");
	if (currency == NULL)
		return ctl_fail(CTL_NO_CURRENCY);
	if (strlen(currency) != 3 || strspn(currency, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != 3)
		return ctl_fail("--currency must be a three-letter ISO 4217 code such as AFN");
	if (webhook != NULL && !webhook_url_check(webhook, &c->cfg, why, sizeof(why)))
		return ctl_fail("--webhook-url %s", why);
	p[0] = name;
	p[1] = currency;
	p[2] = webhook;
	if ((r = ctl_exec(c, "merchant create",
	    "INSERT INTO merchants (name, currency, webhook_url) VALUES ($1, $2, $3) RETURNING id",
	    3, p)) == NULL)
		return 1;
	printf("%s\n", PQgetvalue(r, 0, DB_FIRST_COLUMN));
	PQclear(r);
	return 0;
}

/* A merchant's name and URL on one line of tab-separated output: tabs and newlines as spaces. */
#define ONE_LINE(col) "translate(" col ", E'\\t\\n\\r', '   ')"

int
ctl_merchant_list(struct ctl *c, int argc, char **argv)
{
	(void)argv;
	if (argc != 0)
		return ctl_fail("usage: marketpayctl merchant list");
	/* One line each: id, name, currency, status, webhook url, created. */
	return ctl_exec_rows(c, "merchant list",
	    "SELECT id, " ONE_LINE("name") ", currency, status,"
	    " coalesce(" ONE_LINE("webhook_url") ", '-'), mp_iso(created_at)"
	    " FROM merchants ORDER BY id", 0, NULL);
}

int
ctl_merchant_show(struct ctl *c, int argc, char **argv)
{
	const char *p[1];
	PGresult *r;
	int j, rc = 1;

	if (argc != 1 || !ctl_is_id(argv[0]))
		return ctl_fail("usage: marketpayctl merchant show MERCHANT_ID");
	p[0] = argv[0];
	/* "field<TAB>value" lines, as account show prints them; the names are the columns'. */
	if ((r = ctl_exec(c, "merchant show",
	    "SELECT m.id, " ONE_LINE("m.name") " AS name, m.currency, m.status,"
	    " coalesce(" ONE_LINE("m.webhook_url") ", '-') AS webhook_url,"
	    /* The health view lists only endpoints with failures or events pending. */
	    " CASE WHEN m.webhook_url IS NULL THEN '-' ELSE coalesce(h.state, 'closed') END"
	    "  AS webhook_endpoint,"
	    " CASE WHEN m.settlement_enabled THEN 'on' ELSE 'off' END AS settlement,"
	    " (SELECT count(*) FROM api_keys k WHERE k.merchant_id = m.id"
	    "  AND k.revoked_at IS NULL) AS keys_active,"
	    " (SELECT count(*) FROM api_keys k WHERE k.merchant_id = m.id) AS keys_total,"
	    " mp_iso(m.created_at) AS created_at"
	    " FROM merchants m LEFT JOIN webhook_endpoint_health h ON h.merchant_id = m.id"
	    " WHERE m.id = $1::bigint", 1, p)) == NULL)
		return 1;
	if (PQntuples(r) != 1)
		ctl_fail("no merchant %s", argv[0]);
	else {
		for (j = 0; j < PQnfields(r); j++)
			printf("%s\t%s\n", PQfname(r, j), PQgetvalue(r, 0, j));
		rc = 0;
	}
	PQclear(r);
	return rc;
}

/* merchant disable and enable: sets status; prints the id, or fails for no such merchant. */
static int
set_status(struct ctl *c, int argc, char **argv, const char *verb, const char *status)
{
	const char *p[2];
	char missing[64];

	if (argc != 1 || !ctl_is_id(argv[0]))
		return ctl_fail("usage: marketpayctl merchant %s MERCHANT_ID", verb);
	p[0] = argv[0];
	p[1] = status;
	snprintf(missing, sizeof(missing), "no merchant %s", argv[0]);
	/*
	 * The workers look the merchant's status up with every key (worker_sql.c), so its keys
	 * are refused, and its sessions no longer created, from the next request on.
	 */
	return ctl_exec_print(c, "merchant status", "UPDATE merchants SET status = $2"
	    " WHERE id = $1::bigint RETURNING id", 2, p, missing);
}

int
ctl_merchant_disable(struct ctl *c, int argc, char **argv)
{
	return set_status(c, argc, argv, "disable", "disabled");
}

int
ctl_merchant_enable(struct ctl *c, int argc, char **argv)
{
	return set_status(c, argc, argv, "enable", "active");
}
