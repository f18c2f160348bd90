/* marketpayctl merchant ...: merchants of this environment. */
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
