/*
 * marketpayctl report: the balance transactions of one merchant and day as CSV (the columns
 * of GET balance-transactions), and the daily settlement summary of every merchant.
 */
#include <stdio.h>
#include <string.h>

#include "csv.h"
#include "ctl.h"

/* The columns of GET balance-transactions, oldest first: a day read as a statement. */
static const char btx_sql[] =
    "SELECT j->>'id' AS id, j->>'type' AS type, j->>'amount' AS amount,"
    " j->>'balance_after' AS balance_after, j->>'currency' AS currency,"
    " j->>'source' AS source, j->>'transaction_id' AS transaction_id,"
    " j->>'created_at' AS created_at"
    " FROM mp_list('balance_transactions', $1::bigint, NULL, NULL, NULL,"
    " $2::date::timestamp AT TIME ZONE 'UTC', ($2::date + 1)::timestamp AT TIME ZONE 'UTC',"
    " NULL, NULL, true) WITH ORDINALITY AS x(j, n) ORDER BY n DESC";

static const char settlements_sql[] =
    "SELECT merchant_id, currency, mp_money_text(payments) AS payments,"
    " mp_money_text(refunds) AS refunds, mp_money_text(transfers) AS transfers,"
    " mp_money_text(reversals) AS reversals, mp_money_text(other) AS other,"
    " mp_money_text(net) AS net, entries"
    " FROM merchant_settlement_days WHERE day = $1::date ORDER BY merchant_id, currency";

static int
out_stdout(void *arg, const char *s, size_t n)
{
	(void)arg;
	return fwrite(s, 1, n, stdout) == n ? 0 : -1;
}

/* r as CSV on stdout: its column names, then its rows. 0, or 1 when stdout failed. */
static int
print_csv(PGresult *r)
{
	int i, j, nf = PQnfields(r), rc = 0;

	for (j = 0; j < nf && rc == 0; j++)
		rc = csv_field(out_stdout, NULL, PQfname(r, j), strlen(PQfname(r, j)), j == nf - 1);
	for (i = 0; i < PQntuples(r) && rc == 0; i++)
		for (j = 0; j < nf && rc == 0; j++)
			rc = csv_field(out_stdout, NULL, PQgetvalue(r, i, j),
			    (size_t)PQgetlength(r, i, j), j == nf - 1);
	if (rc != 0 || fflush(stdout) != 0)
		return ctl_fail("writing the report failed");
	return 0;
}

/* A day as YYYY-MM-DD (the database judges whether it is a real date). */
static int
day_ok(const char *s)
{
	return strlen(s) == 10 && strspn(s, "0123456789") == 4 && s[4] == '-' &&
	    strspn(s + 5, "0123456789") == 2 && s[7] == '-' && strspn(s + 8, "0123456789") == 2;
}

/* Reads --merchant and --day (merchant NULL: not wanted). 0, or 1 after the usage. */
static int
options(int argc, char **argv, const char **merchant, const char **day, const char *usage)
{
	int i;

	*day = NULL;
	for (i = 0; i + 1 < argc; i += 2)
		if (merchant != NULL && strcmp(argv[i], "--merchant") == 0)
			*merchant = argv[i + 1];
		else if (strcmp(argv[i], "--day") == 0)
			*day = argv[i + 1];
		else
			break;
	if (i != argc || *day == NULL || (merchant != NULL && *merchant == NULL))
		return ctl_fail("usage: marketpayctl %s", usage);
	if (!day_ok(*day))
		return ctl_fail("--day must be a date as YYYY-MM-DD");
	if (merchant != NULL && !ctl_is_id(*merchant))
		return ctl_fail("--merchant must be a merchant id");
	return 0;
}

int
ctl_report_balance_transactions(struct ctl *c, int argc, char **argv)
{
	const char *merchant = NULL, *day, *p[2];
	PGresult *r;
	int rc;

	if (options(argc, argv, &merchant, &day,
	    "report balance-transactions --merchant ID --day YYYY-MM-DD") != 0)
		return 1;
	p[0] = merchant;
	p[1] = day;
	if ((r = ctl_exec(c, "report", "SELECT 1 FROM merchants WHERE id = $1::bigint", 1, p))
	    == NULL)
		return 1;
	rc = PQntuples(r);
	PQclear(r);
	if (rc != 1)
		return ctl_fail("no merchant %s", merchant);
	if ((r = ctl_exec(c, "report", btx_sql, 2, p)) == NULL)
		return 1;
	rc = print_csv(r);
	PQclear(r);
	return rc;
}

int
ctl_report_settlements(struct ctl *c, int argc, char **argv)
{
	const char *day, *p[1];
	PGresult *r;
	int rc;

	if (options(argc, argv, NULL, &day, "report settlements --day YYYY-MM-DD") != 0)
		return 1;
	p[0] = day;
	if ((r = ctl_exec(c, "report", settlements_sql, 1, p)) == NULL)
		return 1;
	rc = print_csv(r);
	PQclear(r);
	return rc;
}
