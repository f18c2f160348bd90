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

struct json_object *
list_page(const char *auth, struct http_resp *r, const char *fmt, ...)
{
	struct json_object *v, *data;
	char path[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	api("GET", auth, NULL, NULL, r, LISTS "%s", path);
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

const char *
list_walk(const char *auth, const char *collection, const char *key, int limit,
    const char *before, void (*between)(void *), void *arg)
{
	static char out[IDS_MAX];
	char cursor[64] = "", page[IDS_MAX], *last;
	const char *sep = strchr(collection, '?') ? "&" : "?";
	struct http_resp r;
	struct json_object *data;
	int more, pages;

	out[0] = '\0';
	if (before != NULL)
		snprintf(cursor, sizeof(cursor), "%s", before);
	for (pages = 0; pages < 1000; pages++) {
		if (cursor[0] == '\0')
			data = list_page(auth, &r, "%s%slimit=%d", collection, sep, limit);
		else
			data = list_page(auth, &r, "%s%slimit=%d&%s=%s", collection, sep, limit,
			    before != NULL ? "ending_before" : "starting_after", cursor);
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

long long
list_cents(const char *money)
{
	const char *dot = strchr(money, '.');
	long long whole = strtoll(money, NULL, 10);

	ck_assert_msg(dot != NULL && strlen(dot) == 3, "money %s", money);
	return whole * 100 + (money[0] == '-' ? -1 : 1) * strtoll(dot + 1, NULL, 10);
}
