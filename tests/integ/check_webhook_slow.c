/*
 * Endpoints that hang or fail, and a daemon killed mid-flight: the other merchants' events
 * still go out at once, at most webhook_endpoint_in_flight (10) deliveries of one endpoint
 * are in flight, a failing endpoint's breaker opens and closes, nothing is lost (see
 * marketpay-webhookd(8)), and a claim reads the outbox by its indexes, however large. Run
 * by tests/integration.sh, whose stack has webhook_timeout = 3, webhook_retry_schedule =
 * 1,1,1 and webhook_breaker_cooldown = 2.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <check.h>
#include <libpq-fe.h>

#include "fixture.h"
#include "outbox.h"
#include "receiver.h"

#define HANGING 6         /* merchants whose endpoints never answer */
#define HANGING_EVENTS 12 /* each: more than the 10 one endpoint may have in flight */
#define HEALTHY_EVENTS 5
#define PER_ENDPOINT 10   /* webhook_endpoint_in_flight's default */
#define LEASE_WAIT 30000  /* webhook_timeout + the lease's 10 s margin, and some */

/* A new merchant whose webhooks go to url; its id (static). */
static const char *
merchant_at(const char *name, const char *url)
{
	static char id[32];

	snprintf(id, sizeof(id), "%s", ctl("merchant create --name '%s'", name));
	ck_assert_ptr_nonnull(ctl("merchant webhook %s --url %s", id, url));
	return id;
}

/*
 * n events of merchant m, made in one statement (on a machine where a PostgreSQL connection
 * takes 22 ms, one connection per event made 72 of them outlast the hanging attempts the
 * case compares them with), their ids appended to ids (space-separated) unless ids is NULL
 * (a backlog whose ids would not fit db_valuev's reply).
 */
static void
add_events(const char *m, int n, char *ids, size_t len)
{
	char count[16];
	const char *p[3] = { m, count, ids ? "t" : "f" }, *made;

	snprintf(count, sizeof(count), "%d", n);
	made = db_valuev("WITH e AS (INSERT INTO webhook_events (id, merchant_id, type, body)"
	    " SELECT 'evt_' || md5(random()::text || g), $1, 'payment.succeeded', '{\"slow\":true}'"
	    " FROM generate_series(1, $2::int) g RETURNING id)"
	    " SELECT CASE WHEN $3::boolean THEN string_agg(id, ' ') ELSE count(*)::text END FROM e",
	    3, p);
	ck_assert_ptr_nonnull(made);
	if (ids != NULL)
		snprintf(ids + strlen(ids), len - strlen(ids), "%s%s", ids[0] ? " " : "", made);
}

START_TEST(test_hanging_endpoints_isolated)
{
	char url[64], hang_ids[HANGING * HANGING_EVENTS * 40] = "", ok_ids[HEALTHY_EVENTS * 40] = "";
	char hang[HANGING][32], healthy[32];
	const char *p[2];
	/* Completes connections (the kernel's backlog) and never answers. */
	int port, hole = loopback_listener(&port, 256), i;

	quiet();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", port);
	/* Every merchant first (marketpayctl runs): the events are then made within moments. */
	for (i = 0; i < HANGING; i++)
		snprintf(hang[i], sizeof(hang[i]), "%s", merchant_at("Hanging shop", url));
	snprintf(healthy, sizeof(healthy), "%s", merchant_at("Healthy shop",
	    getenv("MARKETPAY_WEBHOOK_RECEIVER")));
	for (i = 0; i < HANGING; i++)
		add_events(hang[i], HANGING_EVENTS, hang_ids, sizeof(hang_ids));
	usleep(200000);   /* the hanging merchants' events are the oldest due */
	add_events(healthy, HEALTHY_EVENTS, ok_ids, sizeof(ok_ids));
	wait_value("SELECT count(*) FROM webhook_events WHERE id = ANY(string_to_array($1, ' '))"
	    " AND status = 'delivered'", ok_ids, "5", 5000);

	/* Wait for the hanging endpoints' first attempts to time out and be recorded. */
	wait_value("SELECT count(*) FROM webhook_attempts WHERE event_id ="
	    " ANY(string_to_array($1, ' '))", hang_ids, "60", WAIT_MS);
	p[0] = hang_ids;
	p[1] = ok_ids;
	/* Every healthy event went out before the first hanging attempt even ended... */
	ck_assert_str_eq(db_valuev("SELECT (SELECT max(delivered_at) FROM webhook_events WHERE"
	    " id = ANY(string_to_array($2, ' '))) < min(attempted_at +"
	    " make_interval(secs => duration_ms / 1000.0)) FROM webhook_attempts"
	    " WHERE event_id = ANY(string_to_array($1, ' '))", 2, p), "t");
	/* ... and each well within a second of being queued. */
	ck_assert_str_eq(db_value("SELECT max(delivered_at - created_at) < interval '1 s' FROM"
	    " webhook_events WHERE id = ANY(string_to_array($1, ' '))", ok_ids), "t");
	/* Each hanging endpoint had at most PER_ENDPOINT requests in flight at once. */
	ck_assert_str_eq(db_value("WITH a AS (SELECT e.merchant_id, w.attempted_at,"
	    " w.attempted_at + make_interval(secs => w.duration_ms / 1000.0) AS ended"
	    " FROM webhook_attempts w JOIN webhook_events e ON e.id = w.event_id"
	    " WHERE w.event_id = ANY(string_to_array($1, ' '))),"
	    " first AS (SELECT merchant_id, min(ended) AS ended FROM a GROUP BY merchant_id)"
	    " SELECT max(n) FROM (SELECT count(*) AS n FROM a JOIN first USING (merchant_id)"
	    " WHERE a.attempted_at < first.ended GROUP BY merchant_id) x", hang_ids), "10");
	/* Their breakers opened: the operator sees it, the rest of their events wait unspent. */
	ck_assert_str_eq(db_value("SELECT count(*) FILTER (WHERE state = 'open'"
	    " AND failures >= 5 AND last_error LIKE '%timed out%') FROM webhook_endpoint_health"
	    " WHERE url = $1", url), "6");
	ck_assert_str_eq(db_value("SELECT count(*) FROM webhook_events WHERE id ="
	    " ANY(string_to_array($1, ' ')) AND attempts = 0 AND status = 'pending'", hang_ids),
	    "12");
	ck_assert_int_eq(sh(CTL "webhook endpoints | grep -c 'open.*%s' | grep -qx 6", url), 0);

	/* The endpoints are fixed: every event of theirs is delivered, none lost. */
	for (i = 0; i < HANGING; i++)
		ck_assert_int_eq(sh(CTL "merchant webhook %s --url \"$MARKETPAY_WEBHOOK_RECEIVER\""
		    " --keep-secret >/dev/null", hang[i]), 0);
	wait_value("SELECT count(*) FROM webhook_events WHERE id = ANY(string_to_array($1, ' '))"
	    " AND status = 'delivered'", hang_ids, "72", LEASE_WAIT);
	close(hole);
}
END_TEST

/* A merchant with a backlog gets its share, not the whole daemon. */
START_TEST(test_busy_merchant_does_not_starve_others)
{
	const char *recv = getenv("MARKETPAY_WEBHOOK_RECEIVER");
	char busy[32], quiet_shop[32], other[64];
	const char *p[2] = { busy, other };

	quiet();
	snprintf(busy, sizeof(busy), "%s", merchant_at("Busy shop", recv));
	/* Both merchants first (marketpayctl runs, slow where a fork is): the quiet one's event
	 * is then made a moment after the backlog, not after the backlog went out. */
	snprintf(quiet_shop, sizeof(quiet_shop), "%s", merchant_at("Quiet shop", recv));
	add_events(busy, 400, NULL, 0);
	snprintf(other, sizeof(other), "%s", insert_event(quiet_shop, "{\"n\":0}"));
	wait_status(other, "delivered");
	quiet();
	/* Its one event went out while the busy merchant's backlog was still going out. */
	ck_assert_str_eq(db_valuev("SELECT (SELECT delivered_at FROM webhook_events WHERE id = $2)"
	    " < max(delivered_at) FROM webhook_events WHERE merchant_id = $1::bigint", 2, p),
	    "t");
}
END_TEST

/* One endpoint fails, then recovers: its breaker opens, a probe closes it again. */
START_TEST(test_breaker_opens_and_closes)
{
	char url[128], m[32], ids[12 * 40] = "", probe[64];
	FILE *f;

	quiet();
	snprintf(url, sizeof(url), "%s", getenv("MARKETPAY_WEBHOOK_RECEIVER"));
	*strrchr(url, '/') = '\0';
	snprintf(url + strlen(url), sizeof(url) - strlen(url), "/flaky/b%d", (int)getpid());
	snprintf(probe, sizeof(probe), "flaky-b%d", (int)getpid());
	ck_assert_ptr_nonnull(f = fopen(stack_file(probe), "w"));
	fclose(f);
	snprintf(m, sizeof(m), "%s", merchant_at("Flaky shop", url));
	add_events(m, 12, ids, sizeof(ids));
	wait_value("SELECT state FROM webhook_endpoint_health WHERE merchant_id = $1::bigint", m,
	    "open", WAIT_MS);
	ck_assert_str_eq(db_value("SELECT failures >= 5 AND opens = 1 AND last_error = 'HTTP 503'"
	    " AND open_until > opened_at FROM webhook_endpoints WHERE merchant_id = $1::bigint",
	    m), "t");
	/*
	 * While it is open nothing is sent: held open 5 s longer, every event due now, and once
	 * no attempt is in flight (no lease left), the attempt count stands still for a second.
	 */
	ck_assert_str_eq(db_value("WITH u AS (UPDATE webhook_endpoints SET open_until = now() +"
	    " interval '5 s' WHERE merchant_id = $1::bigint AND open_until > now() RETURNING 1)"
	    " SELECT count(*) FROM u", m), "1");
	wait_value("SELECT count(*) FROM webhook_events WHERE merchant_id = $1::bigint AND"
	    " lease_owner IS NOT NULL", m, "0", WAIT_MS);
	db_value("UPDATE webhook_events SET next_attempt_at = now() WHERE merchant_id ="
	    " $1::bigint AND status = 'pending' RETURNING 1", m);
	snprintf(probe, sizeof(probe), "%s", db_value("SELECT count(*) FROM webhook_attempts a"
	    " JOIN webhook_events e ON e.id = a.event_id WHERE e.merchant_id = $1::bigint", m));
	usleep(1000000);
	ck_assert_str_eq(db_value("SELECT count(*) FROM webhook_attempts a JOIN webhook_events e"
	    " ON e.id = a.event_id WHERE e.merchant_id = $1::bigint", m), probe);
	ck_assert_str_eq(db_value("SELECT count(*) FROM webhook_events WHERE merchant_id ="
	    " $1::bigint AND status = 'pending' AND lease_owner IS NULL", m), "12");
	db_value("UPDATE webhook_endpoints SET open_until = now() WHERE merchant_id = $1::bigint"
	    " RETURNING 1", m);
	/* A probe that fails opens it again, for twice as long. */
	wait_value("SELECT opens FROM webhook_endpoints WHERE merchant_id = $1::bigint", m, "2",
	    WAIT_MS);
	/* The endpoint recovers: the next probe closes the breaker and everything goes out. */
	snprintf(probe, sizeof(probe), "flaky-b%d", (int)getpid());
	unlink(stack_file(probe));
	wait_value("SELECT count(*) FROM webhook_events WHERE id = ANY(string_to_array($1, ' '))"
	    " AND status = 'delivered'", ids, "12", WAIT_MS);
	ck_assert_str_eq(db_value("SELECT failures || ' ' || opens || ' ' || (open_until IS NULL)"
	    " FROM webhook_endpoints WHERE merchant_id = $1::bigint", m), "0 0 true");
}
END_TEST

/*
 * kill -9 of the sender holding events mid-flight: nothing is lost. Their leases run out,
 * another sender sends them again with the same webhook-id; the killed attempts leave no
 * record.
 */
START_TEST(test_killed_mid_flight)
{
	char url[64], m[32], ids[4 * 40] = "", owners[512], *owner, *save = NULL;
	const char *pid;
	int port, hole = loopback_listener(&port, 64);

	quiet();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", port);
	snprintf(m, sizeof(m), "%s", merchant_at("Killed mid-flight", url));
	add_events(m, 4, ids, sizeof(ids));
	wait_value("SELECT count(*) FROM webhook_events WHERE id = ANY(string_to_array($1, ' '))"
	    " AND lease_until > now()", ids, "4", WAIT_MS);
	/* Every sender holding one of them (host:pid) is killed. */
	snprintf(owners, sizeof(owners), "%s", db_value("SELECT string_agg(DISTINCT lease_owner,"
	    " ' ') FROM webhook_events WHERE id = ANY(string_to_array($1, ' '))", ids));
	for (owner = strtok_r(owners, " ", &save); owner != NULL;
	    owner = strtok_r(NULL, " ", &save)) {
		ck_assert_ptr_nonnull(pid = strrchr(owner, ':'));
		ck_assert_int_eq(kill((pid_t)atol(pid + 1), SIGKILL), 0);
	}
	/* The endpoint answers now (the merchant fixed it while the daemon was down). */
	ck_assert_int_eq(sh(CTL "merchant webhook %s --url \"$MARKETPAY_WEBHOOK_RECEIVER\""
	    " --keep-secret >/dev/null", m), 0);
	wait_value("SELECT count(*) FROM webhook_events WHERE id = ANY(string_to_array($1, ' '))"
	    " AND status = 'delivered'", ids, "4", LEASE_WAIT);
	/* One recorded attempt each: the delivery; the killed sender's left none. */
	ck_assert_str_eq(db_value("SELECT count(*) || ' ' || count(DISTINCT event_id) || ' ' ||"
	    " bool_and(http_status = 204 AND attempt = 1) FROM webhook_attempts WHERE event_id ="
	    " ANY(string_to_array($1, ' '))", ids), "4 4 true");
	ck_assert_int_eq(receiver_wait(strtok(ids, " "), 1, 5000), 1);
	close(hole);
}
END_TEST

/*
 * A claim reads the outbox by its indexes, never all of it: with 20,000 events more in the
 * table (one merchant's backlog), mp_webhook_claim makes no sequential scan of
 * webhook_events. Its update of the chosen events was a hash join over one while the table
 * held some tens of thousands of rows (sql/042_webhook_claim_by_key.sql). In a transaction
 * rolled back at the end: the backlog is never sent, nor seen by the daemon.
 */
START_TEST(test_claim_reads_by_key)
{
	const char *scans = "SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relname ="
	    " 'webhook_events'", *p[1], *v;
	char m[32], before[32], claimed[32], after[32];
	PGconn *c = db_connect_as(NULL);
	char state[6];

	quiet();
	snprintf(m, sizeof(m), "%s", merchant_at("Backlog", "http://127.0.0.1:9/never"));
	p[0] = m;
	ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
	ck_assert_str_eq(db_state(c, "BEGIN", 0, NULL, state), "00000");
	ck_assert_str_eq(db_value_on(c, "WITH e AS (INSERT INTO webhook_events (id, merchant_id,"
	    " type, body) SELECT 'evt_' || md5(random()::text || g), $1, 'payment.succeeded',"
	    " '{}' FROM generate_series(1, 20000) g RETURNING 1) SELECT count(*) FROM e", 1, p),
	    "20000");
	/* The planner knows the table as it is now (ANALYZE counts this transaction's rows). */
	ck_assert_str_eq(db_state(c, "ANALYZE webhook_events", 0, NULL, state), "00000");
	ck_assert_ptr_nonnull(v = db_value_on(c, scans, 0, NULL));
	snprintf(before, sizeof(before), "%s", v);
	ck_assert_ptr_nonnull(v = db_value_on(c, "SELECT count(*) FILTER (WHERE merchant_id ="
	    " $1::bigint) FROM mp_webhook_claim('check_webhook_slow', 200, 10, 30)", 1, p));
	snprintf(claimed, sizeof(claimed), "%s", v);
	ck_assert_ptr_nonnull(v = db_value_on(c, scans, 0, NULL));
	snprintf(after, sizeof(after), "%s", v);
	db_state(c, "ROLLBACK", 0, NULL, state);
	PQfinish(c);
	/* Its 10 (webhook_endpoint_in_flight) were leased, by their keys. */
	ck_assert_str_eq(claimed, "10");
	ck_assert_msg(strcmp(before, after) == 0, "the claim scanned webhook_events: %s "
	    "sequential scans before it, %s after", before, after);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("webhook isolation", "slow and failing endpoints", 180, &t);

	env("MARKETPAY_WEBHOOK_RECEIVER");
	tcase_add_test(t, test_hanging_endpoints_isolated);
	tcase_add_test(t, test_busy_merchant_does_not_starve_others);
	tcase_add_test(t, test_breaker_opens_and_closes);
	tcase_add_test(t, test_killed_mid_flight);
	tcase_add_test(t, test_claim_reads_by_key);
	return run_suite(s);
}
