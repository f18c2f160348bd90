/*
 * marketpayctl account freeze|unfreeze|close: an account's status, changed by an operator
 * for a reason, recorded in account_status_changes (sql/022_account_status.sql, where the
 * rules are kept: closed is final, only an account at zero closes).
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

struct change {
	const char *verb;
	const char *to;     /* the status it sets */
	const char *from;   /* the statuses it applies to, an array literal */
	const char *words;  /* the same, for a message */
};

static const struct change changes[] = {
	{ "freeze", "frozen", "{active}", "active" },
	{ "unfreeze", "active", "{frozen}", "frozen" },
	{ "close", "closed", "{active,frozen}", "active or frozen" },
};

/* Who runs the command: the sudo caller when there is one, else the effective user. */
static const char *
os_user(void)
{
	const char *s = getenv("SUDO_USER");
	const struct passwd *pw;

	if (s != NULL && s[0] != '\0' && strlen(s) <= 64)
		return s;
	pw = getpwuid(geteuid());
	return pw != NULL && strlen(pw->pw_name) <= 64 ? pw->pw_name : NULL;
}

static int
set_status(struct ctl *c, const struct change *ch, int argc, char **argv)
{
	const char *p[5];
	PGresult *r;
	int rc = 1;

	if (argc != 3 || strcmp(argv[1], "--reason") != 0 || argv[2][0] == '\0')
		return ctl_fail("usage: marketpayctl account %s ACCOUNT --reason TEXT", ch->verb);
	if (strlen(argv[2]) > 500)
		return ctl_fail("--reason must be at most 500 characters");
	p[0] = argv[0];
	p[1] = ch->to;
	p[2] = ch->from;
	p[3] = argv[2];
	p[4] = os_user();
	if ((r = ctl_exec(c, ch->verb, "SELECT old_status FROM mp_account_set_status($1, $2,"
	    " $3::text[], $4, $5)", 5, p)) == NULL)
		return 1;
	if (PQntuples(r) == 1) {
		printf("%s\t%s\t(was %s)\n", argv[0], ch->to, PQgetvalue(r, 0, DB_FIRST_COLUMN));
		rc = 0;
	}
	PQclear(r);
	if (rc == 0)
		return 0;
	/* Nothing changed: say why. */
	if ((r = ctl_exec(c, ch->verb, "SELECT status FROM accounts WHERE account_number = $1",
	    1, p)) == NULL)
		return 1;
	if (PQntuples(r) != 1)
		ctl_fail("no account %s", argv[0]);
	else
		ctl_fail("account %s is %s: %s applies only to an account %s", argv[0],
		    PQgetvalue(r, 0, DB_FIRST_COLUMN), ch->verb, ch->words);
	PQclear(r);
	return 1;
}

int
ctl_account_freeze(struct ctl *c, int argc, char **argv)
{
	return set_status(c, &changes[0], argc, argv);
}

int
ctl_account_unfreeze(struct ctl *c, int argc, char **argv)
{
	return set_status(c, &changes[1], argc, argv);
}

int
ctl_account_close(struct ctl *c, int argc, char **argv)
{
	return set_status(c, &changes[2], argc, argv);
}
