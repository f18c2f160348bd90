/* marketpayctl: the operator's command line. argv, config, connect, dispatch, exit. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

struct command {
	const char *noun;
	const char *verb;   /* NULL: the noun is the whole command */
	int (*run)(struct ctl *, int, char **);
	const char *usage;
};

static const struct command commands[] = {
	{ "db", "migrate", ctl_db_migrate, "db migrate" },
	{ "db", "status", ctl_db_status, "db status" },
	{ "db", "roles", ctl_db_roles, "db roles [--app ROLE] [--webhookd ROLE] [--readonly ROLE]" },
	{ "idempotency", "purge", ctl_idempotency_purge, "idempotency purge" },
	{ "purge", NULL, ctl_purge, "purge [--batch N]" },
	{ "merchant", "create", ctl_merchant_create,
	  "merchant create --name NAME [--currency CODE] [--webhook-url URL]" },
	{ "merchant", "list", ctl_merchant_list, "merchant list" },
	{ "merchant", "show", ctl_merchant_show, "merchant show MERCHANT_ID" },
	{ "merchant", "disable", ctl_merchant_disable, "merchant disable MERCHANT_ID" },
	{ "merchant", "enable", ctl_merchant_enable, "merchant enable MERCHANT_ID" },
	{ "key", "create", ctl_key_create, "key create MERCHANT_ID" },
	{ "key", "revoke", ctl_key_revoke, "key revoke KEY_PREFIX_OR_ID" },
	{ "key", "list", ctl_key_list, "key list MERCHANT_ID" },
	{ "merchant", "webhook", ctl_merchant_webhook,
	  "merchant webhook MERCHANT_ID [--url URL [--keep-secret]] [--events TYPE,...|all]" },
	{ "webhook", "list", ctl_webhook_list, "webhook list [--status pending|delivered|dead]" },
	{ "webhook", "show", ctl_webhook_show, "webhook show EVENT_ID" },
	{ "webhook", "redeliver", ctl_webhook_redeliver, "webhook redeliver EVENT_ID" },
	{ "webhook", "endpoints", ctl_webhook_endpoints, "webhook endpoints" },
	{ "webhook", "reset-endpoint", ctl_webhook_reset_endpoint,
	  "webhook reset-endpoint MERCHANT_ID" },
	{ "account", "create", ctl_account_create,
	  "account create --kind customer|vendor|merchant [--merchant ID] [--currency CODE] "
	  "[--name NAME]" },
	{ "account", "deposit", ctl_account_deposit, "account deposit ACCOUNT AMOUNT" },
	{ "account", "pin", ctl_account_pin, "account pin ACCOUNT < pin" },
	{ "account", "unlock", ctl_account_unlock, "account unlock ACCOUNT" },
	{ "account", "show", ctl_account_show, "account show ACCOUNT" },
	{ "account", "freeze", ctl_account_freeze, "account freeze ACCOUNT --reason TEXT" },
	{ "account", "unfreeze", ctl_account_unfreeze, "account unfreeze ACCOUNT --reason TEXT" },
	{ "account", "close", ctl_account_close, "account close ACCOUNT --reason TEXT" },
	{ "ledger", "verify", ctl_ledger_verify, "ledger verify" },
	{ "pin-key", "generate", ctl_pin_key_generate, "pin-key generate [--bits 2048|3072|4096] [--force]" },
	{ "merchant", "pin", ctl_merchant_pin, "merchant pin MERCHANT_ID < pin" },
	{ "merchant", "unlock", ctl_merchant_unlock, "merchant unlock MERCHANT_ID" },
	{ "merchant", "settlement", ctl_merchant_settlement,
	  "merchant settlement MERCHANT_ID on|off" },
	{ "report", "balance-transactions", ctl_report_balance_transactions,
	  "report balance-transactions --merchant ID --day YYYY-MM-DD" },
	{ "report", "settlements", ctl_report_settlements, "report settlements --day YYYY-MM-DD" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void
usage(void)
{
	size_t i;

	fprintf(stderr, "usage: marketpayctl [-c config] [-S sql_dir] command ... | -V\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(stderr, "       marketpayctl %s\n", commands[i].usage);
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const struct command *cmd = NULL;
	const char *path = NULL, *sql_dir = NULL;
	struct ctl c;
	char err[512];
	size_t i;
	int ch, rc = 1;

	memset(&c, 0, sizeof(c));
	while ((ch = getopt_long(argc, argv, "+c:S:V", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': path = optarg; break;
		case 'V': printf("marketpayctl %s\n", PACKAGE_VERSION); exit(0);
		case 'S': sql_dir = optarg; break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage();
	/* A command is a noun and a verb, or a noun alone (verb NULL). */
	for (i = 0; i < NCOMMANDS && cmd == NULL; i++)
		if (strcmp(argv[0], commands[i].noun) == 0 && (commands[i].verb == NULL ||
		    (argc >= 2 && strcmp(argv[1], commands[i].verb) == 0)))
			cmd = &commands[i];
	if (cmd == NULL)
		usage();
	if (config_load(&c.cfg, path, err, sizeof(err)) != 0) {
		fprintf(stderr, "marketpayctl: %s\n", err);
		goto out;
	}
	if (sql_dir != NULL && config_set(&c.cfg, "sql_dir", sql_dir, err, sizeof(err)) != 0) {
		fprintf(stderr, "marketpayctl: %s\n", err);
		goto out;
	}
	if ((c.db = db_new(c.cfg.database)) == NULL) {
		fprintf(stderr, "marketpayctl: out of memory\n");
		goto out;
	}
	db_set_application(c.db, "marketpayctl");
	/*
	 * What goes wrong is said to the operator, once, by the command; NOTICEs such as
	 * "relation already exists, skipping" are not the operator's business.
	 */
	db_set_logging(c.db, false);
	if (db_connect(c.db) != ERR_OK) {
		fprintf(stderr, "marketpayctl: database: %s", db_error(c.db));
		goto out;
	}
	/* Every command but the one that records it works on a database of this environment. */
	if (cmd->run != ctl_db_migrate && ctl_check_environment(&c) != 0)
		goto out;
	i = cmd->verb == NULL ? 1 : 2;
	rc = cmd->run(&c, argc - (int)i, argv + i);
out:
	db_free(c.db);
	config_free(&c.cfg);
	return rc;
}
