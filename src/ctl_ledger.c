/*
 * marketpayctl ledger verify: recomputes the ledger's invariants from the entries, and those
 * of refunds and transfer reversals from their rows and postings.
 */
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
	/* Refunds and reversals (sql/009_refunds.sql): the running totals, then the postings. */
	{ "refunds differ from the session's amount_refunded",
	  "SELECT s.id || ': amount_refunded ' || s.amount_refunded || ', refunds sum to ' ||"
	  " coalesce(sum(r.amount), 0) || ' (' || coalesce(string_agg(r.id, ', ' ORDER BY r.id),"
	  " 'none') || ')' FROM payment_sessions s LEFT JOIN refunds r ON r.session_id = s.id"
	  " GROUP BY s.id HAVING s.amount_refunded <> coalesce(sum(r.amount), 0) ORDER BY 1" },
	{ "session refunded above its amount",
	  "SELECT id || ': amount ' || amount || ', amount_refunded ' || amount_refunded"
	  " FROM payment_sessions WHERE amount_refunded NOT BETWEEN 0 AND amount ORDER BY 1" },
	{ "session status does not match its refunds",
	  "SELECT id || ': status ' || status || ', amount ' || amount || ', amount_refunded ' ||"
	  " amount_refunded FROM payment_sessions"
	  " WHERE (status = 'refunded') <> (amount_refunded = amount)"
	  " OR (amount_refunded <> 0 AND status NOT IN ('paid', 'refunded')) ORDER BY 1" },
	{ "reversals differ from the transfer's amount_reversed",
	  "SELECT t.id || ': amount_reversed ' || t.amount_reversed || ', reversals sum to ' ||"
	  " coalesce(sum(v.amount), 0) || ' (' || coalesce(string_agg(v.id, ', ' ORDER BY v.id),"
	  " 'none') || ')' FROM transfers t LEFT JOIN transfer_reversals v ON v.transfer_id = t.id"
	  " GROUP BY t.id HAVING t.amount_reversed <> coalesce(sum(v.amount), 0) ORDER BY 1" },
	{ "transfer reversed above its amount",
	  "SELECT id || ': amount ' || amount || ', amount_reversed ' || amount_reversed"
	  " FROM transfers WHERE amount_reversed NOT BETWEEN 0 AND amount ORDER BY 1" },
	/*
	 * A refund is posted as a transaction of kind refund, a reversal as one of kind reversal
	 * or as its refund's; and no such transaction is without its row.
	 */
	{ "refund or reversal not posted as its kind",
	  "SELECT r.id || ': transaction ' || t.id || ' is of kind ' || t.kind FROM refunds r"
	  " JOIN ledger_transactions t ON t.id = r.ledger_transaction_id WHERE t.kind <> 'refund'"
	  " UNION ALL SELECT v.id || ': transaction ' || t.id || CASE WHEN v.refund_id IS NULL"
	  "  THEN ' is of kind ' || t.kind ELSE ' is not its refund''s (' || v.refund_id || ', "
	  "transaction ' || r.ledger_transaction_id || ')' END FROM transfer_reversals v"
	  " JOIN ledger_transactions t ON t.id = v.ledger_transaction_id"
	  " LEFT JOIN refunds r ON r.id = v.refund_id"
	  " WHERE CASE WHEN v.refund_id IS NULL THEN t.kind <> 'reversal'"
	  "  ELSE t.id <> r.ledger_transaction_id END"
	  " UNION ALL SELECT 'transaction ' || t.id || ': of kind ' || t.kind || ' without a ' ||"
	  " t.kind || ' row' FROM ledger_transactions t WHERE (t.kind = 'refund' AND NOT EXISTS"
	  " (SELECT 1 FROM refunds r WHERE r.ledger_transaction_id = t.id)) OR"
	  " (t.kind = 'reversal' AND NOT EXISTS (SELECT 1 FROM transfer_reversals v"
	  "  WHERE v.ledger_transaction_id = t.id)) ORDER BY 1" },
	/* The payer: the session's wallet, or for a test card the currency's funding account. */
	{ "refund does not credit its payer",
	  "SELECT r.id || ': transaction ' || r.ledger_transaction_id || ' credits ' ||"
	  " coalesce(a.account_number, 'no payer account') || ' by ' || coalesce(sum(e.amount), 0)"
	  " || ', the refund is ' || r.amount FROM refunds r"
	  " JOIN payment_sessions s ON s.id = r.session_id"
	  " LEFT JOIN accounts a ON a.id = coalesce(s.customer_account_id, (SELECT f.id"
	  "  FROM accounts f WHERE f.kind = 'system' AND f.currency = s.currency))"
	  " LEFT JOIN ledger_entries e ON e.transaction_id = r.ledger_transaction_id"
	  "  AND e.account_id = a.id"
	  " GROUP BY r.id, a.account_number HAVING coalesce(sum(e.amount), 0) <> r.amount"
	  " ORDER BY 1" },
	/*
	 * Each vendor in a refund or reversal transaction: its entries there sum to minus the
	 * reversals of transfers to it posted there, both ways round (an entry without a
	 * reversal, a reversal without an entry).
	 */
	{ "reversals do not debit the vendor",
	  "WITH rev AS (SELECT v.ledger_transaction_id AS tx, t.vendor_account_id AS account,"
	  "  sum(v.amount) AS total, string_agg(v.id, ', ' ORDER BY v.id) AS ids"
	  "  FROM transfer_reversals v JOIN transfers t ON t.id = v.transfer_id GROUP BY 1, 2),"
	  " ent AS (SELECT e.transaction_id AS tx, e.account_id AS account, sum(e.amount) AS total"
	  "  FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id"
	  "  JOIN accounts a ON a.id = e.account_id"
	  "  WHERE t.kind IN ('refund', 'reversal') AND a.kind = 'vendor' GROUP BY 1, 2)"
	  " SELECT 'transaction ' || coalesce(rev.tx, ent.tx) || ', ' || a.account_number ||"
	  " ': reversals ' || coalesce(rev.ids, 'none') || ' sum to ' || coalesce(rev.total, 0) ||"
	  " ', the vendor''s entries to ' || coalesce(ent.total, 0)"
	  " FROM rev FULL JOIN ent ON ent.tx = rev.tx AND ent.account = rev.account"
	  " JOIN accounts a ON a.id = coalesce(rev.account, ent.account)"
	  " WHERE coalesce(ent.total, 0) <> -coalesce(rev.total, 0) ORDER BY 1" },
	/* The merchant's account takes the net: its reversals less its refund. */
	{ "merchant's entry is not the net of refund and reversals",
	  "SELECT 'transaction ' || id || ' (' || kind || '): the merchant''s account moves by ' ||"
	  " moved || ', reversals less refunds are ' || net FROM (SELECT t.id, t.kind,"
	  "  coalesce((SELECT sum(e.amount) FROM ledger_entries e JOIN accounts a"
	  "   ON a.id = e.account_id WHERE e.transaction_id = t.id AND a.kind = 'merchant'"
	  "   AND a.merchant_id = t.merchant_id), 0) AS moved,"
	  "  coalesce((SELECT sum(v.amount) FROM transfer_reversals v"
	  "   WHERE v.ledger_transaction_id = t.id), 0) - coalesce((SELECT sum(r.amount)"
	  "   FROM refunds r WHERE r.ledger_transaction_id = t.id), 0) AS net"
	  "  FROM ledger_transactions t WHERE t.kind IN ('refund', 'reversal')) x"
	  " WHERE moved <> net ORDER BY id" },
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
