/* create-session bodies with one field of merchant text chosen by the case. */
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "session_body.h"

const struct body_field fields[F__MAX] = {
	/* F_ID */
	{ "items[0].id", "SELECT item_id FROM session_items WHERE session_id = $1::uuid" },
	/* F_NAME */
	{ "items[0].name", "SELECT name FROM session_items WHERE session_id = $1::uuid" },
	/* F_USER */
	{ "user_id", "SELECT user_id FROM payment_sessions WHERE id = $1::uuid" },
	/* F_EMAIL */
	{ "email", "SELECT email FROM payment_sessions WHERE id = $1::uuid" },
	/* F_SUCCESS */
	{ "redirect_success_url", "SELECT redirect_success_url FROM payment_sessions WHERE"
	  " id = $1::uuid" },
	/* F_FAILURE */
	{ "redirect_failure_url", "SELECT redirect_failure_url FROM payment_sessions WHERE"
	  " id = $1::uuid" },
};

char *
body_with(enum field f, const char *value, size_t len)
{
	const char *plain[F__MAX] = { "sku-1", "Tea", "order-1", "buyer@example.com",
		"https://shop.example/ok", "https://shop.example/failed" };
	const char *keys[F__MAX] = { "id", "name", "user_id", "email", "redirect_success_url",
		"redirect_failure_url" };
	struct json_object *o = json_object_new_object(), *it = json_object_new_object();
	struct json_object *items = json_object_new_array();
	char *out;
	int i;

	for (i = 0; i < F__MAX; i++) {
		struct json_object *v = (enum field)i == f ?
		    json_object_new_string_len(value, (int)len) : json_object_new_string(plain[i]);

		json_object_object_add(i <= F_NAME ? it : o, keys[i], v);
	}
	json_object_object_add(it, "price", json_object_new_double_s(1.0, "1.00"));
	json_object_array_add(items, it);
	json_object_object_add(o, "items", items);
	out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	ck_assert_ptr_nonnull(out);
	return out;
}
