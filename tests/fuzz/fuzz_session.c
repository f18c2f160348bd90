/*
 * libFuzzer target: a create-session body as session_create reads it,
 * json_parse_strict then session_validate, under the default limits and under tight ones.
 * Every refusal must reply strict JSON; every acceptance must respect the limits and give
 * the database an items document that is strict JSON itself.
 */
#include <stdint.h>
#include <string.h>

#include "json.h"
#include "session.h"
#include "valid.h"
#include "fuzz.h"

static void
check_accepted(const struct session_in *in, long max_items, int64_t max_amount)
{
	struct json_object *again;
	const char *text;
	char msg[512];
	size_t n = json_object_array_length(in->items);

	FUZZ_ASSERT(n >= 1 && n <= (size_t)max_items);
	FUZZ_ASSERT(in->amount > 0 && in->amount <= max_amount);
	FUZZ_ASSERT(json_object_array_length(in->db_items) == n);
	FUZZ_ASSERT(in->email == NULL || valid_email(in->email));
	FUZZ_ASSERT(in->success_url == NULL || valid_http_url(in->success_url));
	FUZZ_ASSERT(in->failure_url == NULL || valid_http_url(in->failure_url));
	FUZZ_ASSERT(in->user_id == NULL || valid_utf8_chars(in->user_id, strlen(in->user_id)) <= 50);
	/* What session_create hands to PostgreSQL as jsonb. */
	FUZZ_ASSERT((text = json_text(in->db_items)) != NULL);
	again = json_parse_strict(text, strlen(text), msg, sizeof(msg));
	FUZZ_ASSERT(again != NULL);
	json_object_put(again);
}

static void
check(struct json_object *root, long max_items, int64_t max_amount)
{
	struct session_in in;
	char msg[512]; /* as session_create's */

	msg[0] = '\0';
	if (session_validate(root, max_items, max_amount, &in, msg, sizeof(msg))) {
		check_accepted(&in, max_items, max_amount);
		json_object_put(in.db_items);
	} else {
		FUZZ_ASSERT(in.db_items == NULL);
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
