/*
 * marketpayctl's operator commands against the real stack (tests/integration.sh): db status
 * (applied and pending migrations, its exit status for deploy scripts); merchant list, show,
 * disable and enable; purge (retention of webhook events and ended unpaid sessions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "checkout_form.h"
#include "fixture.h"
#include "outbox.h"

static int
ctl_is_number(const char *s)
{
	return s != NULL && s[0] != '\0' && strspn(s, "0123456789") == strlen(s);
}

/* The stack's directory: where the cases write what they compare. */
static char dir[1024];

/*
 * db status: one line per migration file, "applied <UTC time>" for every file of the stack's
 * sql_dir (exit 0); a file db migrate has not run shows "pending" and exits 1, then applied
 * once migrated.
 */
START_TEST(test_db_status)
{
	char probe[1200], out[1200];
	const char *n;

	snprintf(out, sizeof(out), "%s/status.out", dir);
	ck_assert_int_eq(sh(CTL "db status >'%s'", out), 0);
	n = db_value("SELECT count(*) FROM schema_migrations", NULL);
	ck_assert_int_eq(sh("test \"$(grep -cE '^[0-9]{3}_[a-z0-9_]+\\.sql applied "
	    "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' '%s')\" = %s", out, n), 0);
	ck_assert_int_eq(sh("test \"$(wc -l <'%s')\" = \"$(ls \"$MP_SRCDIR\"/sql/*.sql | wc -l)\"",
	    out), 0);
	ck_assert(file_has(out, "001_foundation.sql applied ", 0));

	/* The same files and one more: it is pending, and the exit status says so. */
	snprintf(probe, sizeof(probe), "%s/status-sql", dir);
	ck_assert_int_eq(sh("rm -rf '%s' && mkdir '%s' && cp \"$MP_SRCDIR\"/sql/*.sql '%s' &&"
	    " echo 'SELECT 1;' >'%s/999_status_probe.sql'", probe, probe, probe, probe), 0);
	ck_assert_int_eq(sh(CTL "-S '%s' db status >'%s'; test $? = 1", probe, out), 0);
	ck_assert_int_eq(sh("tail -n 1 '%s' | grep -qx '999_status_probe.sql pending'", out), 0);
	ck_assert_int_eq(sh("grep -c pending '%s' | grep -qx 1", out), 0);
	ck_assert_int_eq(sh(CTL "-S '%s' db migrate >/dev/null", probe), 0);
	ck_assert_int_eq(sh(CTL "-S '%s' db status >'%s'", probe, out), 0);
	ck_assert(file_has(out, "999_status_probe.sql applied ", 0));
	ck_assert_ptr_nonnull(db_value("DELETE FROM schema_migrations WHERE version ="
	    " '999_status_probe.sql' RETURNING 1", NULL));
	/* A directory that is not there: an error, not "nothing pending". */
	ck_assert_int_eq(sh(CTL "-S '%s/none' db status >/dev/null 2>&1; test $? = 1", dir), 0);
}
END_TEST

/*
 * merchant list: one line per merchant, a name with a tab on one line; merchant show: the
 * fields, the key counts, the endpoint; disable and enable set the status and nothing else;
 * an unknown or malformed id fails and changes nothing.
 */
START_TEST(test_merchant_list_show)
{
	char m[32], out[1200], line[512], before[512], got[1024];
	FILE *fp;
	const char *row = "SELECT concat_ws('|', name, currency, status, webhook_url, created_at)"
	    " FROM merchants WHERE id = $1::bigint";

	snprintf(m, sizeof(m), "%s", ctl("merchant create --name \"$(printf 'Ctl\\tlist')\""
	    " --currency USD --webhook-url https://list.example/h"));
	ck_assert(ctl_is_number(m));
	ck_assert_ptr_nonnull(ctl("key create %s", m));
	ck_assert_ptr_nonnull(ctl("key create %s", m));
	ck_assert_ptr_nonnull(ctl("key revoke \"$(\"$MARKETPAYCTL\" -c \"$MARKETPAY_CONFIG\" key list"
	    " %s | head -n 1 | cut -f 2)\"", m));
	snprintf(out, sizeof(out), "%s/merchants.out", dir);
	ck_assert_int_eq(sh(CTL "merchant list >'%s'", out), 0);
	snprintf(line, sizeof(line), "%s\tCtl list\tUSD\tactive\thttps://list.example/h\t", m);
	ck_assert_msg(file_has(out, line, 0), "merchant list has no line \"%s\"", line);
	ck_assert_int_eq(sh("test \"$(wc -l <'%s')\" = %s", out,
	    db_value("SELECT count(*) FROM merchants", NULL)), 0);
	ck_assert_int_eq(sh("awk -F '\\t' 'NF != 6 { exit 1 }' '%s'", out), 0);

	snprintf(out, sizeof(out), "%s/merchant.out", dir);
	ck_assert_int_eq(sh(CTL "merchant show %s >'%s'", m, out), 0);
	snprintf(line, sizeof(line), "id\t%s\nname\tCtl list\ncurrency\tUSD\nstatus\tactive\n"
	    "webhook_url\thttps://list.example/h\nwebhook_endpoint\tclosed\nsettlement\toff\n"
	    "keys_active\t1\nkeys_total\t2\ncreated_at\t", m);
	ck_assert_ptr_nonnull(fp = fopen(out, "r"));
	got[fread(got, 1, sizeof(got) - 1, fp)] = '\0';
	fclose(fp);
	ck_assert_msg(strncmp(got, line, strlen(line)) == 0, "merchant show printed:\n%s", got);
	ck_assert_ptr_null(ctl("merchant show 999999999 2>/dev/null"));
	ck_assert_ptr_null(ctl("merchant show x 2>/dev/null"));

	snprintf(before, sizeof(before), "%s", db_value(row, m));
	ck_assert_ptr_null(ctl("merchant disable 999999999 2>/dev/null"));
	ck_assert_ptr_null(ctl("merchant disable 2>/dev/null"));
	ck_assert_str_eq(ctl("merchant disable %s", m), m);
	ck_assert_str_eq(db_value("SELECT status FROM merchants WHERE id = $1::bigint", m),
	    "disabled");
	ck_assert_int_eq(sh(CTL "merchant show %s | grep -qx 'status\tdisabled'", m), 0);
	ck_assert_str_eq(ctl("merchant enable %s", m), m);
	ck_assert_str_eq(db_value(row, m), before);
}
END_TEST

/*
 * Runs sql, an INSERT of merchant m's row in status with the integers nums[n] (n <= 4) as
 * $3...; returns the id it gives (static buffer).
 */
static const char *
insert_aged(const char *sql, const char *m, const char *status, const int *nums, int n)
{
	static char id[64];
	char text[4][16];
	const char *p[6] = { m, status }, *v;
	int i;

	for (i = 0; i < n; i++) {
		snprintf(text[i], sizeof(text[i]), "%d", nums[i]);
		p[2 + i] = text[i];
	}
	v = db_valuev(sql, 2 + n, p);
	ck_assert_ptr_nonnull(v);
	snprintf(id, sizeof(id), "%s", v);
	return id;
}

/*
 * A webhook event of merchant m, status, created days ago (delivered then too when
 * delivered), due only in a year (no sender takes it); with attempts attempts made days_try
 * days ago and one redelivery then when redelivered. Its id (static buffer).
 */
static const char *
event_aged(const char *m, const char *status, int days, int attempts, int days_try,
    int redelivered)
{
	const int nums[4] = { days, attempts, days_try, redelivered };

	return insert_aged("WITH e AS (INSERT INTO webhook_events (id, merchant_id, type, body,"
	    " status, attempts, created_at, delivered_at, next_attempt_at) VALUES ('evt_' ||"
	    " md5(random()::text), $1::bigint, 'payment.succeeded', '{}', $2, $4::int,"
	    " now() - make_interval(days => $3::int), CASE WHEN $2 = 'delivered' THEN"
	    " now() - make_interval(days => $3::int) END, now() + interval '1 year') RETURNING id),"
	    " a AS (INSERT INTO webhook_attempts (event_id, attempt, attempted_at, url, duration_ms)"
	    " SELECT e.id, g, now() - make_interval(days => $5::int), 'https://x.example/h', 1"
	    " FROM e, generate_series(1, $4::int) g),"
	    " r AS (INSERT INTO webhook_redeliveries (event_id, merchant_id, requested_at)"
	    " SELECT e.id, $1::bigint, now() - make_interval(days => $5::int) FROM e"
	    " WHERE $6::int = 1) SELECT id FROM e", m, status, nums, 4);
}

/* A session of merchant m, status, created (and ended) days ago, with items items. */
static const char *
session_aged(const char *m, const char *status, int days, int items)
{
	const int nums[2] = { days, items };

	return insert_aged("WITH s AS (INSERT INTO payment_sessions (merchant_id, status, amount,"
	    " currency, created_at, expires_at, closed_at) VALUES ($1::bigint, $2::text, 100, 'AFN',"
	    " now() - make_interval(days => $3::int),"
	    " now() - make_interval(days => $3::int) + interval '30 minutes',"
	    " CASE WHEN $2 <> 'open' THEN now() - make_interval(days => $3::int) END)"
	    " RETURNING id), i AS (INSERT INTO session_items (session_id, position, item_id, name,"
	    " price) SELECT s.id, g, 'sku', 'Tea', 100 FROM s, generate_series(0, $4::int - 1) g)"
	    " SELECT id FROM s", m, status, nums, 2);
}

/* The number of rows of table (a constant name) whose column equals id. */
static int
rows_of(const char *table, const char *column, const char *id)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE %s::text = $1", table, column);
	return atoi(db_value(sql, id));
}

/*
 * purge: settled events older than retention_events_days (90) go with their attempts and
 * redeliveries, children first; a pending event, a younger one and one attempted lately
 * stay. Expired (also open past expiry) and canceled sessions older than
 * retention_sessions_days (365) go with their items; a younger one, a failed one and a paid
 * one (its ledger transaction) stay, and the ledger verifies. Batches of 2 add up; a second
 * run frees nothing; a shorter retention in the config frees more. The workers' role runs
 * the functions, which keep 30 days whatever they are asked, and deletes nothing itself.
 */
START_TEST(test_purge)
{
	char m[32], acct[16], paid[37], out[1200], conf[1024], state[6];
	char gone_ev[3][64], kept_ev[4][64], gone_s[3][64], kept_s[3][64];
	const char *freed[] = { "webhook_events\t3", "webhook_attempts\t3",
	    "webhook_redeliveries\t1", "payment_sessions\t3", "session_items\t4" };
	size_t i;

	/* Whatever an earlier run left (the counts below are the database's). */
	snprintf(conf, sizeof(conf), "%s", config_plus("retention-30.conf",
	    "retention_events_days = 30\nretention_sessions_days = 30"));
	ck_assert_int_eq(sh("\"$MARKETPAYCTL\" -c '%s' purge >/dev/null", conf), 0);
	snprintf(m, sizeof(m), "%s", ctl("merchant create --name 'Old shop'"));
	snprintf(gone_ev[0], 64, "%s", event_aged(m, "delivered", 91, 2, 91, 1));
	snprintf(gone_ev[1], 64, "%s", event_aged(m, "dead", 100, 1, 99, 0));
	snprintf(gone_ev[2], 64, "%s", event_aged(m, "skipped", 95, 0, 0, 0));
	snprintf(kept_ev[0], 64, "%s", event_aged(m, "pending", 200, 1, 200, 0));
	snprintf(kept_ev[1], 64, "%s", event_aged(m, "delivered", 89, 1, 89, 0));
	snprintf(kept_ev[2], 64, "%s", event_aged(m, "dead", 120, 1, 10, 0));
	snprintf(kept_ev[3], 64, "%s", event_aged(m, "delivered", 45, 1, 45, 0));
	snprintf(gone_s[0], 64, "%s", session_aged(m, "expired", 400, 2));
	snprintf(gone_s[1], 64, "%s", session_aged(m, "canceled", 500, 1));
	snprintf(gone_s[2], 64, "%s", session_aged(m, "open", 380, 1));
	snprintf(kept_s[0], 64, "%s", session_aged(m, "expired", 300, 1));
	snprintf(kept_s[1], 64, "%s", session_aged(m, "failed", 400, 1));
	new_customer("50.00", acct);
	paid_session(fx.auth_a, "5.00", "old-paid", acct, paid);
	snprintf(kept_s[2], 64, "%s", paid);
	ck_assert_ptr_nonnull(db_value("UPDATE payment_sessions SET created_at = created_at -"
	    " interval '400 days', expires_at = expires_at - interval '400 days', paid_at ="
	    " paid_at - interval '400 days', closed_at = closed_at - interval '400 days'"
	    " WHERE id = $1::uuid RETURNING 1", paid));

	snprintf(out, sizeof(out), "%s/purge.out", dir);
	ck_assert_int_eq(sh(CTL "purge --batch 2 >'%s'", out), 0);
	for (i = 0; i < NELEM(freed); i++)
		ck_assert_msg(file_has(out, freed[i], 0), "purge did not print \"%s\"", freed[i]);
	ck_assert_int_eq(sh("grep -qE '^idempotency_keys\t[0-9]+$' '%s' && test \"$(wc -l"
	    " <'%s')\" = 6", out, out), 0);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(rows_of("webhook_events", "id", gone_ev[i]), 0);
		ck_assert_int_eq(rows_of("webhook_attempts", "event_id", gone_ev[i]), 0);
		ck_assert_int_eq(rows_of("webhook_redeliveries", "event_id", gone_ev[i]), 0);
		ck_assert_int_eq(rows_of("payment_sessions", "id", gone_s[i]), 0);
		ck_assert_int_eq(rows_of("session_items", "session_id", gone_s[i]), 0);
		ck_assert_int_eq(rows_of("payment_sessions", "id", kept_s[i]), 1);
		ck_assert_int_eq(rows_of("session_items", "session_id", kept_s[i]), 1);
	}
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(rows_of("webhook_events", "id", kept_ev[i]), 1);
		ck_assert_int_eq(rows_of("webhook_attempts", "event_id", kept_ev[i]), 1);
	}
	ck_assert_str_eq(db_value("SELECT status FROM payment_sessions WHERE id = $1::uuid", paid),
	    "paid");
	assert_ledger_ok();

	/*
	 * Nothing more to free (run as the timer does, as the workers' role); then 30 days instead of 90 (and 365) frees the 45 and 89 day
	 * events and the 300 day session.
	 */
	ck_assert_int_eq(sh("PGUSER=mp_worker " CTL "purge >'%s' && grep -qx 'webhook_events.0'"
	    " '%s' && grep -qx 'payment_sessions.0' '%s'", out, out, out), 0);
	ck_assert_int_eq(sh("\"$MARKETPAYCTL\" -c '%s' purge >'%s'", conf, out), 0);
	ck_assert(file_has(out, "webhook_events\t2", 0));
	ck_assert(file_has(out, "payment_sessions\t1", 0));
	ck_assert_int_eq(rows_of("payment_sessions", "id", kept_s[0]), 0);
	ck_assert_int_eq(rows_of("payment_sessions", "id", kept_s[1]), 1);
	ck_assert_int_eq(rows_of("webhook_events", "id", kept_ev[1]), 0);
	ck_assert_int_eq(rows_of("webhook_events", "id", kept_ev[3]), 0);
	ck_assert_int_eq(rows_of("webhook_events", "id", kept_ev[2]), 1);
	/* Below the 30 days reconciliation needs: the configuration is refused. */
	snprintf(conf, sizeof(conf), "%s", config_plus("retention-29.conf",
	    "retention_events_days = 29"));
	ck_assert_int_ne(sh("\"$MARKETPAYCTL\" -c '%s' purge >/dev/null 2>&1", conf), 0);
	ck_assert_int_ne(sh(CTL "purge --batch 0 >/dev/null 2>&1"), 0);
	ck_assert_int_eq(rows_of("webhook_events", "id", kept_ev[0]), 1);

	/* The workers' role: the functions yes, a DELETE of its own no; 30 days kept anyway. */
	snprintf(kept_ev[3], 64, "%s", event_aged(m, "delivered", 20, 1, 20, 0));
	snprintf(kept_s[0], 64, "%s", session_aged(m, "expired", 20, 1));
	ck_assert_str_eq(db_as("mp_worker", "DELETE FROM webhook_events WHERE false", state),
	    "42501");
	ck_assert_str_eq(db_as("mp_worker", "DELETE FROM payment_sessions WHERE false", state),
	    "42501");
	ck_assert_str_eq(db_as("mp_worker", "SELECT * FROM mp_purge_events(0, 100)", state),
	    "00000");
	ck_assert_str_eq(db_as("mp_worker", "SELECT * FROM mp_purge_sessions(-5, 100)", state),
	    "00000");
	ck_assert_int_eq(rows_of("webhook_events", "id", kept_ev[3]), 1);
	ck_assert_int_eq(rows_of("payment_sessions", "id", kept_s[0]), 1);
	ck_assert_int_eq(rows_of("webhook_events", "id", kept_ev[2]), 1);
	ck_assert_int_eq(rows_of("payment_sessions", "id", paid), 1);
	assert_ledger_ok();
	/* The pending event would keep the webhook suites after this one from going quiet. */
	ck_assert_ptr_nonnull(db_value("DELETE FROM webhook_attempts WHERE event_id = $1"
	    " RETURNING 1", kept_ev[0]));
	ck_assert_ptr_nonnull(db_value("DELETE FROM webhook_events WHERE id = $1 RETURNING 1",
	    kept_ev[0]));
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("ctl", "marketpayctl", 120, &t);

	snprintf(dir, sizeof(dir), "%s", env("MARKETPAY_STACK_DIR"));
	env("MARKETPAYCTL");
	env("MP_SRCDIR");
	tcase_add_test(t, test_db_status);
	tcase_add_test(t, test_merchant_list_show);
	tcase_add_test(t, test_purge);
	return fixture_main(s, NULL, NULL);
}
