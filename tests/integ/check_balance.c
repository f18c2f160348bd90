/*
 * Integration tests of GET balance and GET balance-transactions on the real stack: the
 * balance before any account and after, and over a long mixed run (payments, refunds with
 * and without reversals, transfers, reversals) the balance transactions as one chain with no
 * gap, each of the right type and source, paged and filtered like every list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "checkout_form.h"
#include "fixture.h"
#include "lists.h"
#include "refunds.h"
#include "transfers.h"

#define ROUNDS 6
#define UUID_RE "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"

static struct merchant shop;
static char secret[128];

/* The balance of auth's merchant: {available, currency, account_number} (owned by r). */
static struct json_object *
balance(const char *auth, struct http_resp *r)
{
	struct json_object *b;

	api("GET", auth, NULL, NULL, r, LISTS "balance");
	ck_assert_msg(r->status == 200, "%ld %s", r->status, r->body);
	ck_assert_int_eq(json_object_object_length(r->json), 3);
	ck_assert(json_object_object_get_ex(r->json, "balance", &b));
	ck_assert_int_eq(json_object_object_length(b), 3);
	return b;
}

START_TEST(test_balance_before_any_account)
{
	char auth[200];
	const char *id = ctl("merchant create --name 'Never paid'"), *key;
	struct http_resp r;
	struct json_object *b;

	need(id != NULL, "merchant create");
	need((key = ctl("key create %s", id)) != NULL, "key create");
	snprintf(auth, sizeof(auth), "Authorization: API-KEY %s", key);
	b = balance(auth, &r);
	ck_assert_str_eq(jstr(b, "available"), "0.00");
	ck_assert_str_eq(jstr(b, "currency"), "AFN");
	ck_assert_ptr_null(jstr(b, "account_number"));
	http_free(&r);
	/* No account, no entries; a cursor names nothing. */
	list_expect(auth, "id", "", "balance-transactions");
	list_refused(auth, "balance-transactions?starting_after=btx_1", 400,
	    "starting_after: no such balance transaction");
}
END_TEST

/* A long mixed run, then the whole record checked as one chain. */
START_TEST(test_chain)
{
	char cust[16], vendor[16], sid[37], tr[40], body[256], prev[64] = "";
	const char *all, *types[] = { "payment", "refund", "transfer", "transfer_reversal",
		"deposit" };
	const int counts[] = { ROUNDS, 2 * ROUNDS, ROUNDS, ROUNDS, 1 };
	struct http_resp r, p;
	struct json_object *data, *b, *it;
	long long after = -1, sum = 0;
	int i, n[5] = { 0 };
	size_t k;

	new_customer("1000.00", cust);
	new_account(vendor, "--kind vendor");
	for (i = 0; i < ROUNDS; i++) {
		snprintf(body, sizeof(body), "%d.25", 10 + i);
		paid_session(shop.auth, body, "chain", cust, sid);
		refund_post(shop.auth, sid, "{\"amount\":1.00}", &p);
		ck_assert_msg(p.status == 200, "%s", p.body);
		http_free(&p);
		new_transfer(&shop, vendor, "2.00", tr);
		reversal_post(shop.auth, tr, "{\"amount\":0.50}", &p);
		ck_assert_msg(p.status == 200, "%s", p.body);
		http_free(&p);
		snprintf(body, sizeof(body), "{\"amount\":1.00,\"reverse_transfers\":"
		    "[{\"transfer_id\":\"%s\",\"amount\":0.25}]}", tr);
		refund_post(shop.auth, sid, body, &p);
		ck_assert_msg(p.status == 200, "%s", p.body);
		http_free(&p);
	}
	/* Every entry once, newest first, paged by 7. */
	all = list_walk(shop.auth, "balance-transactions", "id", 7, NULL, NULL, NULL);
	ck_assert_str_eq(all, db_value("SELECT string_agg('btx_' || e.id, ' ' ORDER BY"
	    " e.created_at DESC, e.id DESC) FROM ledger_entries e JOIN accounts a ON"
	    " a.id = e.account_id WHERE a.account_number = $1", shop.acct));
	/* The chain, from a page of all: each balance_after less its amount is the next's. */
	data = list_page(shop.auth, &r, "balance-transactions?limit=100");
	ck_assert_int_eq(json_object_array_length(data), 1 + 5 * ROUNDS);
	ck_assert(!list_has_more(&r));
	for (k = 0; k < json_object_array_length(data); k++) {
		long long amount, bal;

		it = json_object_array_get_idx(data, k);
		ck_assert_int_eq(json_object_object_length(it), 8);
		ck_assert(matches(jstr(it, "id"), "^btx_[1-9][0-9]*$"));
		ck_assert(matches(jstr(it, "created_at"), ISO_UTC));
		ck_assert_str_eq(jstr(it, "currency"), "AFN");
		amount = list_cents(jstr(it, "amount"));
		bal = list_cents(jstr(it, "balance_after"));
		if (after >= 0)
			ck_assert_msg(bal == after, "%s: balance_after %lld, the newer one's balance"
			    " before %lld", jstr(it, "id"), bal, after);
		after = bal - amount;
		sum += amount;
		for (i = 0; i < 5 && strcmp(types[i], jstr(it, "type")) != 0; i++)
			;
		ck_assert_msg(i < 5, "type %s", jstr(it, "type"));
		n[i]++;
		/* The source by type; a transfer's is the request's first transfer. */
		ck_assert(i == 4 ? jstr(it, "source") == NULL : matches(jstr(it, "source"),
		    i == 0 ? UUID_RE : i == 1 ? "^re_" : i == 2 ? "^tr_" : "^trr_"));
		ck_assert(i != 1 || strcmp(jstr(it, "amount"), "-1.00") == 0 ||
		    strcmp(jstr(it, "amount"), "-0.75") == 0);
		ck_assert_str_eq(jstr(it, "transaction_id"), db_value("SELECT transaction_id::text"
		    " FROM ledger_entries WHERE id = substr($1, 5)::bigint", jstr(it, "id")));
		snprintf(prev, sizeof(prev), "%s", jstr(it, "id"));
	}
	/* The oldest started from nothing; the newest is the balance. */
	ck_assert_int_eq(after, 0);
	b = balance(shop.auth, &p);
	ck_assert_int_eq(list_cents(jstr(b, "available")), sum);
	ck_assert_int_eq(sum, balance_of(shop.acct));
	ck_assert_str_eq(jstr(b, "account_number"), shop.acct);
	http_free(&p);
	for (i = 0; i < 5; i++)
		ck_assert_msg(n[i] == counts[i], "%s: %d", types[i], n[i]);
	http_free(&r);
	/* The type filter, and the oldest as a cursor backward. */
	data = list_page(shop.auth, &r, "balance-transactions?type=transfer_reversal&limit=100");
	ck_assert_int_eq(json_object_array_length(data), ROUNDS);
	http_free(&r);
	data = list_page(shop.auth, &r, "balance-transactions?limit=1&ending_before=%s", prev);
	ck_assert(list_has_more(&r));
	ck_assert_str_eq(jstr(json_object_array_get_idx(data, 0), "type"), "payment");
	http_free(&r);
	list_refused(shop.auth, "balance-transactions?type=payout", 400, "type must be one of "
	    "payment, refund, transfer, transfer_reversal, deposit, adjustment");
	list_refused(shop.auth, "balance-transactions?starting_after=btx_0", 400,
	    "starting_after: no such balance transaction");
	list_refused(shop.auth, "balance-transactions?ending_before=tr_1", 400,
	    "ending_before: no such balance transaction");
	assert_ledger_ok();
}
END_TEST

#define CSV_HEADER "id,type,amount,balance_after,currency,source,transaction_id,created_at\r\n"

/* GETs balance-transactions + query as CSV as auth into r (a 200 of text/csv, no length). */
static void
csv_get(const char *auth, const char *query, struct http_resp *r)
{
	const char *h[] = { auth, "Accept: text/csv", NULL };
	char path[512], ct[128];

	snprintf(path, sizeof(path), LISTS "balance-transactions%s", query);
	ck_assert_int_eq(http_do("GET", path, h, NULL, -1, r), 0);
	ck_assert_msg(r->status == 200, "%ld %s", r->status, r->body);
	ck_assert_str_eq(http_header(r, "Content-Type", ct, sizeof(ct)),
	    "text/csv; charset=utf-8");
	ck_assert_ptr_null(http_header(r, "Content-Length", ct, sizeof(ct)));
	ck_assert_msg(strncmp(r->body, CSV_HEADER, strlen(CSV_HEADER)) == 0, "%s", r->body);
}

/* The JSON items of data as the CSV's lines (static buffer). */
static const char *
as_csv(struct json_object *data)
{
	static const char *const cols[] = { "id", "type", "amount", "balance_after", "currency",
		"source", "transaction_id", "created_at" };
	static char out[65536];
	size_t i, j;

	snprintf(out, sizeof(out), CSV_HEADER);
	for (i = 0; i < json_object_array_length(data); i++)
		for (j = 0; j < NELEM(cols); j++) {
			const char *v = jstr(json_object_array_get_idx(data, i), cols[j]);

			snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", v ? v : "",
			    j == NELEM(cols) - 1 ? "\r\n" : ",");
		}
	return out;
}

/* The CSV: the JSON's rows, every one unless limit is given; its parameters as the JSON's. */
START_TEST(test_csv)
{
	struct http_resp r, j;
	struct json_object *data;
	char cmd[512], line[256], q[160], *all;
	FILE *f;
	size_t n = 0;

	data = list_page(shop.auth, &j, "balance-transactions?limit=100");
	csv_get(shop.auth, "", &r);
	ck_assert_str_eq(r.body, as_csv(data));
	http_free(&r);
	/* Filters and cursors as for JSON: the same rows. */
	snprintf(q, sizeof(q), "?type=refund&starting_after=%s",
	    jstr(json_object_array_get_idx(data, 2), "id"));
	http_free(&j);
	data = list_page(shop.auth, &j, "balance-transactions%s&limit=100", q);
	csv_get(shop.auth, q, &r);
	ck_assert_str_eq(r.body, as_csv(data));
	http_free(&r);
	http_free(&j);
	data = list_page(shop.auth, &j, "balance-transactions?limit=3");
	csv_get(shop.auth, "?limit=3", &r);
	ck_assert_str_eq(r.body, as_csv(data));
	http_free(&r);
	http_free(&j);
	/* Nothing in range: the header alone. */
	csv_get(shop.auth, "?created_lt=2001-01-01T00:00:00Z", &r);
	ck_assert_str_eq(r.body, CSV_HEADER);
	http_free(&r);
	/* Refusals are the JSON 400s, before any CSV. */
	{
		const char *h[] = { shop.auth, "Accept: text/csv", NULL };

		ck_assert_int_eq(http_do("GET", LISTS "balance-transactions?limit=0", h, NULL, -1,
		    &r), 0);
		assert_fail(&r, 400, "limit must be a whole number from 1 to 100");
		http_free(&r);
		ck_assert_int_eq(http_do("GET", LISTS "balance-transactions?ending_before="
		    "btx_999999999", h, NULL, -1, &r), 0);
		assert_fail(&r, 400, "ending_before: no such balance transaction");
		http_free(&r);
	}
	/* The operator's report of today: the same rows, oldest first. */
	snprintf(cmd, sizeof(cmd), CTL "report balance-transactions --merchant %s --day"
	    " $(date -u +%%F)", shop.id);
	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	data = list_page(shop.auth, &j, "balance-transactions?limit=100");
	all = strdup(as_csv(data));
	while (fgets(line, sizeof(line), f) != NULL) {
		/* Line n + 1 of the report is line total - n of the API's (after the header). */
		if (n++ == 0)
			ck_assert_str_eq(line, CSV_HEADER);
		else
			ck_assert_msg(strstr(all, line) != NULL, "%s", line);
	}
	ck_assert_int_eq(pclose(f), 0);
	ck_assert_uint_eq(n, json_object_array_length(data) + 1);
	free(all);
	http_free(&j);
}
END_TEST

/* The lines of a CSV after its header in the other order (the header first; malloc'd). */
static char *
reversed(const char *csv)
{
	const char *rows = csv + strlen(CSV_HEADER), *end = csv + strlen(csv), *line;
	char *out = malloc(strlen(csv) + 1), *o = out;

	ck_assert_ptr_nonnull(out);
	memcpy(o, csv, strlen(CSV_HEADER));
	o += strlen(CSV_HEADER);
	while (end > rows) {
		for (line = end - 2; line > rows && line[-1] != '\n'; line--)
			;
		memcpy(o, line, (size_t)(end - line));
		o += end - line;
		end = line;
	}
	*o = '\0';
	return out;
}

/*
 * The report of a day longer than the report's batches: written as it is read (its reader
 * not reading, it waits with the day still being read: its transaction open, not the whole
 * day fetched and held), and whole: the API's CSV of that day, oldest first.
 */
START_TEST(test_report_streamed)
{
	struct merchant m;
	struct http_resp r;
	char app[32], cmd[512], query[128], buf[65536], *want, *got = NULL;
	const char *day, *state = NULL;
	size_t len = 0, n;
	FILE *f;
	int tries;

	new_merchant(&m, "1234", "1.00", false);
	list_deposits(m.acct, 2500);
	/* The day of most of them (at midnight UTC they fall on two). */
	ck_assert_ptr_nonnull(day = db_value("SELECT to_char(d, 'YYYY-MM-DD') || 'T00:00:00Z&"
	    "created_lt=' || to_char(d + 1, 'YYYY-MM-DD') FROM (SELECT (e.created_at AT TIME ZONE"
	    " 'UTC')::date AS d FROM ledger_entries e JOIN accounts a ON a.id = e.account_id"
	    " WHERE a.account_number = $1 GROUP BY 1 ORDER BY count(*) DESC LIMIT 1) x", m.acct));
	snprintf(query, sizeof(query), "?created_gte=%sT00:00:00Z", day);
	csv_get(m.auth, query, &r);
	want = reversed(r.body);
	http_free(&r);
	snprintf(app, sizeof(app), "report-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "PGAPPNAME=%s " CTL "report balance-transactions --merchant %s"
	    " --day %.10s", app, m.id, day);
	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	/* Unread, the pipe fills: the report waits, the day not read to its end. */
	for (tries = 0; tries < 100; tries++) {
		state = db_value("SELECT state || CASE WHEN query LIKE '%mp_list(%' THEN ', the day"
		    " read' ELSE '' END FROM pg_stat_activity WHERE application_name = $1", app);
		if (state != NULL && (strcmp(state, "idle in transaction") == 0 ||
		    strcmp(state, "idle, the day read") == 0))
			break;
		usleep(50000);
	}
	ck_assert_msg(state != NULL && strcmp(state, "idle in transaction") == 0,
	    "the report, its reader not reading: %s", state ? state : "not seen");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		ck_assert_ptr_nonnull(got = realloc(got, len + n + 1));
		memcpy(got + len, buf, n);
		len += n;
	}
	ck_assert_int_eq(pclose(f), 0);
	ck_assert_ptr_nonnull(got);
	got[len] = '\0';
	ck_assert_uint_gt(strlen(want), 1000 * 60);
	ck_assert_msg(strcmp(got, want) == 0, "the report (%zu bytes) is not the API's CSV of the"
	    " day oldest first (%zu bytes)", strlen(got), strlen(want));
	free(got);
	free(want);
}
END_TEST

/* The daily summary: the merchant's row sums to its day's entries. */
START_TEST(test_settlements_report)
{
	char cmd[512], line[512], want[128];
	FILE *f;
	int found = 0;

	snprintf(want, sizeof(want), "%s,AFN,", shop.id);
	ck_assert_ptr_nonnull(f = popen(CTL "report settlements --day $(date -u +%F)", "r"));
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	ck_assert_str_eq(line, "merchant_id,currency,payments,refunds,transfers,reversals,other,"
	    "net,entries\r\n");
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, want, strlen(want)) == 0) {
			found++;
			ck_assert_str_eq(line + strlen(want), db_value("SELECT concat_ws(',',"
			    " mp_money_text((sum(e.amount) FILTER (WHERE t.kind = 'payment'))::bigint),"
			    " mp_money_text((sum(e.amount) FILTER (WHERE t.kind = 'refund'))::bigint),"
			    " mp_money_text((sum(e.amount) FILTER (WHERE t.kind = 'transfer'))::bigint),"
			    " mp_money_text((sum(e.amount) FILTER (WHERE t.kind = 'reversal'))::bigint),"
			    " mp_money_text((sum(e.amount) FILTER (WHERE t.kind = 'deposit'))::bigint),"
			    " mp_money_text(sum(e.amount)::bigint), count(*)) || E'\\r\\n'"
			    " FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id"
			    " JOIN accounts a ON a.id = e.account_id WHERE a.account_number = $1",
			    shop.acct));
		}
	ck_assert_int_eq(pclose(f), 0);
	ck_assert_int_eq(found, 1);
	snprintf(cmd, sizeof(cmd), CTL "report settlements --day 2026-02-30 2>/dev/null");
	ck_assert_int_ne(sh("%s", cmd), 0);
	ck_assert_int_ne(sh(CTL "report settlements --day tomorrow 2>/dev/null"), 0);
	ck_assert_int_ne(sh(CTL "report balance-transactions --day 2026-01-01 2>/dev/null"), 0);
	ck_assert_int_ne(sh(CTL "report balance-transactions --merchant 999999999 --day 2026-01-01"
	    " 2>/dev/null"), 0);
}
END_TEST

/* Another merchant's entries, and the vendor's, are no cursor of this one's. */
START_TEST(test_isolation)
{
	struct merchant m;
	char path[128];

	new_merchant(&m, "1234", "5.00", false);
	snprintf(path, sizeof(path), "balance-transactions?starting_after=btx_%s",
	    db_value("SELECT max(e.id) FROM ledger_entries e JOIN accounts a ON a.id = e.account_id"
	    " WHERE a.account_number = $1", m.acct));
	list_refused(shop.auth, path, 400, "starting_after: no such balance transaction");
	snprintf(path, sizeof(path), "balance-transactions?ending_before=btx_%s",
	    db_value("SELECT max(e.id) FROM ledger_entries e JOIN accounts a ON a.id = e.account_id"
	    " WHERE a.kind = 'system'", NULL));
	list_refused(shop.auth, path, 400, "ending_before: no such balance transaction");
}
END_TEST

static void
setup(void)
{
	new_merchant(&shop, "1234", "100.00", true);
	/* Its events go to the stack's receiver: undeliverable ones would keep the outbox busy
	 * with retries for the suites after this one. */
	merchant_webhook(&shop, secret);
	service_key_load(shop.auth);
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("balance", "balance", 120, &t);

	tcase_add_test(t, test_balance_before_any_account);
	tcase_add_test(t, test_chain);
	/* After test_chain: they read what it made. */
	tcase_add_test(t, test_csv);
	tcase_add_test(t, test_settlements_report);
	tcase_add_test(t, test_isolation);
	tcase_add_test(t, test_report_streamed);
	return fixture_main(s, setup, service_key_free);
}
