/*
 * marketpayctl report: the balance transactions of one merchant and day as CSV (the columns
 * of GET balance-transactions), and the daily settlement summary of every merchant.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "ctl.h"

#define REPORT_BATCH "1000"   /* rows fetched at a time */

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

/*
 * What sql (n parameters p) returns, as CSV on stdout: its column names, then its rows,
 * fetched REPORT_BATCH at a time through a cursor and written as they come, so that a day
 * of any size is never held in memory whole. The cursor reads one snapshot, as the one
 * statement did. 0, or 1 after saying what failed.
 */
static int
print_csv(struct ctl *c, const char *sql, int n, const char *const *p)
{
	char declare[2048];
	PGresult *r;
	int i, j, nf, rows, rc = 0;
	bool header = true;

	if ((size_t)snprintf(declare, sizeof(declare), "DECLARE report NO SCROLL CURSOR FOR %s",
	    sql) >= sizeof(declare))
		return ctl_fail("report: the statement is too long");
	if (db_begin(c->db) != ERR_OK)
		return ctl_fail_db(c, "report");
	if ((r = ctl_exec(c, "report", declare, n, p)) == NULL)
		goto fail;
	PQclear(r);
	do {
		if ((r = ctl_exec(c, "report", "FETCH " REPORT_BATCH " FROM report", 0, NULL)) ==
		    NULL)
			goto fail;
		/* The first batch names the columns, also when it holds no row. */
		nf = PQnfields(r);
		for (j = 0; header && j < nf && rc == 0; j++)
			rc = csv_field(out_stdout, NULL, PQfname(r, j), strlen(PQfname(r, j)),
			    j == nf - 1);
		header = false;
		rows = PQntuples(r);
		for (i = 0; i < rows && rc == 0; i++)
			for (j = 0; j < nf && rc == 0; j++)
				rc = csv_field(out_stdout, NULL, PQgetvalue(r, i, j),
				    (size_t)PQgetlength(r, i, j), j == nf - 1);
		PQclear(r);
	} while (rc == 0 && rows == atoi(REPORT_BATCH));
	db_rollback(c->db);   /* it only read */
	if (rc != 0 || fflush(stdout) != 0)
		return ctl_fail("writing the report failed");
	return 0;
fail:
	db_rollback(c->db);
	return 1;
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
	return print_csv(c, btx_sql, 2, p);
}

int
ctl_report_settlements(struct ctl *c, int argc, char **argv)
{
	const char *day, *p[1];

	if (options(argc, argv, NULL, &day, "report settlements --day YYYY-MM-DD") != 0)
		return 1;
	p[0] = day;
	return print_csv(c, settlements_sql, 1, p);
}
