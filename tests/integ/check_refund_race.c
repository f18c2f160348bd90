/*
 * Refunds and transfer reversals racing each other, against the real stack
 * (tests/integration.sh): many real HTTP requests at once, lined up behind a row lock the
 * case holds (http_parallel_held) so that they really meet in the workers. The running
 * totals stay within the session's and the transfer's amounts, one Idempotency-Key makes one
 * refund, a refund's reversal and a standalone one take no more than is left between them,
 * and refunds beside payments of the same wallet or test card neither deadlock nor answer
 * 5xx. Then the same rules at the database alone: two connections of the workers' role, the
 * second intent waiting on the first's row lock and refused once it commits. What even the
 * owner cannot do to refunds: check_refund_db.c; what the workers' role cannot:
 * check_intents.c.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <libpq-fe.h>

#include "checkout_form.h"
#include "fixture.h"
#include "http.h"
#include "outbox.h"
#include "refunds.h"
#include "transfers.h"

enum target { REFUNDS, REVERSALS };    /* the refunds of a session, the reversals of a transfer */
#define LOCK_SESSION "SELECT 1 FROM payment_sessions WHERE id = $1::uuid FOR UPDATE"
#define LOCK_TRANSFER "SELECT 1 FROM transfers WHERE id = $1 FOR UPDATE"
#define MAX_RACE 64

/* One batch of requests racing, and the buffers they point into. */
struct race {
	int n;
	char path[MAX_RACE][128];
	const char *headers[4];
	struct http_req q[MAX_RACE];
	struct http_resp r[MAX_RACE];
	int waited;     /* the most requests seen waiting for the held lock (-1: none held) */
};

/* How a race's replies came out. */
struct tally {
	int ok, refused, busy, replayed;
	char id[48];    /* the object id of the first 200 */
	bool same_id;   /* every 200 carries that id */
};

/* Adds a POST of body as auth to the refunds of session id (the reversals of transfer id). */
static void
race_add(struct race *x, const char *auth, enum target what, const char *id, const char *body)
{
	ck_assert_int_lt(x->n, MAX_RACE);
	x->headers[0] = JSON_CT;
	x->headers[1] = auth;
	snprintf(x->path[x->n], sizeof(x->path[0]), "%s", what == REFUNDS ? refunds_path(id) :
	    reversals_path(id));
	x->q[x->n] = (struct http_req){ "POST", x->path[x->n], x->headers, body };
	x->n++;
}

/* Fires race x while the row that sql (one parameter) locks is held, until want wait. */
static void
race_run(struct race *x, const char *sql, const char *param, int want)
{
	const char *p[1] = { param };

	x->waited = http_parallel_held(db_hold(sql, 1, p), want, x->n, x->q, x->r);
	ck_assert_int_ge(x->waited, 0);
}

/* What a race's replies may be: key's object with an id of prefix and amount, or refused. */
struct expect {
	const char *key;        /* "refund" or "reversal" */
	const char *prefix;     /* its id's, "re_" or "trr_" */
	const char *amount;     /* its amount, "1.00" */
	const char *refused;    /* a 400's message, or how it starts (NULL: none expected) */
};

/*
 * Sorts replies from to to (not included) of race x into t: a 200 with e's object; a 400
 * with e's refusal; a 409 (the Idempotency-Key in flight). Anything else, a 5xx above all,
 * fails the case with the reply. Frees the replies it sorted.
 */
static void
race_tally(struct race *x, int from, int to, const struct expect *e, struct tally *t)
{
	struct json_object *o, *v;
	const char *msg, *id;
	char buf[16], re[32];
	int i;

	memset(t, 0, sizeof(*t));
	t->same_id = true;
	snprintf(re, sizeof(re), "^%s[0-9a-f]{32}$", e->prefix);
	for (i = from; i < to; i++) {
		struct http_resp *r = &x->r[i];

		if (r->status == 200 && json_object_object_get_ex(r->json, e->key, &o) &&
		    json_object_object_get_ex(o, "id", &v) &&
		    matches(id = json_object_get_string(v), re) &&
		    json_object_object_get_ex(o, "amount", &v) &&
		    strcmp(json_object_get_string(v), e->amount) == 0) {
			if (t->ok++ == 0)
				snprintf(t->id, sizeof(t->id), "%s", id);
			t->same_id &= strcmp(t->id, id) == 0;
			t->replayed += http_header(r, "Idempotent-Replayed", buf, sizeof(buf)) != NULL;
		} else if (e->refused != NULL && (msg = refusal(r)) != NULL &&
		    strncmp(msg, e->refused, strlen(e->refused)) == 0)
			t->refused++;
		else if (r->status == 409 && strstr(r->body, "Idempotency-Key") != NULL)
			t->busy++;
		else
			ck_abort_msg("reply %d of %d: %ld %s", i, x->n, r->status, r->body);
		http_free(r);
	}
	if (x->waited >= 0)
		fprintf(stderr, "%s: %d x 200 (%d replayed), %d x 400, %d x 409 of %d; %d waited"
		    " together\n", e->key, t->ok, t->replayed, t->refused, t->busy, to - from,
		    x->waited);
}

static long long
number(const char *sql, const char *param)
{
	const char *v = db_value(sql, param);

	ck_assert_msg(v != NULL, "%s", sql);
	return atoll(v);
}

/* What the session's refunds and the transfer's reversals each are. */
static const struct {
	const char *lock;       /* SQL that locks the session's (transfer's) row: $1 its id */
	const char *kind;       /* of each one's ledger transaction */
	const char *event;      /* the webhook event of each */
	const char *key;        /* the 200's object */
	const char *prefix;     /* its id's */
} targets[] = {
	[REFUNDS] = { LOCK_SESSION, "refund", "refund.succeeded", "refund", "re_" },
	[REVERSALS] = { LOCK_TRANSFER, "reversal", "transfer.reversed", "reversal", "trr_" },
};

/*
 * A new merchant with PIN 1234, settlement on, deposit in its account, its webhooks going to
 * the stack's receiver: the events of a race go out at once (a merchant without a webhook URL
 * would have them retried for a while, clogging the outbox for the webhook suites).
 */
static void
merchant_new(struct merchant *m, const char *deposit)
{
	char secret[128];

	new_merchant(m, "1234", deposit, true);
	merchant_webhook(m, secret);
}

/*
 * A new merchant m (merchant_new) and 10.00 it can take back: a session paid from a new
 * wallet (REFUNDS) or a transfer to a new vendor (REVERSALS); its id into id[40], the
 * wallet's (vendor's) account into other[16]. m's account holds 11.00 afterwards either way.
 */
static void
target_new(enum target what, struct merchant *m, char id[40], char other[16])
{
	merchant_new(m, what == REFUNDS ? "1.00" : "21.00");
	if (what == REFUNDS) {
		new_customer("10.00", other);
		paid_session(m->auth, "10.00", "order-race", other, id);
	} else {
		new_account(other, "--kind vendor");
		new_transfer(m, other, "10.00", id);
	}
}

/* The balances once taken (minor units) of target_new's 10.00 went back. */
static void
assert_taken_back(enum target what, const struct merchant *m, const char *other, long taken)
{
	/* A refund goes from the merchant to the wallet, a reversal from the vendor to it. */
	ck_assert_int_eq(balance_of(m->acct), what == REFUNDS ? 1100 - taken : 1100 + taken);
	ck_assert_int_eq(balance_of(other), what == REFUNDS ? taken : 1000 - taken);
}

/* "rows sum running-total" of the session's refunds (the transfer's reversals). */
static const char *
taken_back(enum target what, const char *id)
{
	return db_value(what == REFUNDS ?
	    "SELECT count(r.id) || ' ' || coalesce(sum(r.amount), 0) || ' ' || s.amount_refunded"
	    " FROM payment_sessions s LEFT JOIN refunds r ON r.session_id = s.id"
	    " WHERE s.id = $1::uuid GROUP BY s.id" :
	    "SELECT count(v.id) || ' ' || coalesce(sum(v.amount), 0) || ' ' || t.amount_reversed"
	    " FROM transfers t LEFT JOIN transfer_reversals v ON v.transfer_id = t.id"
	    " WHERE t.id = $1 GROUP BY t.id", id);
}

/*
 * The API's refusal of amount (text; NULL: of any amount, nothing being left) of session
 * (transfer) id when left (text) is left, into out[200].
 */
static const char *
left_message(enum target what, const char *id, const char *amount, const char *left,
    char out[200])
{
	if (amount == NULL && what == REFUNDS)
		snprintf(out, 200, "amount: the payment session is refunded in full; nothing is left"
		    " to refund");
	else if (amount == NULL)
		snprintf(out, 200, "amount: transfer %s is reversed in full; nothing is left to"
		    " reverse", id);
	else if (what == REFUNDS)
		snprintf(out, 200, "amount %s is above what is left to refund (%s)", amount, left);
	else
		snprintf(out, 200, "amount %s is above what is left to reverse of transfer %s (%s)",
		    amount, id, left);
	return out;
}

/* The expectations of a race for what, amount each, refused with refused. */
static struct expect
expect_of(enum target what, const char *amount, const char *refused)
{
	return (struct expect){ targets[what].key, targets[what].prefix, amount, refused };
}

/*
 * 50 requests of 1.00 at once for 10.00: exactly 10 of them, the rest told that nothing is
 * left; 10 rows, 10 ledger transactions, 10 events, the money back where it came from.
 * _i: REFUNDS of a session paid from a wallet, REVERSALS of a transfer.
 */
START_TEST(test_race_fifty_for_ten)
{
	enum { N = 50 };
	const enum target what = (enum target)_i;
	struct merchant m;
	struct race x = { 0 };
	struct expect e;
	struct tally t;
	char id[40], other[16], refused[200];
	const char *p[2] = { m.id, targets[what].kind };
	int i;

	target_new(what, &m, id, other);
	for (i = 0; i < N; i++)
		race_add(&x, m.auth, what, id, "{\"amount\":1.00}");
	race_run(&x, targets[what].lock, id, 2);
	e = expect_of(what, "1.00", left_message(what, id, NULL, NULL, refused));
	race_tally(&x, 0, N, &e, &t);
	ck_assert_int_eq(t.ok, 10);
	ck_assert_int_eq(t.refused, N - 10);
	ck_assert_str_eq(taken_back(what, id), "10 1000 1000");
	if (what == REFUNDS)
		ck_assert_str_eq(status_of(id), "refunded");
	assert_taken_back(what, &m, other, 1000);
	ck_assert_str_eq(db_valuev("SELECT count(*) FROM ledger_transactions WHERE merchant_id ="
	    " $1::bigint AND kind = $2", 2, p), "10");
	p[1] = targets[what].event;
	ck_assert_str_eq(db_valuev("SELECT count(*) FROM webhook_events WHERE merchant_id ="
	    " $1::bigint AND type = $2", 2, p), "10");
	assert_ledger_ok();
}
END_TEST

/* Two requests of 6.00 at once for 10.00, five times over: one each time. _i: a target. */
START_TEST(test_race_pairs)
{
	const enum target what = (enum target)_i;
	struct merchant m;
	struct race x;
	struct expect e;
	struct tally t;
	char id[40], other[16], refused[200];
	int round;

	for (round = 0; round < 5; round++) {
		target_new(what, &m, id, other);
		memset(&x, 0, sizeof(x));
		race_add(&x, m.auth, what, id, "{\"amount\":6.00}");
		race_add(&x, m.auth, what, id, "{\"amount\":6.00}");
		race_run(&x, targets[what].lock, id, 2);
		e = expect_of(what, "6.00", left_message(what, id, "6.00", "4.00", refused));
		race_tally(&x, 0, 2, &e, &t);
		ck_assert_int_eq(t.ok, 1);
		ck_assert_int_eq(t.refused, 1);
		ck_assert_int_eq(x.waited, 2);
		ck_assert_str_eq(taken_back(what, id), "1 600 600");
		assert_taken_back(what, &m, other, 600);
	}
	if (what == REFUNDS)
		ck_assert_str_eq(status_of(id), "paid");
	assert_ledger_ok();
}
END_TEST

START_TEST(test_race_idempotent_refund)
{
	enum { N = 20 };
	const struct expect e = expect_of(REFUNDS, "1.00", NULL);
	struct merchant m;
	struct race x = { 0 };
	struct tally t;
	char id[40], wallet[16];
	int i;

	/*
	 * One retry storm with one key, behind the session's lock: the first waits for the
	 * session holding the key, those waiting for the key past idempotency_wait_ms answer
	 * 409, those after it the same refund again. One refund, however it ends.
	 */
	target_new(REFUNDS, &m, id, wallet);
	for (i = 0; i < N; i++)
		race_add(&x, m.auth, REFUNDS, id, "{\"amount\":1.00,\"reason\":\"storm\"}");
	x.headers[2] = "Idempotency-Key: refund-storm";
	race_run(&x, LOCK_SESSION, id, 2);
	race_tally(&x, 0, N, &e, &t);
	ck_assert_int_ge(t.ok, 1);
	ck_assert_int_eq(t.ok + t.busy, N);
	ck_assert_int_eq(t.ok - t.replayed, 1);
	ck_assert(t.same_id);
	ck_assert_str_eq(taken_back(REFUNDS, id), "1 100 100");
	ck_assert_str_eq(db_value("SELECT id FROM refunds WHERE session_id = $1::uuid", id), t.id);
	assert_taken_back(REFUNDS, &m, wallet, 100);
	assert_ledger_ok();
}
END_TEST

START_TEST(test_race_refund_reversal_against_reversal)
{
	enum { ROUNDS = 4 };
	struct expect refund_e, reversal_e;
	struct merchant m;
	struct race x;
	struct tally refund, reversal;
	char vendor[16], tr[40], s[37], body[256], left[200], in_refund[240];
	int round, refunds = 0;

	/*
	 * A refund carrying 6.00 of a transfer back, and a reversal of 6.00 of the same
	 * transfer, at once: one of them takes it, the other is told what is left. The refund
	 * locks the session, then the transfer; the reversal only the transfer.
	 */
	for (round = 0; round < ROUNDS; round++) {
		target_new(REVERSALS, &m, tr, vendor);
		paid_session(m.auth, "10.00", "order-race", NULL, s);
		memset(&x, 0, sizeof(x));
		snprintf(body, sizeof(body), "{\"amount\":1.00,\"reverse_transfers\":[{\"transfer_id\":"
		    "\"%s\",\"amount\":6.00}]}", tr);
		race_add(&x, m.auth, REFUNDS, s, body);
		race_add(&x, m.auth, REVERSALS, tr, "{\"amount\":6.00}");
		race_run(&x, LOCK_TRANSFER, tr, 2);
		left_message(REVERSALS, tr, "6.00", "4.00", left);
		snprintf(in_refund, sizeof(in_refund), "reverse_transfers[0].%s", left);
		refund_e = expect_of(REFUNDS, "1.00", in_refund);
		reversal_e = expect_of(REVERSALS, "6.00", left);
		race_tally(&x, 0, 1, &refund_e, &refund);
		race_tally(&x, 1, 2, &reversal_e, &reversal);
		ck_assert_int_eq(x.waited, 2);
		ck_assert_int_eq(refund.ok + reversal.ok, 1);
		ck_assert_int_eq(refund.refused + reversal.refused, 1);
		refunds += refund.ok;
		ck_assert_str_eq(taken_back(REVERSALS, tr), "1 600 600");
		ck_assert_str_eq(taken_back(REFUNDS, s), refund.ok ? "1 100 100" : "0 0 0");
		/* The vendor gave 6.00 back; the merchant got the payment and 6.00, less a refund. */
		ck_assert_int_eq(balance_of(vendor), 1000 - 600);
		ck_assert_int_eq(balance_of(m.acct), 1100 + 1000 + 600 - (refund.ok ? 100 : 0));
	}
	fprintf(stderr, "the refund won %d of %d rounds, the reversal %d\n", refunds, ROUNDS,
	    ROUNDS - refunds);
	assert_ledger_ok();
}
END_TEST

/*
 * Refunds beside payments of the same payer to the same merchant, for a few seconds: each
 * round pays PAY new sessions through the page and refunds 1.00 twice of each of the round
 * before's. The refunds lock session, wallet, then accounts in id order, as the payments
 * do: no deadlock (40P01 would be a 503), no 5xx, every request does what it asked.
 * _i 0: a wallet pays and is refunded; 1: the sandbox test card (the funding account).
 */
START_TEST(test_race_refunds_beside_payments)
{
	enum { PAY = 4, MS = 3000 };
	static const struct expect e = { "refund", "re_", "1.00", NULL };
	struct merchant m;
	struct race x;
	struct form_post f[PAY];
	struct tally t;
	struct timespec t0, now;
	char wallet[16], fields[256], before[PAY][37], next[PAY][37];
	const char *payer = _i == 0 ? wallet : NULL;
	long paid = PAY, refunded = 0, rounds = 0;
	int i;

	merchant_new(&m, "1.00");
	new_customer("5000.00", wallet);
	for (i = 0; i < PAY; i++)
		paid_session(m.auth, "10.00", "order-race", payer, before[i]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		memset(&x, 0, sizeof(x));
		for (i = 0; i < PAY; i++) {
			open_session(m.auth, "10.00", "order-race", next[i]);
			form_post(next[i], pay_fields(payer, fields), &f[i]);
			x.q[x.n++] = f[i].req;
		}
		for (i = 0; i < PAY; i++) {
			race_add(&x, m.auth, REFUNDS, before[i], "{\"amount\":1.00}");
			race_add(&x, m.auth, REFUNDS, before[i], "{\"amount\":1.00}");
		}
		ck_assert_int_eq(http_parallel_reqs(x.n, x.q, x.r, NULL, NULL), 0);
		x.waited = -1;
		for (i = 0; i < PAY; i++) {
			assert_paid(&x.r[i], next[i]);
			http_free(&x.r[i]);
		}
		race_tally(&x, PAY, x.n, &e, &t);
		ck_assert_int_eq(t.ok, 2 * PAY);
		memcpy(before, next, sizeof(before));
		paid += PAY;
		refunded += 2 * PAY;
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 < MS);
	fprintf(stderr, "%s: %ld rounds, %ld payments, %ld refunds\n", payer ? "wallet" :
	    "test card", rounds, paid, refunded);
	ck_assert_int_eq(number("SELECT count(*) FROM refunds WHERE merchant_id = $1::bigint",
	    m.id), refunded);
	ck_assert_int_eq(balance_of(m.acct), 100 + paid * 1000 - refunded * 100);
	if (payer != NULL)
		ck_assert_int_eq(balance_of(wallet), 500000 - paid * 1000 + refunded * 100);
	assert_ledger_ok();
}
END_TEST

/*
 * Refunds, reversals of 0.50 and new transfers, of one merchant to one vendor, all at once,
 * round after round, each taking back from the transfers of the round before; every other
 * refund carries 0.25 of two transfers back, the two refunds naming the same two in
 * opposite orders. A transfer locks the merchant's row, then the accounts; a refund the
 * session, its transfers in id order, then the accounts; a reversal must not take them the
 * other way round either: no deadlock (40P01 would be a 503), no 5xx.
 */
START_TEST(test_race_refunds_beside_transfers)
{
	enum { K = 4, ROUNDS = 6, MOVED = K * 200 - K * 50 - K / 2 * 50 };  /* to the vendor */
	const struct expect refund_e = expect_of(REFUNDS, "1.00", NULL),
	    reversal_e = expect_of(REVERSALS, "0.50", NULL);
	struct merchant m;
	struct race x;
	struct tally t;
	char vendor[1][16], s[K][37], tr[K][40], body[2 * K][2048];
	const char *amount[1] = { "2.00" };
	int i, round;

	merchant_new(&m, "100.00");
	new_account(vendor[0], "--kind vendor");
	for (i = 0; i < K; i++)
		new_transfer(&m, vendor[0], amount[0], tr[i]);
	for (round = 0; round < ROUNDS; round++) {
		memset(&x, 0, sizeof(x));
		for (i = 0; i < K; i++) {
			paid_session(m.auth, "1.00", "order-race", NULL, s[i]);
			snprintf(body[i], sizeof(body[i]), i % 2 ? "{\"amount\":1.00,"
			    "\"reverse_transfers\":[{\"transfer_id\":\"%s\",\"amount\":0.25},"
			    "{\"transfer_id\":\"%s\",\"amount\":0.25}]}" : "{\"amount\":1.00}", tr[i],
			    tr[(i + 2) % K]);
			race_add(&x, m.auth, REFUNDS, s[i], body[i]);
		}
		for (i = 0; i < K; i++)
			race_add(&x, m.auth, REVERSALS, tr[i], "{\"amount\":0.50}");
		for (i = 0; i < K; i++)
			x.q[x.n++] = (struct http_req){ "POST", SEND, x.headers,
			    strcpy(body[K + i], transfer_body(pin_ok(), 1, vendor, amount)) };
		ck_assert_int_eq(http_parallel_reqs(x.n, x.q, x.r, NULL, NULL), 0);
		x.waited = -1;
		race_tally(&x, 0, K, &refund_e, &t);
		ck_assert_int_eq(t.ok, K);
		race_tally(&x, K, 2 * K, &reversal_e, &t);
		ck_assert_int_eq(t.ok, K);
		for (i = 0; i < K; i++) {
			ck_assert_msg(transfer_accepted(&x.r[2 * K + i], 1) != NULL, "transfer: %ld %s",
			    x.r[2 * K + i].status, x.r[2 * K + i].body);
			snprintf(tr[i], sizeof(tr[i]), "%s", transfer_accepted(&x.r[2 * K + i], 1));
			http_free(&x.r[2 * K + i]);
		}
	}
	/* The payments and refunds cancel out; what the vendor got, the merchant lost. */
	ck_assert_int_eq(balance_of(vendor[0]), K * 200 + ROUNDS * MOVED);
	ck_assert_int_eq(balance_of(m.acct), 10000 - K * 200 - ROUNDS * MOVED);
	ck_assert_int_eq(number("SELECT count(*) FROM transfer_reversals WHERE merchant_id ="
	    " $1::bigint", m.id), ROUNDS * 2 * K);
	assert_ledger_ok();
}
END_TEST

/* The intents as the workers call them, each asking for 6.00 of 10.00: $1 merchant, $2 id. */
static const struct {
	const char *sql;
	const char *state;      /* the second's refusal once the first has committed */
} intents[] = {
	[REFUNDS] = { "SELECT mp_refund_session($1::bigint, $2::uuid, 600, NULL, NULL, NULL)",
	    "MP032" },
	[REVERSALS] = { "SELECT mp_reverse_transfer($1::bigint, $2, 600, NULL)", "MP036" },
};

/* Waits (up to 5 s) until backend pid waits for a lock; its wait_event_type, or NULL. */
static const char *
wait_for_lock(int pid)
{
	char p[16];
	const char *w = NULL;
	int i;

	snprintf(p, sizeof(p), "%d", pid);
	for (i = 0; i < 100; i++) {
		w = db_value("SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1::int", p);
		if (w != NULL && strcmp(w, "Lock") == 0)
			break;
		usleep(50000);
	}
	return w;
}

/*
 * The database keeps the sum itself, whatever C does: two connections of the workers' role,
 * the first refunds (reverses) 6.00 of 10.00 in a transaction it keeps open, holding the
 * session's (transfer's) row; the second asks for 6.00 too, and waits. Once the first
 * commits, the second is refused (MP032 or MP036, the API's words); once it rolls back
 * instead (the control), the second succeeds. Either way one 6.00 stays.
 * _i / 2: the target; the first commits when _i is even.
 */
START_TEST(test_db_second_intent_waits)
{
	const enum target what = (enum target)(_i / 2);
	const bool commit = _i % 2 == 0;
	const char *p[2], *state;
	struct merchant m;
	char id[40], other[16], st[6], msg[200];
	PGconn *a, *b;
	PGresult *r;

	target_new(what, &m, id, other);
	p[0] = m.id;
	p[1] = id;
	a = db_connect_as("mp_worker");
	b = db_connect_as("mp_worker");
	ck_assert_int_eq(PQstatus(a), CONNECTION_OK);
	ck_assert_int_eq(PQstatus(b), CONNECTION_OK);
	ck_assert_str_eq(db_state(a, "BEGIN", 0, NULL, st), "00000");
	ck_assert_str_eq(db_state(a, intents[what].sql, 2, p, st), "00000");
	ck_assert_int_eq(PQsendQueryParams(b, intents[what].sql, 2, NULL, p, NULL, NULL, 0), 1);
	ck_assert_str_eq(wait_for_lock(PQbackendPID(b)), "Lock");
	ck_assert_int_eq(PQconsumeInput(b), 1);
	ck_assert_int_eq(PQisBusy(b), 1);
	ck_assert_str_eq(db_state(a, commit ? "COMMIT" : "ROLLBACK", 0, NULL, st), "00000");
	r = PQgetResult(b);
	state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	if (commit) {
		ck_assert_int_eq(PQresultStatus(r), PGRES_FATAL_ERROR);
		ck_assert_str_eq(state, intents[what].state);
		ck_assert_str_eq(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY),
		    left_message(what, id, "6.00", "4.00", msg));
	} else
		ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s", PQresultErrorMessage(r));
	PQclear(r);
	while ((r = PQgetResult(b)) != NULL)
		PQclear(r);
	PQfinish(a);
	PQfinish(b);
	ck_assert_str_eq(taken_back(what, id), "1 600 600");
	assert_taken_back(what, &m, other, 600);
	assert_ledger_ok();
}
END_TEST

/* Last: the events the races queued have gone out; none is left for the suites after. */
START_TEST(test_events_delivered)
{
	quiet();
}
END_TEST

static Suite *
refund_race_suite(void)
{
	TCase *race, *db = tcase_create("races in the database");
	Suite *s = suite_one("refund-race", "races over HTTP", 180, &race);

	tcase_add_loop_test(race, test_race_fifty_for_ten, REFUNDS, REVERSALS + 1);
	tcase_add_loop_test(race, test_race_pairs, REFUNDS, REVERSALS + 1);
	tcase_add_test(race, test_race_idempotent_refund);
	tcase_add_test(race, test_race_refund_reversal_against_reversal);
	tcase_add_loop_test(race, test_race_refunds_beside_payments, 0, 2);
	tcase_add_test(race, test_race_refunds_beside_transfers);
	tcase_set_timeout(db, 60);
	tcase_add_loop_test(db, test_db_second_intent_waits, 0, 2 * (int)NELEM(intents));
	tcase_add_test(db, test_events_delivered);
	suite_add_tcase(s, db);
	return s;
}

int
main(void)
{
	/* The PIN key is for the transfers that the reversals take back. */
	return fixture_main(refund_race_suite(), service_key_setup, service_key_free);
}
