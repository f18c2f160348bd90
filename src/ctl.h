#ifndef MP_CTL_H
#define MP_CTL_H

#include <libpq-fe.h>

#include "config.h"
#include "db.h"

/* Why a production command that needs a currency refuses when none is given or configured. */
#define CTL_NO_CURRENCY "production has no default currency: give --currency CODE, or set " \
	"currency in the configuration file"

/* What every marketpayctl command gets: the config and a connected database handle. */
struct ctl {
	struct config cfg;
	struct db *db;   /* logging off: failures are printed by the ctl_ functions */
};

/*
 * Runs sql with n text parameters (db_exec). Returns the result (caller PQclears), or NULL
 * after printing "marketpayctl: <what>: <database message>" on stderr.
 */
PGresult *ctl_exec(struct ctl *c, const char *what, const char *sql, int n,
    const char *const *params);

/*
 * Runs sql like ctl_exec and prints the first value of its single row. Returns 0, or 1
 * after printing "marketpayctl: <missing>" when it did not return exactly one row.
 */
int ctl_exec_print(struct ctl *c, const char *what, const char *sql, int n,
    const char *const *params, const char *missing);

/*
 * Prints "marketpayctl: <what>: <database message>" for the handle's last failure (a
 * db_begin, db_commit or db_script that did not return ERR_OK); returns 1.
 */
int ctl_fail_db(struct ctl *c, const char *what);

/* Prints "marketpayctl: <message>" on stderr; returns 1 (the exit status for failures). */
int ctl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Runs sql like ctl_exec and prints every row on standard output, its values separated by
 * tabs, one row a line (as they are: the query makes them single-line). Returns 0, or 1
 * after the message of ctl_exec.
 */
int ctl_exec_rows(struct ctl *c, const char *what, const char *sql, int n,
    const char *const *params);

/* True when s is a positive decimal integer that fits in int64. */
int ctl_is_id(const char *s);

/* Commands: argv[0] is the first word after the command's own name(s). Return exit status. */
int ctl_db_migrate(struct ctl *c, int argc, char **argv);
int ctl_db_roles(struct ctl *c, int argc, char **argv);
int ctl_db_status(struct ctl *c, int argc, char **argv);
int ctl_idempotency_purge(struct ctl *c, int argc, char **argv);
int ctl_purge(struct ctl *c, int argc, char **argv);
int ctl_merchant_create(struct ctl *c, int argc, char **argv);
int ctl_merchant_list(struct ctl *c, int argc, char **argv);
int ctl_merchant_show(struct ctl *c, int argc, char **argv);
int ctl_merchant_disable(struct ctl *c, int argc, char **argv);
int ctl_merchant_enable(struct ctl *c, int argc, char **argv);
int ctl_key_create(struct ctl *c, int argc, char **argv);
int ctl_key_revoke(struct ctl *c, int argc, char **argv);
int ctl_key_list(struct ctl *c, int argc, char **argv);
int ctl_merchant_webhook(struct ctl *c, int argc, char **argv);
int ctl_webhook_list(struct ctl *c, int argc, char **argv);
int ctl_webhook_show(struct ctl *c, int argc, char **argv);
int ctl_webhook_redeliver(struct ctl *c, int argc, char **argv);
int ctl_webhook_endpoints(struct ctl *c, int argc, char **argv);
int ctl_webhook_reset_endpoint(struct ctl *c, int argc, char **argv);
int ctl_account_create(struct ctl *c, int argc, char **argv);
int ctl_account_deposit(struct ctl *c, int argc, char **argv);
int ctl_account_pin(struct ctl *c, int argc, char **argv);
int ctl_account_show(struct ctl *c, int argc, char **argv);
/* account freeze|unfreeze|close ACCOUNT --reason TEXT (ctl_account_status.c) */
int ctl_account_freeze(struct ctl *c, int argc, char **argv);
int ctl_account_unfreeze(struct ctl *c, int argc, char **argv);
int ctl_account_close(struct ctl *c, int argc, char **argv);
int ctl_ledger_verify(struct ctl *c, int argc, char **argv);
int ctl_pin_key_generate(struct ctl *c, int argc, char **argv);
int ctl_merchant_pin(struct ctl *c, int argc, char **argv);
/*
 * 0 when the database records the configured environment; else 1 with a message (another
 * environment's database, or one never migrated).
 */
int ctl_check_environment(struct ctl *c);

int ctl_account_unlock(struct ctl *c, int argc, char **argv);
int ctl_merchant_unlock(struct ctl *c, int argc, char **argv);
int ctl_merchant_settlement(struct ctl *c, int argc, char **argv);
int ctl_report_balance_transactions(struct ctl *c, int argc, char **argv);
int ctl_report_settlements(struct ctl *c, int argc, char **argv);

#endif
