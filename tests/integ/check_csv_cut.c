/*
 * A CSV of balance transactions cut short, on the real stack (marketpay-api(7), GET
 * balance-transactions): when the database fails after the first rows went out, the
 * merchant's client must see a broken transfer (the chunked body never ends: libcurl's
 * CURLE_PARTIAL_FILE), never a file that looks complete; and the worker that served it must
 * serve its next request.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>

#include "fixture.h"
#include "lists.h"
#include "transfers.h"

#define ROWS 2500    /* deposits: with the first, more than two of the worker's batches (1000) */
#define CSV_HEADER "id,type,amount,balance_after,currency,source,transaction_id,created_at\r\n"
#define LOCK_SQL "LOCK TABLE ledger_entries IN ACCESS EXCLUSIVE MODE"

static struct merchant shop;

/*
 * The cut, made while the CSV streams (http_parallel_reqs calls it every 50 ms): the first
 * batch waits behind first's lock; second asks for the table behind it, so that when first
 * lets go the first batch runs and second has the table before the next batch asks; that
 * batch waits, and its backend is terminated.
 */
struct cut {
	PGconn *first, *second;
	char worker[16];   /* the worker's backend */
	int step;
};

/* Whether backend pid waits for a lock now. */
static bool
waits(const char *pid)
{
	const char *v = db_value("SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int AND"
	    " wait_event_type = 'Lock'", pid);

	return v != NULL && strcmp(v, "1") == 0;
}

static void
cut_step(void *arg)
{
	struct cut *c = arg;
	char pid[16];
	const char *v;
	PGresult *res;

	switch (c->step) {
	case 0:   /* the first batch waits: second lines up behind it */
		if ((v = db_value("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
		    " AND query LIKE '%mp_list(%' AND pid <> pg_backend_pid()", NULL)) == NULL)
			return;
		snprintf(c->worker, sizeof(c->worker), "%s", v);
		c->second = db_connect_as(NULL);
		ck_assert(PQsendQuery(c->second, "BEGIN; " LOCK_SQL) == 1);
		c->step++;
		return;
	case 1:   /* second waits behind it: the first batch goes */
		snprintf(pid, sizeof(pid), "%d", PQbackendPID(c->second));
		if (!waits(pid))
			return;
		db_release(c->first);
		c->first = NULL;
		c->step++;
		return;
	case 2:   /* the first batch is out, second holds the table */
		ck_assert(PQconsumeInput(c->second) == 1);
		if (PQisBusy(c->second))
			return;
		while ((res = PQgetResult(c->second)) != NULL)
			PQclear(res);
		c->step++;
		return;
	case 3:   /* the next batch waits: its connection goes */
		if (!waits(c->worker))
			return;
		ck_assert_str_eq(db_value("SELECT pg_terminate_backend($1::int)", c->worker), "t");
		db_release(c->second);
		c->second = NULL;
		c->step++;
		return;
	}
}

/* GETs balance-transactions + query as CSV (as shop) into r, during(arg) while it runs. */
static void
csv_get(const char *query, struct http_resp *r, void (*during)(void *), void *arg)
{
	const char *h[] = { shop.auth, "Accept: text/csv", NULL };
	struct http_req q = { "GET", NULL, h, NULL };
	char path[256];

	snprintf(path, sizeof(path), LISTS "balance-transactions%s", query);
	q.path = path;
	ck_assert_int_eq(http_parallel_reqs(1, &q, r, during, arg), 0);
	ck_assert_msg(r->status == 200, "%ld %s", r->status, r->body);
	ck_assert_msg(strncmp(r->body, CSV_HEADER, strlen(CSV_HEADER)) == 0, "%.200s", r->body);
}

/* The lines of a body (a last one without its end counted too). */
static long
lines(const struct http_resp *r)
{
	long n = 0;
	size_t i;

	for (i = 0; i < r->len; i++)
		n += r->body[i] == '\n';
	return n + (r->len > 0 && r->body[r->len - 1] != '\n');
}

/*
 * The worker log's line of request r (its Request-Id) holding needle (static buffer); the
 * line is written as the request ends, so it is waited for, two seconds at most.
 */
static const char *
log_line(const struct http_resp *r, const char *needle)
{
	static char line[2048];
	char path[1024], id[80], tag[96];
	int tries;

	ck_assert_ptr_nonnull(http_header(r, "Request-Id", id, sizeof(id)));
	snprintf(tag, sizeof(tag), " req=%s ", id);
	snprintf(path, sizeof(path), "%s/fcgi.log", getenv("MARKETPAY_STACK_DIR"));
	for (tries = 0; tries < 40; tries++) {
		FILE *f = fopen(path, "r");

		ck_assert_ptr_nonnull(f);
		while (fgets(line, sizeof(line), f) != NULL)
			if (strstr(line, tag) != NULL && strstr(line, needle) != NULL) {
				fclose(f);
				return line;
			}
		fclose(f);
		usleep(50000);
	}
	ck_abort_msg("no line of request %s with '%s' in %s", id, needle, path);
	return NULL;
}

/* The pid of the worker that served r, from its line in the log (static buffer). */
static const char *
worker_of(const struct http_resp *r)
{
	static char pid[16];
	const char *p = strstr(log_line(r, " status="), " pid=");

	ck_assert_ptr_nonnull(p);
	snprintf(pid, sizeof(pid), "%.*s", (int)strspn(p + 5, "0123456789"), p + 5);
	return pid;
}

START_TEST(test_csv_cut_short)
{
	struct cut c = { 0 };
	struct http_resp r;
	char pid[16];
	int tries;

	c.first = db_hold(LOCK_SQL, 0, NULL);
	csv_get("", &r, cut_step, &c);
	if (c.first != NULL)
		db_release(c.first);
	if (c.second != NULL)
		db_release(c.second);
	ck_assert_msg(c.step == 4, "the cut stopped at step %d", c.step);
	/* The first batch went out, not the rest ... */
	ck_assert_msg(lines(&r) > 1 && lines(&r) < ROWS + 2, "%ld lines", lines(&r));
	ck_assert_ptr_nonnull(log_line(&r, "the CSV of balance_transactions ended early"));
	/* ... and the client knows it: the body did not end, the connection was cut. */
	ck_assert_msg(r.result == CURLE_PARTIAL_FILE || r.result == CURLE_RECV_ERROR,
	    "the client saw %s (%d) after %ld lines", curl_easy_strerror(r.result), r.result,
	    lines(&r));
	snprintf(pid, sizeof(pid), "%s", worker_of(&r));
	http_free(&r);

	/* The worker serves its next request: the whole CSV, ended as it should be. */
	for (tries = 0; tries < 50; tries++) {
		bool there;

		csv_get("", &r, NULL, NULL);
		ck_assert_msg(r.result == CURLE_OK, "%s", curl_easy_strerror(r.result));
		ck_assert_int_eq(lines(&r), ROWS + 2);
		there = strcmp(worker_of(&r), pid) == 0;
		http_free(&r);
		if (there)
			break;
	}
	ck_assert_msg(tries < 50, "worker %s served none of 50 requests", pid);
}
END_TEST

static void
setup(void)
{
	new_merchant(&shop, "1234", "1.00", false);
	list_deposits(shop.acct, ROWS);
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("csv_cut", "csv_cut", 60, &t);

	tcase_add_test(t, test_csv_cut_short);
	return fixture_main(s, setup, NULL);
}
