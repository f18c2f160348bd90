/* marketpayctl ledger verify: recomputes the ledger's invariants from the entries. */
#include <stdio.h>

#include "ctl.h"

struct check {
	const char *what;  /* printed before each offending row */
	const char *sql;   /* returns one text column per offending row; none when clean */
};

static const struct check checks[] = {
	{ "unbalanced transaction",
	  "SELECT t.id || ': ' || count(e.id) || ' entries summing to ' || coalesce(sum(e.amount), 0)"
	  " FROM ledger_transactions t LEFT JOIN ledger_entries e ON e.transaction_id = t.id"
	  " GROUP BY t.id HAVING count(e.id) < 2 OR coalesce(sum(e.amount), 0) <> 0 ORDER BY t.id" },
	{ "balance differs from its entries",
	  "SELECT a.account_number || ': balance ' || a.balance || ', entries sum to ' ||"
	  " coalesce(sum(e.amount), 0) FROM accounts a LEFT JOIN ledger_entries e"
	  " ON e.account_id = a.id GROUP BY a.id HAVING a.balance <> coalesce(sum(e.amount), 0)"
	  " ORDER BY a.id" },
	{ "version chain broken",
	  "SELECT a.account_number || ': version ' || a.version || ', ' || count(e.id) ||"
	  " ' entries, highest version ' || coalesce(max(e.version), 0)"
	  " FROM accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id GROUP BY a.id"
	  " HAVING a.version <> count(e.id) OR coalesce(max(e.version), 0) <> count(e.id)"
	  " ORDER BY a.id" },
	{ "entry does not follow the one before",
	  "SELECT account_number || ' version ' || version || ': balance before ' ||"
	  " balance_before || ', previous balance after ' || coalesce(prev::text, 'none')"
	  " FROM (SELECT a.account_number, e.version, e.balance_before, lag(e.balance_after)"
	  "  OVER (PARTITION BY e.account_id ORDER BY e.version) AS prev"
	  "  FROM ledger_entries e JOIN accounts a ON a.id = e.account_id) s"
	  " WHERE balance_before <> coalesce(prev, 0) ORDER BY 1" },
	{ "negative balance",
	  "SELECT account_number || ': ' || balance FROM accounts"
	  " WHERE kind <> 'system' AND balance < 0" },
	{ "trial balance not zero",
	  "SELECT currency || ': ' || total FROM trial_balance WHERE total <> 0" },
};

#define NCHECKS (sizeof(checks) / sizeof(checks[0]))

int
ctl_ledger_verify(struct ctl *c, int argc, char **argv)
{
	PGresult *r;
	size_t i;
	int j, problems = 0;

	(void)argv;
	if (argc != 0)
		return ctl_fail("usage: marketpayctl ledger verify");
	/* One snapshot for every check, so a posting in between cannot look like damage. */
	if ((r = ctl_exec(c, "ledger verify", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
	    0, NULL)) == NULL)
		return 1;
	PQclear(r);
	for (i = 0; i < NCHECKS; i++) {
		if ((r = ctl_exec(c, checks[i].what, checks[i].sql, 0, NULL)) == NULL)
			return 1;
		for (j = 0; j < PQntuples(r); j++, problems++)
			printf("%s: %s\n", checks[i].what, PQgetvalue(r, j, DB_FIRST_COLUMN));
		PQclear(r);
	}
	/* Read only: a COMMIT that fails changes nothing, and the checks have answered. */
	db_commit(c->db);
	if (problems > 0)
		return ctl_fail("ledger verify: %d problem%s", problems, problems == 1 ? "" : "s");
	printf("ledger ok\n");
	return 0;
}
