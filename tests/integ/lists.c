/* What the list suites share: pages, their ids, a collection walked. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "fixture.h"
#include "lists.h"
#include "refunds.h"

#define IDS_MAX 16384

/* r, the reply to GET path, must be a 200 of the list form; returns its data. */
static struct json_object *
list_form(const char *path, const struct http_resp *r)
{
	struct json_object *v, *data;

	ck_assert_msg(r->status == 200, "GET %s: %ld %s", path, r->status, r->body);
	ck_assert(json_object_object_length(r->json) == 4);
	ck_assert(json_object_object_get_ex(r->json, "status_code", &v) &&
	    json_object_get_int(v) == 10);
	ck_assert(json_object_object_get_ex(r->json, "success", &v) &&
	    json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v));
	ck_assert(json_object_object_get_ex(r->json, "has_more", &v) &&
	    json_object_is_type(v, json_type_boolean));
	ck_assert(json_object_object_get_ex(r->json, "data", &data) &&
	    json_object_is_type(data, json_type_array));
	return data;
}

struct json_object *
list_page(const char *auth, struct http_resp *r, const char *fmt, ...)
{
	char path[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	api("GET", auth, NULL, NULL, r, LISTS "%s", path);
	return list_form(path, r);
}

/*
 * The page at path as auth into r, sent at the same time as the requests race(arg) makes
 * (each must answer 200); its data (owned by r).
 */
static struct json_object *
raced_page(const char *auth, struct http_resp *r, const char *path,
    int (*race)(void *, struct http_req *), void *arg)
{
	const char *h[] = { auth, NULL };
	struct http_req reqs[LIST_RACE_MAX + 1];
	struct http_resp out[LIST_RACE_MAX + 1];
	char full[1100];
	int i, n = race(arg, reqs);

	ck_assert_int_le(n, LIST_RACE_MAX);
	snprintf(full, sizeof(full), LISTS "%s", path);
	reqs[n] = (struct http_req){ "GET", full, h, NULL };
	ck_assert_int_eq(http_parallel_reqs(n + 1, reqs, out, NULL, NULL), 0);
	for (i = 0; i < n; i++) {
		ck_assert_msg(out[i].status == 200, "%s %s: %ld %s", reqs[i].method,
		    reqs[i].path, out[i].status, out[i].body);
		http_free(&out[i]);
	}
	*r = out[n];
	return list_form(path, r);
}

void
list_expect(const char *auth, const char *key, const char *want, const char *fmt, ...)
{
	struct http_resp r;
	char path[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	ck_assert_str_eq(list_ids(list_page(auth, &r, "%s", path), key), want);
	http_free(&r);
}

int
list_has_more(const struct http_resp *r)
{
	struct json_object *v;

	ck_assert(json_object_object_get_ex(r->json, "has_more", &v));
	return json_object_get_boolean(v);
}

const char *
list_ids(struct json_object *data, const char *key)
{
	static char out[IDS_MAX];
	size_t i;

	out[0] = '\0';
	for (i = 0; i < json_object_array_length(data); i++) {
		const char *id = jstr(json_object_array_get_idx(data, i), key);

		ck_assert_ptr_nonnull(id);
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? " " : "", id);
	}
	return out;
}

/* list_walk, each page's request sent alone or (race not NULL) as list_walk_racing's. */
static const char *
walk(const char *auth, const char *collection, const char *key, int limit,
    const char *before, void (*between)(void *), int (*race)(void *, struct http_req *),
    void *arg)
{
	static char out[IDS_MAX];
	char cursor[64] = "", page[IDS_MAX], path[1024], *last;
	const char *sep = strchr(collection, '?') ? "&" : "?";
	struct http_resp r;
	struct json_object *data;
	int more, pages;

	out[0] = '\0';
	if (before != NULL)
		snprintf(cursor, sizeof(cursor), "%s", before);
	for (pages = 0; pages < 1000; pages++) {
		if (cursor[0] == '\0')
			snprintf(path, sizeof(path), "%s%slimit=%d", collection, sep, limit);
		else
			snprintf(path, sizeof(path), "%s%slimit=%d&%s=%s", collection, sep, limit,
			    before != NULL ? "ending_before" : "starting_after", cursor);
		data = race != NULL ? raced_page(auth, &r, path, race, arg) :
		    list_page(auth, &r, "%s", path);
		more = list_has_more(&r);
		ck_assert_int_le(json_object_array_length(data), limit);
		/* A full page when more follow; a short one says there are no more. */
		if (more)
			ck_assert_int_eq(json_object_array_length(data), limit);
		snprintf(page, sizeof(page), "%s", list_ids(data, key));
		if (before != NULL) {   /* newer pages go in front */
			size_t n = strlen(page), o = strlen(out), gap = n && o ? 1 : 0;

			ck_assert_uint_lt(n + gap + o, sizeof(out));
			memmove(out + n + gap, out, o + 1);
			memcpy(out, page, n);
			if (gap)
				out[n] = ' ';
			last = page;
		} else {
			size_t n = strlen(page), o = strlen(out), gap = n && o ? 1 : 0;

			ck_assert_uint_lt(n + gap + o, sizeof(out));
			if (gap)
				out[o++] = ' ';
			memcpy(out + o, page, n + 1);
			last = strrchr(page, ' ');
			last = last ? last + 1 : page;
		}
		ck_assert_uint_lt(strcspn(last, " "), sizeof(cursor));
		memcpy(cursor, last, strcspn(last, " "));
		cursor[strcspn(last, " ")] = '\0';
		http_free(&r);
		if (!more || page[0] == '\0')
			break;
		if (between != NULL)
			between(arg);
	}
	return out;
}

const char *
list_walk(const char *auth, const char *collection, const char *key, int limit,
    const char *before, void (*between)(void *), void *arg)
{
	return walk(auth, collection, key, limit, before, between, NULL, arg);
}

const char *
list_walk_racing(const char *auth, const char *collection, const char *key, int limit,
    const char *before, int (*race)(void *, struct http_req *), void *arg)
{
	return walk(auth, collection, key, limit, before, NULL, race, arg);
}

void
list_refused(const char *auth, const char *path, long status, const char *needle)
{
	struct http_resp r;
	char before[FOOTPRINT_LEN];

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	api("GET", auth, NULL, NULL, &r, LISTS "%s", path);
	if (status == 401) {
		ck_assert_msg(r.status == 401, "%s: %ld %s", path, r.status, r.body);
		ck_assert_str_eq(http_json_str(&r, "detail"), needle);
	} else
		assert_fail(&r, status, needle);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	http_free(&r);
}

void
list_deposits(const char *acct, int n)
{
	char count[16];
	const char *p[2] = { acct, count }, *made;

	snprintf(count, sizeof(count), "%d", n);
	made = db_valuev("SELECT count(mp_post('deposit', a.merchant_id, 'deposit', a.currency,"
	    " ARRAY[mp_funding_account(a.currency), a.id], ARRAY[-1, 1]::bigint[]))"
	    " FROM accounts a, generate_series(1, $2::int) WHERE a.account_number = $1", 2, p);
	need(made != NULL && strcmp(made, count) == 0, "posting deposits");
}

long long
list_cents(const char *money)
{
	const char *dot = strchr(money, '.');
	long long whole = strtoll(money, NULL, 10);

	ck_assert_msg(dot != NULL && strlen(dot) == 3, "money %s", money);
	return whole * 100 + (money[0] == '-' ? -1 : 1) * strtoll(dot + 1, NULL, 10);
}
