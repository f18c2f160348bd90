/*
 * marketpayctl account pin|unlock, merchant pin|unlock: set a wallet's or a merchant's PIN,
 * lift a PIN lock (the hard lock after repeated locks is lifted only here).
 */
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "crypto.h"
#include "ctl.h"
#include "pin.h"

/* Where a PIN lives: the owner's row, and how its digest names the owner. */
struct pin_owner {
	const char *what;      /* for messages */
	const char *identity;  /* "account" or "merchant": the digest's owner is "<this>:<arg>" */
	const char *set_sql;   /* $1 the argument, $2 the digest; RETURNING one column */
	const char *unlock_sql; /* $1 the argument; RETURNING one column */
};

static const struct pin_owner account = {
	"customer account", "account",
	"UPDATE accounts SET pin_digest = $2::bytea, pin_scheme = 2, pin_failures = 0,"
	" pin_locks = 0, pin_locked_until = NULL WHERE account_number = $1 AND kind = 'customer'"
	" RETURNING account_number",
	"UPDATE accounts SET pin_failures = 0, pin_locks = 0, pin_locked_until = NULL"
	" WHERE account_number = $1 AND kind = 'customer' RETURNING account_number",
};

static const struct pin_owner merchant = {
	"merchant", "merchant",
	"UPDATE merchants SET pin_digest = $2::bytea, pin_scheme = 2, pin_failures = 0,"
	" pin_locks = 0, pin_locked_until = NULL WHERE id = $1::bigint RETURNING id",
	"UPDATE merchants SET pin_failures = 0, pin_locks = 0, pin_locked_until = NULL"
	" WHERE id = $1::bigint RETURNING id",
};

static int
set_pin(struct ctl *c, const struct pin_owner *o, const char *arg)
{
	char pin[64] = "", digest[PIN_DIGEST_LEN], owner[64], missing[96];
	const char *p[2];
	int rc;

	if (fgets(pin, sizeof(pin), stdin) == NULL)
		return ctl_fail("no PIN on standard input");
	pin[strcspn(pin, "\r\n")] = '\0';
	snprintf(owner, sizeof(owner), "%s:%s", o->identity, arg);
	rc = pin_format_ok(pin) ? pin_digest(c->cfg.pepper_file, owner, pin, digest, NULL) : -2;
	crypto_wipe(pin, sizeof(pin));
	if (rc == -2)
		return ctl_fail("a PIN is %d to %d digits", PIN_MIN, PIN_MAX);
	if (rc != 0)
		return ctl_fail("%s: cannot read the pepper (32 bytes)", c->cfg.pepper_file);
	p[0] = arg;
	p[1] = digest;
	snprintf(missing, sizeof(missing), "no %s %.32s", o->what, arg);
	return ctl_exec_print(c, "pin", o->set_sql, 2, p, missing);
}

static int
unlock(struct ctl *c, const struct pin_owner *o, const char *arg)
{
	const char *p[1] = { arg };
	char missing[96];
	int rc;

	snprintf(missing, sizeof(missing), "no %s %.32s", o->what, arg);
	/* Lifting a lock is an operator's security decision: it goes to the auth log. */
	if ((rc = ctl_exec_print(c, "unlock", o->unlock_sql, 1, p, missing)) == 0) {
		openlog("marketpayctl", LOG_PID, LOG_AUTHPRIV);
		syslog(LOG_NOTICE, "the PIN lock of %s %.32s was lifted by uid %u", o->what, arg,
		    (unsigned)getuid());
		closelog();
	}
	return rc;
}

int
ctl_account_pin(struct ctl *c, int argc, char **argv)
{
	if (argc != 1)
		return ctl_fail("usage: marketpayctl account pin ACCOUNT < pin");
	return set_pin(c, &account, argv[0]);
}

int
ctl_merchant_pin(struct ctl *c, int argc, char **argv)
{
	if (argc != 1 || !ctl_is_id(argv[0]))
		return ctl_fail("usage: marketpayctl merchant pin MERCHANT_ID < pin");
	return set_pin(c, &merchant, argv[0]);
}

int
ctl_account_unlock(struct ctl *c, int argc, char **argv)
{
	if (argc != 1)
		return ctl_fail("usage: marketpayctl account unlock ACCOUNT");
	return unlock(c, &account, argv[0]);
}

int
ctl_merchant_unlock(struct ctl *c, int argc, char **argv)
{
	if (argc != 1 || !ctl_is_id(argv[0]))
		return ctl_fail("usage: marketpayctl merchant unlock MERCHANT_ID");
	return unlock(c, &merchant, argv[0]);
}
