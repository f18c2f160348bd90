/*
 * libFuzzer target: jtext_pg, which copies the database's JSON text into a reply without
 * parsing it, and jtext_member, which finds the session's id in what it copied. Neither may
 * read or write past its text whatever the input. When the input is a JSON object that
 * json_parse_strict accepts, the copy must be accepted and mean the same object, as a whole
 * and as members joined to a reply's; when jtext_pg refuses it, the reply keeps its head
 * only.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "json.h"
#include "jtext.h"

/* The copy parsed again and compared with the input's parse. */
static void
same_object(struct json_object *want, const char *text)
{
	char msg[128];
	struct json_object *got = json_parse_strict(text, strlen(text), msg, sizeof(msg));

	FUZZ_ASSERT(got != NULL);
	FUZZ_ASSERT(json_object_equal(want, got));
	json_object_put(got);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *v;
	struct jtext whole = { 0 }, members = { 0 };
	struct json_object *in;
	char msg[128];
	size_t n;

	jtext_lit(&whole, "[");
	jtext_pg(&whole, text, size, false);
	jtext_lit(&members, "{\"head\":1");
	jtext_pg(&members, text, size, true);
	FUZZ_ASSERT(whole.failed == members.failed);
	if (whole.failed) {
		FUZZ_ASSERT(whole.len == 1 && strcmp(whole.s, "[") == 0);
		FUZZ_ASSERT(strcmp(members.s, "{\"head\":1") == 0);
	} else {
		FUZZ_ASSERT(strlen(whole.s) == whole.len && whole.len <= size + 1);
		FUZZ_ASSERT(whole.s[1] == '{' && whole.s[whole.len - 1] == '}');
		if ((v = jtext_member(&whole, 1, 1, "session_id", &n)) != NULL)
			FUZZ_ASSERT(v > whole.s && v + n < whole.s + whole.len);
		(void)jtext_member(&members, 0, 0, "session_id", &n);
	}
	in = json_parse_strict(text, size, msg, sizeof(msg));
	if (in != NULL && json_object_is_type(in, json_type_object)) {
		FUZZ_ASSERT(!whole.failed);
		same_object(in, whole.s + 1);
		/* Its members after the head's: the same object with "head" (when it had none). */
		if (!json_object_object_get_ex(in, "head", NULL)) {
			FUZZ_ASSERT(json_object_object_add(in, "head", json_object_new_int(1)) == 0);
			jtext_lit(&members, "}");
			same_object(in, members.s);
		}
	}
	json_object_put(in);
	jtext_free(&whole);
	jtext_free(&members);
	return 0;
}
