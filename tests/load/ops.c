/* The operations of the load mix: create-session, a checkout payment, a transfer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "journal.h"
#include "ops.h"
#include "seal.h"

#define CREATE_PATH "/api/v1/payment/create-session"
#define SEND_PATH "/api/v1/payment/send-money-MultiVendor"
#define JSON_CT "Content-Type: application/json"
#define FORM_CT "Content-Type: application/x-www-form-urlencoded"
#define SUCCESS_URL "https://shop.example/ok"
#define FAILURE_URL "https://shop.example/fail"
#define TEST_CARD "method=test_card&action=pay&card_number=4242424242424242" \
	"&card_expiry=12%2F99&card_cvc=123"

/* One request as the retry loop sends it again and again. */
struct attempt {
	enum stats_kind kind;
	const char *method, *path, *body, *key;
	const char *const *headers;
	const char *ids;          /* journalled when the answer names none */
	int64_t amount;
	int retry_409;            /* a keyed request: 409 means "still in flight, retry" */
};

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
retriable(long status, int retry_409)
{
	return status == 0 || status == 500 || status == 502 || status == 503 || status == 504 ||
	    (retry_409 && status == 409);
}

static void
note(const struct ops_thread *t, const struct attempt *a, int n, const char *ids,
    const char *what)
{
	struct journal_line l = { 0 };

	l.start_ms = t->cl->start_ms;
	l.kind = stats_kind_name(a->kind);
	l.status = t->cl->status;
	l.lat_us = t->cl->lat_us;
	l.attempt = n;
	l.key = a->key;
	l.ids = ids ? ids : a->ids;
	l.amount = a->amount;
	l.request_id = t->cl->request_id;
	l.note = t->cl->status == 0 ? t->cl->error : what;
	l.lag_us = t->cl->lag_us;
	journal_write(&l);
}

/*
 * Sends a, again after each retriable failure while the budget lasts (from started, the
 * operation's start), journalling every attempt; keyed (or otherwise safe) requests only.
 * Returns the last status (0: no answer); t->cl holds the last answer.
 */
static long
send_retrying(struct ops_thread *t, const struct attempt *a, double started, enum stats_op op,
    int may_retry, const char *(*describe)(struct ops_thread *, char *, size_t), char *ids,
    size_t idslen)
{
	long wait_ms = 50;
	const char *what;
	int n;

	for (n = 1;; n++) {
		client_do(t->cl, a->method, a->path, a->headers, a->body);
		stats_add(&t->st, a->kind, t->cl->status, t->cl->lat_us);
		if (ids != NULL)
			ids[0] = '\0';
		what = describe ? describe(t, ids, idslen) : NULL;
		note(t, a, n, ids != NULL && ids[0] != '\0' ? ids : NULL, what);
		if (!may_retry || !retriable(t->cl->status, a->retry_409) ||
		    *t->cfg->abort_retries || mono() - started > t->cfg->retry_s)
			return t->cl->status;
		t->st.retries[op]++;
		nanosleep(&(struct timespec){ wait_ms / 1000, (wait_ms % 1000) * 1000000L }, NULL);
		wait_ms = wait_ms * 2 > 1000 ? 1000 : wait_ms * 2;
	}
}

/* The create-session answer: its session_id into ids. */
static const char *
describe_create(struct ops_thread *t, char *ids, size_t len)
{
	struct json_object *j, *v;

	if (t->cl->status != 200 || (j = json_tokener_parse(t->cl->body)) == NULL)
		return NULL;
	if (json_object_object_get_ex(j, "session_id", &v) &&
	    json_object_is_type(v, json_type_string))
		snprintf(ids, len, "%s", json_object_get_string(v));
	json_object_put(j);
	return t->cl->replayed ? "replayed" : NULL;
}

/* The payment form's answer, in words (journal.h). */
static const char *
describe_pay(struct ops_thread *t, char *ids, size_t len)
{
	(void)ids;
	(void)len;
	if (t->cl->status == 303)
		return strncmp(t->cl->location, SUCCESS_URL "?", strlen(SUCCESS_URL) + 1) == 0 ?
		    "paid" : "failed";
	if (t->cl->status == 200)
		return strstr(t->cl->body, "Already paid") != NULL ? "already_paid" : "form";
	return NULL;
}

/* The transfer answer: its tr_ ids, comma-separated, into ids. */
static const char *
describe_transfer(struct ops_thread *t, char *ids, size_t len)
{
	struct json_object *j, *detail, *e, *v;
	size_t i, n, at = 0;

	if (t->cl->status != 200 || (j = json_tokener_parse(t->cl->body)) == NULL)
		return NULL;
	if (json_object_object_get_ex(j, "transaction_detail", &detail) &&
	    json_object_is_type(detail, json_type_array)) {
		n = json_object_array_length(detail);
		for (i = 0; i < n && at < len; i++) {
			e = json_object_array_get_idx(detail, i);
			if (json_object_object_get_ex(e, "transaction_id", &v))
				at += (size_t)snprintf(ids + at, len - at, "%s%s", i ? "," : "",
				    json_object_get_string(v));
		}
	}
	json_object_put(j);
	return t->cl->replayed ? "replayed" : NULL;
}

/* A new session of one or two items; its id into sid[37] and total into *amount. */
static int
create(struct ops_thread *t, enum stats_op op, double started, char sid[37], int64_t *amount)
{
	const struct ops_config *cfg = t->cfg;
	char body[1024], key[128], hkey[160];
	const char *h[] = { JSON_CT, cfg->auth, NULL, NULL };
	struct attempt a = { 0 };
	char ids[64];
	/* One item of 1.00 to 99.99, and half the time a second one of 0.50 to 5.49. */
	long p1 = 100 + rand_r(&t->seed) % 9900;
	long p2 = rand_r(&t->seed) % 2 ? 0 : 50 + rand_r(&t->seed) % 500;

	snprintf(key, sizeof(key), "cs-%s-%d-%lu", cfg->run, t->id, t->seq);
	snprintf(body, sizeof(body), "{\"items\":[{\"id\":\"sku-%lu\",\"name\":\"Load item %lu\","
	    "\"price\":%ld.%02ld}%s", t->seq, t->seq, p1 / 100, p1 % 100, p2 ? "," : "");
	if (p2)
		snprintf(body + strlen(body), sizeof(body) - strlen(body), "{\"id\":\"sku-x\","
		    "\"name\":\"Extra\",\"price\":%ld.%02ld}", p2 / 100, p2 % 100);
	snprintf(body + strlen(body), sizeof(body) - strlen(body), "],\"user_id\":\"u-%s-%d-%lu\","
	    "\"redirect_success_url\":\"" SUCCESS_URL "\",\"redirect_failure_url\":\"" FAILURE_URL
	    "\"}", cfg->run, t->id, t->seq);
	if (cfg->create_keys) {
		snprintf(hkey, sizeof(hkey), "Idempotency-Key: %s", key);
		h[2] = hkey;
	}
	a.kind = STATS_CREATE;
	a.method = "POST";
	a.path = CREATE_PATH;
	a.body = body;
	a.key = cfg->create_keys ? key : NULL;
	a.headers = h;
	a.amount = *amount = p1 + p2;
	a.retry_409 = 1;
	if (send_retrying(t, &a, started, op, cfg->create_keys, describe_create, ids,
	    sizeof(ids)) != 200 || strlen(ids) != 36)
		return -1;
	memcpy(sid, ids, 37);   /* 36 characters and the NUL, checked above */
	return 0;
}

/* The form's CSRF token from the page in t->cl->body into out[65]. */
static int
csrf_of_page(const struct ops_thread *t, char out[65])
{
	static const char mark[] = "name=\"csrf\" value=\"";
	const char *p = strstr(t->cl->body, mark);

	if (p == NULL)
		return -1;
	p += sizeof(mark) - 1;
	if (strspn(p, "0123456789abcdef") != 64)
		return -1;
	memcpy(out, p, 64);
	out[64] = '\0';
	return 0;
}

static int
pay(struct ops_thread *t, double started)
{
	const struct ops_config *cfg = t->cfg;
	const char *form[] = { FORM_CT, NULL };
	char sid[37], path[64], csrf[65], body[512];
	struct attempt a = { 0 };
	const char *what;
	int64_t amount;
	int card;

	if (create(t, STATS_OP_PAY, started, sid, &amount) != 0)
		return -1;
	snprintf(path, sizeof(path), "/checkout/%s", sid);
	a.kind = STATS_PAGE;
	a.method = "GET";
	a.path = path;
	a.ids = sid;
	a.amount = amount;
	if (send_retrying(t, &a, started, STATS_OP_PAY, 1, NULL, NULL, 0) != 200 ||
	    csrf_of_page(t, csrf) != 0)
		return -1;
	card = cfg->nwallets == 0 || cfg->method == OPS_CARD ||
	    (cfg->method == OPS_BOTH && rand_r(&t->seed) % 2);
	if (card)
		snprintf(body, sizeof(body), "csrf=%s&%s", csrf, TEST_CARD);
	else
		snprintf(body, sizeof(body), "csrf=%s&method=wallet&action=pay&account_number=%s"
		    "&pin=%s", csrf, cfg->wallets[t->id % cfg->nwallets], cfg->wallet_pin);
	a.kind = STATS_PAY;
	a.method = "POST";
	a.body = body;
	a.headers = form;
	/* A session is paid at most once, so sending the form again is safe. */
	if (send_retrying(t, &a, started, STATS_OP_PAY, 1, describe_pay, NULL, 0) == 0)
		return -1;
	what = describe_pay(t, NULL, 0);
	return what != NULL && (strcmp(what, "paid") == 0 || strcmp(what, "already_paid") == 0) ?
	    0 : -1;
}

static int
transfer(struct ops_thread *t, double started)
{
	const struct ops_config *cfg = t->cfg;
	char key[128], hkey[160], sealed[1024], body[4096], ids[1024];
	const char *h[] = { JSON_CT, cfg->auth, hkey, NULL };
	int pick[64], n, i, j, tmp;
	struct attempt a = { 0 };
	int64_t total = 0;
	long cents;
	size_t len;

	if (cfg->pin_key == NULL || cfg->nvendors == 0 ||
	    seal_pin(cfg->pin_key, cfg->pin, sealed, sizeof(sealed)) != 0)
		return -1;
	n = cfg->max_split < cfg->nvendors ? cfg->max_split : cfg->nvendors;
	n = 1 + rand_r(&t->seed) % n;
	if (n > 64)
		n = 64;
	for (i = 0; i < cfg->nvendors && i < 64; i++)
		pick[i] = i;
	for (i = 0; i < n; i++) {   /* n distinct vendors: a partial Fisher-Yates shuffle */
		j = i + rand_r(&t->seed) % ((cfg->nvendors < 64 ? cfg->nvendors : 64) - i);
		tmp = pick[i];
		pick[i] = pick[j];
		pick[j] = tmp;
	}
	len = (size_t)snprintf(body, sizeof(body), "{\"pin\":\"%s\",\"vendors\":[", sealed);
	for (i = 0; i < n; i++) {
		cents = 100 + rand_r(&t->seed) % 900;
		total += cents;
		len += (size_t)snprintf(body + len, sizeof(body) - len,
		    "%s{\"account_number\":\"%s\",\"amount\":%ld.%02ld}", i ? "," : "",
		    cfg->vendors[pick[i]], cents / 100, cents % 100);
	}
	snprintf(body + len, sizeof(body) - len, "]}");
	snprintf(key, sizeof(key), "tr-%s-%d-%lu", cfg->run, t->id, t->seq);
	snprintf(hkey, sizeof(hkey), "Idempotency-Key: %s", key);
	a.kind = STATS_TRANSFER;
	a.method = "POST";
	a.path = SEND_PATH;
	a.body = body;   /* the same bytes on every retry: a new sealing would answer 422 */
	a.key = key;
	a.headers = h;
	a.amount = total;
	a.retry_409 = 1;
	return send_retrying(t, &a, started, STATS_OP_TRANSFER, 1, describe_transfer, ids,
	    sizeof(ids)) == 200 ? 0 : -1;
}

int
ops_run(struct ops_thread *t, enum stats_op op)
{
	double started = mono();
	char sid[37];
	int64_t amount;
	int rc;

	t->seq++;
	switch (op) {
	case STATS_OP_CREATE:
		rc = create(t, op, started, sid, &amount);
		break;
	case STATS_OP_PAY:
		rc = pay(t, started);
		break;
	case STATS_OP_TRANSFER:
		rc = transfer(t, started);
		break;
	default:
		rc = -1;
	}
	if (rc == 0)
		t->st.ops_ok[op]++;
	else
		t->st.ops_failed[op]++;
	return rc;
}
