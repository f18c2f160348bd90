/* marketpayctl merchant webhook, webhook ...: signing secrets and the webhook outbox. */
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "ctl.h"
#include "event_type.h"
#include "webhook_sign.h"
#include "webhook_url.h"

#define EVENT_ID_LEN 36   /* "evt_" + 32 hexadecimal digits */

/* True when s looks like an event id (the schema's CHECK says the same). */
static int
is_event_id(const char *s)
{
	return strlen(s) == EVENT_ID_LEN && strncmp(s, "evt_", 4) == 0 &&
	    strspn(s + 4, "0123456789abcdef") == EVENT_ID_LEN - 4;
}

/*
 * A new secret into secret and, sealed under secrets_key_file, as bytea hex into hex.
 * Returns 0, or 1 after saying why (the caller wipes secret either way).
 */
static int
new_secret(struct ctl *c, char secret[WEBHOOK_SECRET_MAX],
    char hex[WEBHOOK_SEALED_HEX_MAX])
{
	unsigned char key[CRYPTO_KEY_LEN];
	int rc = 1;

	if (crypto_load_key(c->cfg.secrets_key_file, key) != 0) {
		ctl_fail("secrets_key_file %s: cannot read exactly %d bytes",
		    c->cfg.secrets_key_file, CRYPTO_KEY_LEN);
		goto out;
	}
	if (webhook_sign_secret_sealed(key, secret, hex) != 0) {
		ctl_fail("cannot make a secret: no random bytes or cipher failure");
		goto out;
	}
	rc = 0;
out:
	crypto_wipe(key, sizeof(key));
	return rc;
}

/*
 * Sets url and, unless keep, a new secret; the secret goes to stdout. A new secret this way
 * replaces the old one at once, and ends a rotation window. Returns exit status.
 */
static int
set_webhook(struct ctl *c, const char *id, const char *url, int keep)
{
	char secret[WEBHOOK_SECRET_MAX], hex[WEBHOOK_SEALED_HEX_MAX];
	const char *p[3] = { id, url, hex };
	PGresult *r = NULL;
	int rc = 1;

	if (keep)
		r = ctl_exec(c, "merchant webhook", "UPDATE merchants SET webhook_url = $2"
		    " WHERE id = $1::bigint AND webhook_secret_sealed IS NOT NULL RETURNING id",
		    2, p);
	else if (new_secret(c, secret, hex) == 0)
		r = ctl_exec(c, "merchant webhook", "UPDATE merchants SET webhook_url = $2,"
		    " webhook_secret_sealed = $3::bytea, webhook_secret_previous_sealed = NULL,"
		    " webhook_secret_previous_until = NULL WHERE id = $1::bigint RETURNING id", 3, p);
	if (r == NULL)
		goto out;
	if (PQntuples(r) != 1) {
		ctl_fail(keep ? "no merchant %s with a webhook secret" : "no merchant %s", id);
		goto out;
	}
	/* Shown this once: only the sealed form is stored. */
	if (!keep)
		printf("%s\n", secret);
	rc = 0;
out:
	crypto_wipe(secret, sizeof(secret));
	PQclear(r);
	return rc;
}

/*
 * Rotates the merchant's secret (mp_rotate_webhook_secret): the new one goes to stdout, the
 * old one still signs for the database's rotation window. Returns exit status.
 */
static int
rotate_secret(struct ctl *c, const char *id)
{
	char secret[WEBHOOK_SECRET_MAX], hex[WEBHOOK_SEALED_HEX_MAX];
	const char *p[2] = { id, hex };
	PGresult *r = NULL;
	int rc = 1;

	if (new_secret(c, secret, hex) != 0 || (r = ctl_exec(c, "merchant webhook",
	    "SELECT mp_rotate_webhook_secret($1::bigint, $2::bytea)", 2, p)) == NULL)
		goto out;
	/* Shown this once: only the sealed form is stored. */
	printf("%s\n", secret);
	rc = 0;
out:
	crypto_wipe(secret, sizeof(secret));
	PQclear(r);
	return rc;
}

/*
 * The merchant's subscription: types ("{a,b}", or "" for every type). Prints it, as stored,
 * when say. Returns the exit status.
 */
static int
set_events(struct ctl *c, const char *id, const char *types, int say)
{
	const char *p[2] = { id, types };
	PGresult *r;
	char missing[64];

	if (say) {
		snprintf(missing, sizeof(missing), "no merchant %s", id);
		return ctl_exec_print(c, "merchant webhook", "UPDATE merchants SET"
		    " webhook_event_types = nullif($2, '')::text[] WHERE id = $1::bigint"
		    " RETURNING coalesce(array_to_string(webhook_event_types, ','), 'all')", 2, p,
		    missing);
	}
	if ((r = ctl_exec(c, "merchant webhook", "UPDATE merchants SET webhook_event_types ="
	    " nullif($2, '')::text[] WHERE id = $1::bigint RETURNING id", 2, p)) == NULL)
		return 1;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return ctl_fail("no merchant %s", id);
	}
	PQclear(r);
	return 0;
}

int
ctl_merchant_webhook(struct ctl *c, int argc, char **argv)
{
	const char *url = NULL, *events = NULL;
	char why[512], types[EVENT_TYPES_ARRAY_MAX];
	int i, keep = 0, rotate = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
			url = argv[++i];
		else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
			events = argv[++i];
		else if (strcmp(argv[i], "--keep-secret") == 0)
			keep = 1;
		else if (strcmp(argv[i], "--rotate-secret") == 0)
			rotate = 1;
		else
			break;
	}
	if (argc < 1 || !ctl_is_id(argv[0]) || i < argc ||
	    (url == NULL && events == NULL && !rotate) || (url == NULL && keep) ||
	    (rotate && url != NULL))
		return ctl_fail("usage: marketpayctl merchant webhook MERCHANT_ID "
		    "[--url URL [--keep-secret] | --rotate-secret] [--events TYPE,...|all]");
	if (url != NULL && !webhook_url_check(url, &c->cfg, why, sizeof(why)))
		return ctl_fail("--url %s", why);
	if (events != NULL && event_types_parse(events, types, why, sizeof(why)) != 0)
		return ctl_fail("--events: %s", why);
	/* The subscription first: a new secret is printed only once all is stored. */
	if (events != NULL && set_events(c, argv[0], types, url == NULL && !rotate) != 0)
		return 1;
	if (rotate)
		return rotate_secret(c, argv[0]);
	return url == NULL ? 0 : set_webhook(c, argv[0], url, keep);
}

/* Columns of webhook list's query. */
enum { LIST_ID, LIST_MERCHANT, LIST_TYPE, LIST_STATUS, LIST_ATTEMPTS, LIST_CREATED };

int
ctl_webhook_list(struct ctl *c, int argc, char **argv)
{
	const char *p[1] = { NULL };
	PGresult *r;
	int i;

	if (argc == 2 && strcmp(argv[0], "--status") == 0 && (strcmp(argv[1], "pending") == 0 ||
	    strcmp(argv[1], "delivered") == 0 || strcmp(argv[1], "dead") == 0 ||
	    strcmp(argv[1], "skipped") == 0))
		p[0] = argv[1];
	else if (argc != 0)
		return ctl_fail("usage: marketpayctl webhook list "
		    "[--status pending|delivered|dead|skipped]");
	if ((r = ctl_exec(c, "webhook list",
	    "SELECT id, merchant_id, type, status, attempts, mp_iso(created_at) FROM webhook_events"
	    " WHERE $1::text IS NULL OR status = $1 ORDER BY created_at, id", 1, p)) == NULL)
		return 1;
	for (i = 0; i < PQntuples(r); i++)
		printf("%s\t%s\t%s\t%s\t%s\t%s\n", PQgetvalue(r, i, LIST_ID),
		    PQgetvalue(r, i, LIST_MERCHANT), PQgetvalue(r, i, LIST_TYPE),
		    PQgetvalue(r, i, LIST_STATUS), PQgetvalue(r, i, LIST_ATTEMPTS),
		    PQgetvalue(r, i, LIST_CREATED));
	PQclear(r);
	return 0;
}

/*
 * Columns of webhook show's queries: the event (each printed under its name, the body last),
 * then its attempts.
 */
enum show_col { SHOW_ID, SHOW_MERCHANT, SHOW_TYPE, SHOW_STATUS, SHOW_ATTEMPTS, SHOW_CREATED,
	SHOW_NEXT_ATTEMPT, SHOW_DELIVERED, SHOW_LAST_ERROR, SHOW_BODY };
enum { ATTEMPT_NUMBER, ATTEMPT_AT, ATTEMPT_HTTP, ATTEMPT_DURATION, ATTEMPT_URL, ATTEMPT_ERROR };

int
ctl_webhook_show(struct ctl *c, int argc, char **argv)
{
	static const char *const names[SHOW_BODY] = {
		"id",               /* SHOW_ID */
		"merchant_id",      /* SHOW_MERCHANT */
		"type",             /* SHOW_TYPE */
		"status",           /* SHOW_STATUS */
		"attempts",         /* SHOW_ATTEMPTS */
		"created_at",       /* SHOW_CREATED */
		"next_attempt_at",  /* SHOW_NEXT_ATTEMPT */
		"delivered_at",     /* SHOW_DELIVERED */
		"last_error",       /* SHOW_LAST_ERROR */
	};
	const char *p[1];
	PGresult *e = NULL, *a = NULL;
	int i, j, rc = 1;

	if (argc != 1 || !is_event_id(argv[0]))
		return ctl_fail("usage: marketpayctl webhook show EVENT_ID");
	p[0] = argv[0];
	if ((e = ctl_exec(c, "webhook show",
	    "SELECT id, merchant_id, type, status, attempts, mp_iso(created_at),"
	    " mp_iso(next_attempt_at), mp_iso(delivered_at), last_error, body"
	    " FROM webhook_events WHERE id = $1", 1, p)) == NULL ||
	    (a = ctl_exec(c, "webhook show",
	    "SELECT attempt, mp_iso(attempted_at), coalesce(http_status::text, '-'), duration_ms,"
	    " url, coalesce(error, '') FROM webhook_attempts WHERE event_id = $1 ORDER BY attempt",
	    1, p)) == NULL)
		goto out;
	if (PQntuples(e) != 1) {
		ctl_fail("no event %s", argv[0]);
		goto out;
	}
	for (i = SHOW_ID; i < SHOW_BODY; i++)
		printf("%s\t%s\n", names[i], PQgetvalue(e, 0, i));
	for (j = 0; j < PQntuples(a); j++)
		printf("attempt\t%s\t%s\t%s\t%s\t%s\t%s\n", PQgetvalue(a, j, ATTEMPT_NUMBER),
		    PQgetvalue(a, j, ATTEMPT_AT), PQgetvalue(a, j, ATTEMPT_HTTP),
		    PQgetvalue(a, j, ATTEMPT_DURATION), PQgetvalue(a, j, ATTEMPT_URL),
		    PQgetvalue(a, j, ATTEMPT_ERROR));
	/* Last, as it is: whatever it holds, everything after "body\t" is the body. */
	printf("body\t%s\n", PQgetvalue(e, 0, SHOW_BODY));
	rc = 0;
out:
	PQclear(e);
	PQclear(a);
	return rc;
}

int
ctl_webhook_redeliver(struct ctl *c, int argc, char **argv)
{
	const char *p[1];
	char missing[64];

	if (argc != 1 || !is_event_id(argv[0]))
		return ctl_fail("usage: marketpayctl webhook redeliver EVENT_ID");
	p[0] = argv[0];
	/*
	 * The schedule starts again (attempts counts the attempts since the event was queued or
	 * last redelivered); the attempts already made stay in webhook_attempts. The NOTIFY,
	 * sent at commit, wakes the daemons at once.
	 */
	snprintf(missing, sizeof(missing), "no event %s", argv[0]);
	return ctl_exec_print(c, "webhook redeliver",
	    "UPDATE webhook_events SET status = 'pending', next_attempt_at = now(), attempts = 0,"
	    " delivered_at = NULL, lease_owner = NULL, lease_until = NULL WHERE id = $1"
	    " RETURNING id, pg_notify('marketpay_webhooks', id)", 1, p, missing);
}
