/*
 * libFuzzer target: a create-session body as session_create reads it,
 * json_parse_strict then session_validate, under the default limits and under tight ones.
 * Every refusal must reply strict JSON; every acceptance must respect the limits and give
 * the database three array literals of as many items: the ids and the names read back, as
 * PostgreSQL reads a quoted element, as the items' own strings, and the prices add up to the
 * amount.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "session.h"
#include "valid.h"
#include "fuzz.h"

/* The sum of the prices literal's elements ({1250,300}), or -1 when it is not one. */
static int64_t
literal_sum(const char *lit)
{
	int64_t sum = 0;
	char *end;

	if (*lit++ != '{')
		return -1;
	for (;;) {
		sum += strtoll(lit, &end, 10);
		if (end == lit)
			return -1;
		if (*end == '}')
			return end[1] == '\0' ? sum : -1;
		if (*end != ',')
			return -1;
		lit = end + 1;
	}
}

/*
 * Whether literal lit ({"a","b\"c"}) holds, in order, the string member key of each of
 * items, read as PostgreSQL's array_in reads a quoted element: a backslash takes the next
 * byte as it is, a double quote ends it.
 */
static bool
literal_is(const char *lit, struct json_object *items, const char *key)
{
	size_t n = json_object_array_length(items), i;
	const char *want;

	if (*lit++ != '{')
		return false;
	for (i = 0; i < n; i++) {
		want = json_object_get_string(json_object_object_get(
		    json_object_array_get_idx(items, i), key));
		if (want == NULL || *lit++ != '"')
			return false;
		for (; *lit != '"'; lit++, want++) {
			if (*lit == '\\')
				lit++;
			if (*lit == '\0' || *lit != *want)
				return false;
		}
		if (*want != '\0' || *++lit != (i + 1 < n ? ',' : '}'))
			return false;
		lit++;
	}
	return *lit == '\0';
}

static void
check_accepted(const struct session_in *in, long max_items, int64_t max_amount)
{
	size_t n = json_object_array_length(in->items), i, len;

	FUZZ_ASSERT(n >= 1 && n <= (size_t)max_items);
	FUZZ_ASSERT(in->amount > 0 && in->amount <= max_amount);
	FUZZ_ASSERT(in->email == NULL || valid_email(in->email));
	FUZZ_ASSERT(in->success_url == NULL || valid_http_url(in->success_url));
	FUZZ_ASSERT(in->failure_url == NULL || valid_http_url(in->failure_url));
	FUZZ_ASSERT(in->user_id == NULL || valid_utf8_chars(in->user_id, strlen(in->user_id)) <= 50);
	/* What session_create hands to mp_create_session: ids, names, prices. */
	for (i = 0; i < 3; i++) {
		FUZZ_ASSERT(in->db_items[i].s != NULL && (size_t)in->db_items[i].n == n);
		len = strlen(in->db_items[i].s);
		FUZZ_ASSERT(len == in->db_items[i].len && in->db_items[i].s[0] == '{' &&
		    in->db_items[i].s[len - 1] == '}');
	}
	FUZZ_ASSERT(literal_is(in->db_items[0].s, in->items, "id"));
	FUZZ_ASSERT(literal_is(in->db_items[1].s, in->items, "name"));
	FUZZ_ASSERT(literal_sum(in->db_items[2].s) == in->amount);
}

static void
check(struct json_object *root, long max_items, int64_t max_amount)
{
	struct session_in in;
	char msg[512]; /* as session_create's */

	msg[0] = '\0';
	if (session_validate(root, max_items, max_amount, &in, msg, sizeof(msg))) {
		check_accepted(&in, max_items, max_amount);
		session_release(&in);
	} else {
		FUZZ_ASSERT(in.db_items[0].s == NULL && in.db_items[1].s == NULL &&
		    in.db_items[2].s == NULL);
		fuzz_check_fail(msg);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *root = fuzz_parse(data, size);

	if (root == NULL)
		return 0;
	check(root, fuzz_app.cfg.max_items, fuzz_app.cfg.max_amount);
	check(root, 2, 1000);
	json_object_put(root);
	return 0;
}
