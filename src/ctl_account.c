/* marketpayctl account ...: ledger accounts, deposits, wallet PINs, statements. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "ctl.h"
#include "money.h"

struct kind {
	const char *name;
	const char *prefix;   /* first two characters of its account numbers */
};

static const struct kind kinds[] = {
	{ "customer", "CU" },
	{ "vendor", "VE" },
	{ "merchant", "ME" },
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Two letters, nine random digits and a Luhn check digit: "CU4821937705". */
static int
new_account_number(const char *prefix, char out[13])
{
	unsigned char raw[9];
	int i, sum = 0, d;

	if (crypto_random(raw, sizeof(raw)) != 0)
		return -1;
	memcpy(out, prefix, 2);
	for (i = 0; i < 9; i++)
		out[2 + i] = (char)('0' + raw[i] % 10);
	/* Luhn over the nine digits, the check digit to their right. */
	for (i = 8; i >= 0; i--) {
		d = out[2 + i] - '0';
		if ((8 - i) % 2 == 0 && (d *= 2) > 9)
			d -= 9;
		sum += d;
	}
	out[11] = (char)('0' + (10 - sum % 10) % 10);
	out[12] = '\0';
	return 0;
}

int
ctl_account_create(struct ctl *c, int argc, char **argv)
{
	const struct kind *k = NULL;
	const char *merchant = NULL, *currency = NULL, *name = NULL, *p[5];
	char number[13];
	PGresult *r = NULL;
	enum err e;
	size_t j;
	int i, tries;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc) {
			for (j = 0, i++; j < NKINDS; j++)
				if (strcmp(argv[i], kinds[j].name) == 0)
					k = &kinds[j];
		} else if (strcmp(argv[i], "--merchant") == 0 && i + 1 < argc)
			merchant = argv[++i];
		else if (strcmp(argv[i], "--currency") == 0 && i + 1 < argc)
			currency = argv[++i];
		else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
			name = argv[++i];
		else
			k = NULL, i = argc;
	}
	if (k == NULL)
		return ctl_fail("usage: marketpayctl account create --kind customer|vendor|merchant "
		    "[--merchant ID] [--currency CODE] [--name NAME]");
	if (merchant != NULL && !ctl_is_id(merchant))
		return ctl_fail("--merchant must be a merchant id");
	if (strcmp(k->name, "merchant") == 0 && merchant == NULL)
		return ctl_fail("a merchant account needs --merchant ID");
	if (currency != NULL &&
	    (strlen(currency) != 3 || strspn(currency, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != 3))
		return ctl_fail("--currency must be a three-letter ISO 4217 code such as AFN");
	/* The currency defaults to the merchant's, else to the configured one. */
	if (currency == NULL && merchant == NULL && (currency = config_currency(&c->cfg)) == NULL)
		return ctl_fail(CTL_NO_CURRENCY);
	p[1] = k->name;
	p[2] = merchant;
	p[3] = currency;
	p[4] = name;
	for (tries = 0; tries < 5; tries++) {
		if (new_account_number(k->prefix, number) != 0)
			return ctl_fail("no random bytes available");
		p[0] = number;
		if ((r = db_exec(c->db,
		    "INSERT INTO accounts (account_number, kind, merchant_id, currency, name)"
		    " SELECT $1, $2, $3::bigint, coalesce($4, (SELECT currency FROM merchants"
		    "  WHERE id = $3::bigint)), $5"
		    " WHERE $3::bigint IS NULL OR EXISTS (SELECT 1 FROM merchants WHERE id = $3::bigint)"
		    " RETURNING account_number", 5, p, &e)) != NULL)
			break;
		/* Another account drew the same number: draw again. */
		if (strcmp(db_sqlstate(c->db), "23505") != 0 ||
		    strstr(db_error(c->db), "account_number") == NULL)
			break;
	}
	if (r == NULL)
		return ctl_fail_db(c, "account create");
	if (PQntuples(r) != 1) {
		PQclear(r);
		return ctl_fail("no merchant %s", merchant);
	}
	printf("%s\n", PQgetvalue(r, 0, DB_FIRST_COLUMN));
	PQclear(r);
	return 0;
}

int
ctl_account_deposit(struct ctl *c, int argc, char **argv)
{
	const char *p[2];
	char minor[32];
	int64_t amount;
	PGresult *r;

	if (argc != 2)
		return ctl_fail("usage: marketpayctl account deposit ACCOUNT AMOUNT");
	if (money_parse(argv[1], strlen(argv[1]), c->cfg.max_amount, &amount) != MONEY_OK)
		return ctl_fail("AMOUNT %s", money_rule(money_parse(argv[1], strlen(argv[1]),
		    c->cfg.max_amount, &amount)));
	snprintf(minor, sizeof(minor), "%lld", (long long)amount);
	p[0] = argv[0];
	p[1] = minor;
	/* From the funding account of the account's currency, made on first use. */
	if ((r = ctl_exec(c, "account deposit",
	    "SELECT mp_post('deposit', a.merchant_id, 'deposit', a.currency,"
	    "  ARRAY[mp_funding_account(a.currency), a.id], ARRAY[-$2::bigint, $2::bigint])"
	    " FROM accounts a WHERE a.account_number = $1", 2, p)) == NULL)
		return 1;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return ctl_fail("no account %s", argv[0]);
	}
	printf("%s\n", PQgetvalue(r, 0, DB_FIRST_COLUMN));
	PQclear(r);
	return 0;
}

/* Columns of account show's two queries: the account, then its statement. */
enum { SHOW_NUMBER, SHOW_KIND, SHOW_MERCHANT, SHOW_CURRENCY, SHOW_STATUS, SHOW_BALANCE,
	SHOW_VERSION, SHOW_HAS_PIN, SHOW_CREATED };
enum { ENTRY_VERSION, ENTRY_CREATED, ENTRY_TRANSACTION, ENTRY_KIND, ENTRY_REFERENCE,
	ENTRY_AMOUNT, ENTRY_BALANCE_AFTER };

int
ctl_account_show(struct ctl *c, int argc, char **argv)
{
	char amount[MONEY_BUFLEN];
	const char *p[1];
	PGresult *r;
	int i;

	if (argc != 1)
		return ctl_fail("usage: marketpayctl account show ACCOUNT");
	p[0] = argv[0];
	if ((r = ctl_exec(c, "account show",
	    "SELECT account_number, kind, coalesce(merchant_id::text, '-'), currency, status,"
	    " balance, version, pin_digest IS NOT NULL, mp_iso(created_at)"
	    " FROM accounts WHERE account_number = $1", 1, p)) == NULL)
		return 1;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return ctl_fail("no account %s", argv[0]);
	}
	printf("account\t%s\nkind\t%s\nmerchant\t%s\ncurrency\t%s\nstatus\t%s\n"
	    "balance\t%s\nversion\t%s\npin\t%s\ncreated_at\t%s\n", PQgetvalue(r, 0, SHOW_NUMBER),
	    PQgetvalue(r, 0, SHOW_KIND), PQgetvalue(r, 0, SHOW_MERCHANT),
	    PQgetvalue(r, 0, SHOW_CURRENCY), PQgetvalue(r, 0, SHOW_STATUS),
	    money_format(strtoll(PQgetvalue(r, 0, SHOW_BALANCE), NULL, 10), amount),
	    PQgetvalue(r, 0, SHOW_VERSION),
	    strcmp(PQgetvalue(r, 0, SHOW_HAS_PIN), "t") == 0 ? "set" : "none",
	    PQgetvalue(r, 0, SHOW_CREATED));
	PQclear(r);
	/* Its changes of status (sql/022_account_status.sql), the reason kept on one line. */
	if (ctl_exec_rows(c, "account show",
	    "SELECT 'status_change', mp_iso(s.changed_at), s.old_status, s.new_status,"
	    " s.changed_by, coalesce(s.os_user, '-'),"
	    " coalesce(translate(s.reason, E'\\t\\n\\r', '   '), '-')"
	    " FROM account_status_changes s JOIN accounts a ON a.id = s.account_id"
	    " WHERE a.account_number = $1 ORDER BY s.id", 1, p) != 0)
		return 1;
	/*
	 * The statement: one entry per line, oldest first, with the running balance. The kind is
	 * the entry's (ledger_entry_kinds): a vendor's debit inside a refund is a reversal.
	 */
	if ((r = ctl_exec(c, "account show",
	    "SELECT e.version, mp_iso(k.created_at), k.transaction_id, k.entry_kind,"
	    " coalesce(t.reference, ''), k.amount, k.balance_after FROM ledger_entry_kinds k"
	    " JOIN ledger_entries e ON e.id = k.entry_id"
	    " JOIN ledger_transactions t ON t.id = k.transaction_id"
	    " WHERE k.account_number = $1 ORDER BY e.version", 1, p)) == NULL)
		return 1;
	for (i = 0; i < PQntuples(r); i++) {
		char after[MONEY_BUFLEN];

		printf("entry\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", PQgetvalue(r, i, ENTRY_VERSION),
		    PQgetvalue(r, i, ENTRY_CREATED), PQgetvalue(r, i, ENTRY_TRANSACTION),
		    PQgetvalue(r, i, ENTRY_KIND), PQgetvalue(r, i, ENTRY_REFERENCE),
		    money_format(strtoll(PQgetvalue(r, i, ENTRY_AMOUNT), NULL, 10), amount),
		    money_format(strtoll(PQgetvalue(r, i, ENTRY_BALANCE_AFTER), NULL, 10), after));
	}
	PQclear(r);
	return 0;
}
