/* What the refund and reversal suites share (see refunds.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "fixture.h"
#include "refunds.h"

void
api(const char *method, const char *auth, const char *extra, const char *body,
    struct http_resp *r, const char *fmt, ...)
{
	const char *h[] = { JSON_CT, auth, extra, NULL };
	char path[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (auth == NULL)   /* the list ends at the first NULL */
		h[1] = extra, h[2] = NULL;
	ck_assert_int_eq(http_do(method, path, h, body, -1, r), 0);
}

const char *
refunds_path(const char *sid)
{
	static char path[128];

	snprintf(path, sizeof(path), "/api/v1/payment/sessions/%s/refunds", sid);
	return path;
}

const char *
reversals_path(const char *tr)
{
	static char path[128];

	snprintf(path, sizeof(path), "/api/v1/payment/transfers/%s/reversals", tr);
	return path;
}

void
refund_post(const char *auth, const char *sid, const char *body, struct http_resp *r)
{
	api("POST", auth, NULL, body, r, "%s", refunds_path(sid));
}

void
reversal_post(const char *auth, const char *tr, const char *body, struct http_resp *r)
{
	api("POST", auth, NULL, body, r, "%s", reversals_path(tr));
}

void
assert_refused(const char *auth, const char *path, const char *body, long status,
    const char *needle)
{
	char before[FOOTPRINT_LEN];
	struct http_resp r;

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	api("POST", auth, NULL, body, &r, "%s", path);
	assert_fail(&r, status, needle);
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
}

void
assert_idempotent(const char *merchant, const char *auth, const char *path, const char *tag,
    const char *body, const char *other, struct http_resp *r)
{
	char key[128], buf[16];
	struct http_resp b;
	PGconn *c;

	snprintf(key, sizeof(key), "Idempotency-Key: %s-%d", tag, (int)getpid());
	api("POST", auth, key, body, r, "%s", path);
	ck_assert_msg(r->status == 200, "%ld %s", r->status, r->body);
	ck_assert_ptr_null(http_header(r, "Idempotent-Replayed", buf, sizeof(buf)));
	api("POST", auth, key, body, &b, "%s", path);
	ck_assert_int_eq(b.status, 200);
	ck_assert_str_eq(http_header(&b, "Idempotent-Replayed", buf, sizeof(buf)), "true");
	ck_assert_str_eq(b.body, r->body);
	http_free(&b);
	api("POST", auth, key, other, &b, "%s", path);
	ck_assert_msg(b.status == 422, "%ld %s", b.status, b.body);
	http_free(&b);
	c = hold_idempotency_lock(merchant, key + strlen("Idempotency-Key: "));
	api("POST", auth, key, body, &b, "%s", path);
	db_release(c);
	ck_assert_msg(b.status == 409, "%ld %s", b.status, b.body);
	http_free(&b);
}

const char *
jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	return json_object_get_string(v);
}

/* A 200 with status_code 10, success true and message; its member key (an object). */
static struct json_object *
success_of(const struct http_resp *r, const char *message, const char *key)
{
	struct json_object *v;

	ck_assert_msg(r->status == 200, "status %ld: %s", r->status, r->body);
	ck_assert_ptr_nonnull(r->json);
	ck_assert(json_object_object_get_ex(r->json, "status_code", &v) &&
	    json_object_is_type(v, json_type_int) && json_object_get_int(v) == 10);
	ck_assert(json_object_object_get_ex(r->json, "success", &v) &&
	    json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v));
	ck_assert_str_eq(http_json_str(r, "message"), message);
	ck_assert_msg(json_object_object_get_ex(r->json, key, &v) &&
	    json_object_is_type(v, json_type_object), "no %s object: %s", key, r->body);
	return v;
}

struct json_object *
refund_of(const struct http_resp *r, const char *message)
{
	return success_of(r, message, "refund");
}

struct json_object *
reversal_of(const struct http_resp *r)
{
	return success_of(r, "Transfer reversed.", "reversal");
}

/* Member key of o is a JSON string equal to want, or JSON null when want is NULL. */
static void
member_is(struct json_object *o, const char *key, const char *want)
{
	struct json_object *v;

	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s in %s", key,
	    json_object_to_json_string(o));
	if (want == NULL)
		ck_assert_msg(json_object_is_type(v, json_type_null), "%s is %s, not null", key,
		    json_object_to_json_string(v));
	else {
		ck_assert_msg(json_object_is_type(v, json_type_string), "%s is not a string", key);
		ck_assert_str_eq(json_object_get_string(v), want);
	}
}

void
check_refund(struct json_object *R, const char *sid, const char *amount, const char *reason,
    int nrev)
{
	struct json_object *revs;
	int i;

	ck_assert_int_eq(json_object_object_length(R), 8);
	ck_assert_msg(matches(jstr(R, "id"), "^re_[0-9a-f]{32}$"), "id %s", jstr(R, "id"));
	member_is(R, "session_id", sid);
	member_is(R, "amount", amount);
	member_is(R, "currency", "AFN");
	member_is(R, "status", "succeeded");
	member_is(R, "reason", reason);
	ck_assert_msg(matches(jstr(R, "created_at"), ISO_UTC), "created_at %s",
	    jstr(R, "created_at"));
	ck_assert(json_object_object_get_ex(R, "reversals", &revs) &&
	    json_object_is_type(revs, json_type_array));
	ck_assert_int_eq(json_object_array_length(revs), nrev);
	for (i = 0; i < nrev; i++)
		check_reversal(json_object_array_get_idx(revs, i), NULL, NULL, reason,
		    jstr(R, "id"));
}

void
check_reversal(struct json_object *V, const char *tr, const char *amount, const char *reason,
    const char *refund_id)
{
	ck_assert_int_eq(json_object_object_length(V), 7);
	ck_assert_msg(matches(jstr(V, "id"), "^trr_[0-9a-f]{32}$"), "id %s", jstr(V, "id"));
	ck_assert_msg(matches(jstr(V, "transfer_id"), "^tr_[0-9a-f]{32}$"), "transfer_id %s",
	    jstr(V, "transfer_id"));
	if (tr != NULL)
		member_is(V, "transfer_id", tr);
	if (amount != NULL)
		member_is(V, "amount", amount);
	member_is(V, "currency", "AFN");
	member_is(V, "reason", reason);
	member_is(V, "refund_id", refund_id);
	ck_assert_msg(matches(jstr(V, "created_at"), ISO_UTC), "created_at %s",
	    jstr(V, "created_at"));
}

struct json_object *
reversal_in(struct json_object *R, const char *tr, const char *amount)
{
	struct json_object *revs, *V;
	size_t i;

	ck_assert(json_object_object_get_ex(R, "reversals", &revs));
	for (i = 0; i < json_object_array_length(revs); i++) {
		V = json_object_array_get_idx(revs, i);
		if (strcmp(jstr(V, "transfer_id"), tr) == 0) {
			member_is(V, "amount", amount);
			return V;
		}
	}
	ck_abort_msg("no reversal of %s in %s", tr, json_object_to_json_string(R));
	return NULL;
}

const char *
ledger_of(const char *id)
{
	const char *v = db_value("SELECT t.kind || ' ' || t.merchant_id || ' ' ||"
	    " string_agg(a.account_number || ':' || e.amount, ',' ORDER BY e.amount,"
	    " a.account_number) FROM ledger_transactions t JOIN ledger_entries e ON"
	    " e.transaction_id = t.id JOIN accounts a ON a.id = e.account_id WHERE t.id ="
	    " coalesce((SELECT ledger_transaction_id FROM refunds WHERE id = $1),"
	    " (SELECT ledger_transaction_id FROM transfer_reversals WHERE id = $1))"
	    " GROUP BY t.id", id);

	ck_assert_msg(v != NULL, "no ledger transaction of %s", id);
	return v;
}

const char *
funding_account(void)
{
	static char acct[16];

	snprintf(acct, sizeof(acct), "%s", db_value("SELECT account_number FROM accounts WHERE"
	    " kind = 'system' AND currency = 'AFN'", NULL));
	return acct;
}

const char *
event_of(const char *type, const char *id)
{
	static char evt[64];
	const char *p[2] = { type, id };
	const char *v = db_valuev("SELECT id FROM webhook_events WHERE type = $1 AND"
	    " coalesce(body::json->'data'->'refund', body::json->'data'->'reversal')->>'id' = $2",
	    2, p);

	ck_assert_msg(v != NULL, "no %s event of %s", type, id);
	snprintf(evt, sizeof(evt), "%s", v);
	return evt;
}
