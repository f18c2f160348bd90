/*
 * Integration tests of the create-session API against the real stack (tests/integration.sh).
 * Worker, database and pool outages: check_outage.c.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>
#include <libpq-fe.h>

#include "fixture.h"
#include "http.h"

#define DENY "Invalid or missing API key."

START_TEST(test_create_ok)
{
	struct http_resp r;
	char buf[256], url[512], want[1024];
	const char *id;
	struct json_object *v;

	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, NULL, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert(json_object_object_get_ex(r.json, "status_code", &v));
	ck_assert_int_eq(json_object_get_int(v), 10);
	ck_assert(json_object_object_get_ex(r.json, "success", &v) && json_object_get_boolean(v));
	ck_assert_ptr_nonnull(http_json_str(&r, "message"));
	id = http_json_str(&r, "session_id");
	ck_assert(matches(id, "^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"));
	snprintf(url, sizeof(url), "%s/checkout/%s", getenv("MARKETPAY_BASE_URL"), id);
	ck_assert_str_eq(http_json_str(&r, "url"), url);
	ck_assert(matches(http_json_str(&r, "expires_at"),
	    "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\+00:00$"));
	/* The bytes, member for member, as marketpay-api(7) shows them. */
	snprintf(want, sizeof(want), "{\"status_code\":10,\"success\":true,\"message\":"
	    "\"Payment session created.\",\"url\":\"%s\",\"expires_at\":\"%s\","
	    "\"session_id\":\"%s\"}", url, http_json_str(&r, "expires_at"), id);
	ck_assert_str_eq(r.body, want);
	ck_assert(matches(http_header(&r, "Request-Id", buf, sizeof(buf)), "^[0-9a-f]{32}$"));
	/* What was stored: the amount computed from the prices, in minor units. */
	ck_assert_str_eq(db_value("SELECT amount || ' ' || currency || ' ' || user_id || ' ' ||"
	    " email || ' ' || status FROM payment_sessions WHERE id = $1", id),
	    "1550 AFN order-42 buyer@example.com open");
	ck_assert_str_eq(db_value("SELECT string_agg(item_id || '=' || price, ',' ORDER BY"
	    " position) FROM session_items WHERE session_id = $1", id), "sku-1=1250,sku-2=300");
	ck_assert_str_eq(db_value("SELECT round(extract(epoch FROM expires_at - created_at))"
	    " FROM payment_sessions WHERE id = $1", id), "1800");
	http_free(&r);
}
END_TEST

START_TEST(test_create_unicode_limits)
{
	struct http_resp r;
	char body[4096], id[256] = "", name[2048] = "";
	int i;

	/* 50 two-byte characters (100 bytes) in id, 500 in name: at the limit, accepted. */
	for (i = 0; i < 50; i++)
		strcat(id, "\xc3\xa9");
	for (i = 0; i < 500; i++)
		strcat(name, i % 2 ? "\xc3\xa9" : "a");
	snprintf(body, sizeof(body), "{\"items\":[{\"id\":\"%s\",\"name\":\"%s\",\"price\":0.01}],"
	    "\"user_id\":\"%s\"}", id, name, id);
	ck_assert_int_eq(create(fx.auth_a, body, -1, NULL, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(db_value("SELECT char_length(item_id) || ' ' || char_length(name) ||"
	    " ' ' || price FROM session_items WHERE session_id = $1",
	    http_json_str(&r, "session_id")), "50 500 1");
	http_free(&r);
}
END_TEST

/*
 * Item ids and names travel to the database as array literals: every character that means
 * something there (quotes, backslashes, braces, commas, spaces, NULL as a word) is stored as
 * sent, in order, and the amount is the sum of the prices.
 */
START_TEST(test_create_array_metacharacters)
{
	struct http_resp r;

	ck_assert_int_eq(create(fx.auth_a, "{\"items\":[{\"id\":\"a\\\"b\",\"name\":\"{x,y}\","
	    "\"price\":1.25},{\"id\":\"NULL\",\"name\":\" back\\\\slash \",\"price\":2},"
	    "{\"id\":\"\\\\\\\"\",\"name\":\"\\u00e9 \\\"q\\\" ,}\",\"price\":0.05}]}", -1, NULL,
	    &r), 0);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	ck_assert_str_eq(db_value("SELECT string_agg(position || '[' || item_id || '|' || name ||"
	    " '|' || price || ']', '' ORDER BY position) || ' ' || (SELECT amount FROM"
	    " payment_sessions WHERE id = $1::uuid) FROM session_items WHERE session_id ="
	    " $1::uuid", http_json_str(&r, "session_id")),
	    "0[a\"b|{x,y}|125]1[NULL| back\\slash |200]2[\\\"|\xc3\xa9 \"q\" ,}|5] 330");
	ck_assert_str_eq(db_value("SELECT (SELECT item_id FROM session_items WHERE session_id ="
	    " $1::uuid AND position = 1) IS NOT NULL", http_json_str(&r, "session_id")), "t");
	http_free(&r);
}
END_TEST

struct bad {
	const char *body;
	const char *needle;
};

static const struct bad bad_bodies[] = {
	{ "{}", "items is required" },
	{ "{\"items\":[]}", "items must not be empty" },
	{ "{\"items\":{}}", "items must be an array" },
	{ "{\"items\":null}", "items is required" },
	{ "{\"items\":[1]}", "items[0] must be an object" },
	{ "{\"items\":[{\"name\":\"a\",\"price\":1}]}", "items[0].id is required" },
	{ "{\"items\":[{\"id\":\"\",\"name\":\"a\",\"price\":1}]}", "items[0].id must not be empty" },
	{ "{\"items\":[{\"id\":\"123456789012345678901234567890123456789012345678901\","
	  "\"name\":\"a\",\"price\":1}]}", "items[0].id must be at most 50 characters" },
	{ "{\"items\":[{\"id\":\"a\",\"price\":1}]}", "items[0].name is required" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"\",\"price\":1}]}", "items[0].name must not be empty" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\"}]}", "items[0].price is required" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":\"1.00\"}]}",
	  "items[0].price must be a number" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":-1}]}",
	  "items[0].price must not be negative" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":0}]}",
	  "items[0].price must be greater than 0" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1},{\"id\":\"c\",\"name\":\"d\","
	  "\"price\":1.234}]}", "items[1].price must have at most two decimal places" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1e3}]}",
	  "items[0].price must be a plain decimal number" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":99999999999999999999}]}",
	  "items[0].price is above the maximum amount" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1000000000.00}]}",
	  "items[0].price is above the maximum amount" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":999999999.99},{\"id\":\"c\","
	  "\"name\":\"d\",\"price\":0.01}]}", "the total of items[].price is above the maximum" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}],"
	  "\"user_id\":\"123456789012345678901234567890123456789012345678901\"}",
	  "user_id must be at most 50 characters" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}],\"email\":\"nope\"}",
	  "email must be a valid e-mail address" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}],"
	  "\"redirect_success_url\":\"javascript:alert(1)\"}",
	  "redirect_success_url must be an absolute http or https URL" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}],"
	  "\"redirect_failure_url\":\"//evil.example/x\"}",
	  "redirect_failure_url must be an absolute http or https URL" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}],\"amount\":1}",
	  "amount is not a known field" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1,\"quantity\":2}]}",
	  "items[0].quantity is not a known field" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\\u0000c\",\"price\":1}]}",
	  "items[0].name must not contain NUL characters" },
	{ "[]", "request body must be a JSON object" },
	{ "", "request body must be a JSON object" },
	{ "{\"items\":[", "not valid JSON" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}]} x", "not valid JSON" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}]}{}", "not valid JSON" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1,\"price\":900}]}",
	  "a key appears twice" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":NaN}]}", "NaN or Infinity" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":Infinity}]}", "NaN or Infinity" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}]/* c */}", "not valid JSON" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"\xff\xfe\",\"price\":1}]}", "not valid JSON" },
	{ "{'items':[]}", "not valid JSON" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"\xed\xa0\x80\",\"price\":1}]}", "invalid UTF-8" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"\xc0\xaf\",\"price\":1}]}", "invalid UTF-8" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\x01\",\"price\":1}]}", "control character" },
	{ "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1.}]}", "decimal point" },
	{ "\"just a string\"", "request body must be a JSON object" },
};

START_TEST(test_create_invalid)
{
	const struct bad *b = &bad_bodies[_i];
	struct http_resp r;
	char before[FOOTPRINT_LEN];

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	ck_assert_int_eq(create(fx.auth_a, b->body, -1, NULL, &r), 0);
	assert_fail(&r, 400, b->needle);
	/* Nothing stored: sessions, items and idempotency records are as before. */
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	http_free(&r);
}
END_TEST

START_TEST(test_transport_errors)
{
	const char *text_ct[] = { "Content-Type: text/plain", fx.auth_a, NULL };
	const char *no_ct[] = { fx.auth_a, "Content-Type:", NULL };
	const char *auth_only[] = { fx.auth_a, NULL };
	struct http_resp r;
	char before[FOOTPRINT_LEN], buf[64], *big;
	size_t n = 300 * 1024;

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	ck_assert_int_eq(http_do("POST", CREATE, text_ct, GOOD_BODY, -1, &r), 0);
	assert_fail(&r, 415, "Content-Type must be application/json");
	http_free(&r);
	ck_assert_int_eq(http_do("POST", CREATE, no_ct, GOOD_BODY, -1, &r), 0);
	assert_fail(&r, 415, "application/json");
	http_free(&r);
	big = malloc(n + 1);
	memset(big, ' ', n);
	big[n] = '\0';
	memcpy(big, GOOD_BODY, strlen(GOOD_BODY));
	ck_assert_int_eq(create(fx.auth_a, big, -1, NULL, &r), 0);
	assert_fail(&r, 413, "at most 262144 bytes");
	http_free(&r);
	free(big);
	ck_assert_int_eq(http_do("GET", "/api/v1/nope", auth_only, NULL, 0, &r), 0);
	assert_fail(&r, 404, "no such endpoint");
	http_free(&r);
	ck_assert_int_eq(http_do("GET", CREATE, auth_only, NULL, 0, &r), 0);
	assert_fail(&r, 405, "POST");
	ck_assert_str_eq(http_header(&r, "Allow", buf, sizeof(buf)), "POST");
	http_free(&r);
	ck_assert_int_eq(http_do("DELETE", "/api/v1/payment/sessions/x", auth_only, NULL, 0, &r), 0);
	assert_fail(&r, 405, "GET");
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
}
END_TEST

/* Authorization values that must all get the same 401, before the body is looked at. */
static const char *bad_auth(int i)
{
	static char buf[512];

	switch (i) {
	case 0: return NULL;
	case 1: return "Authorization: Bearer x";
	case 2: return "Authorization: API-KEY";
	case 3: snprintf(buf, sizeof(buf), "Authorization: API-KEY  %s", fx.key_a); return buf;
	case 4: snprintf(buf, sizeof(buf), "Authorization: API-KEY %s x", fx.key_a); return buf;
	case 5: snprintf(buf, sizeof(buf), "Authorization: API-KEY %s\t", fx.key_a); return buf;
	case 6: snprintf(buf, sizeof(buf), "Authorization: API-KEY %.*sffff",
		    (int)strlen(fx.key_a) - 4, fx.key_a); return buf;
	case 7: snprintf(buf, sizeof(buf), "Authorization: API-KEY %s", fx.key_revoked); return buf;
	case 8: snprintf(buf, sizeof(buf), "Authorization: API-KEY %s", fx.key_live); return buf;
	case 9: snprintf(buf, sizeof(buf), "Authorization: Bearer %s", fx.key_a); return buf;
	default: snprintf(buf, sizeof(buf), "Authorization: %s", fx.key_a); return buf;
	}
}
#define NBAD_AUTH 11

START_TEST(test_auth_denied)
{
	const char *auth = bad_auth(_i);
	struct http_resp r;
	struct json_object *v;
	char before[FOOTPRINT_LEN];

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	/* An invalid body too: auth comes first, so the answer is still 401. */
	ck_assert_int_eq(create(auth, "{\"items\":[]}", -1, NULL, &r), 0);
	ck_assert_int_eq(r.status, 401);
	ck_assert_str_eq(http_json_str(&r, "detail"), DENY);
	ck_assert(!json_object_object_get_ex(r.json, "success", &v));
	http_free(&r);
	/*
	 * With an Idempotency-Key the key is looked up with the key's lock and stored reply:
	 * the same 401, before the body's 400, and for a good body too.
	 */
	ck_assert_int_eq(create(auth, "{\"items\":[]}", -1, "Idempotency-Key: denied-1", &r), 0);
	ck_assert_int_eq(r.status, 401);
	http_free(&r);
	ck_assert_int_eq(create(auth, GOOD_BODY, -1, "Idempotency-Key: denied-1", &r), 0);
	ck_assert_int_eq(r.status, 401);
	ck_assert_str_eq(http_json_str(&r, "detail"), DENY);
	http_free(&r);
	ck_assert_int_eq(http_do("GET", "/api/v1/payment/sessions/00000000-0000-4000-8000-"
	    "000000000000", (const char *[]){ auth, NULL }, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 401);
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
}
END_TEST

START_TEST(test_auth_scheme_case)
{
	struct http_resp r;
	char auth[256];

	snprintf(auth, sizeof(auth), "Authorization: api-key %s", fx.key_a);
	ck_assert_int_eq(create(auth, GOOD_BODY, -1, NULL, &r), 0);
	ck_assert_int_eq(r.status, 200);
	http_free(&r);
}
END_TEST

START_TEST(test_get_session)
{
	struct http_resp c, r;
	struct json_object *items, *it, *v;
	char path[256], bad[200];
	const char *a[] = { fx.auth_a, NULL }, *b[] = { fx.auth_b, NULL };

	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, NULL, &c), 0);
	ck_assert_int_eq(c.status, 200);
	snprintf(path, sizeof(path), "/api/v1/payment/sessions/%s", http_json_str(&c, "session_id"));
	ck_assert_int_eq(http_do("GET", path, a, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(http_json_str(&r, "session_id"), http_json_str(&c, "session_id"));
	ck_assert_str_eq(http_json_str(&r, "status"), "open");
	ck_assert_str_eq(http_json_str(&r, "amount"), "15.50");
	ck_assert_str_eq(http_json_str(&r, "currency"), "AFN");
	ck_assert_str_eq(http_json_str(&r, "user_id"), "order-42");
	ck_assert_str_eq(http_json_str(&r, "email"), "buyer@example.com");
	ck_assert_str_eq(http_json_str(&r, "expires_at"), http_json_str(&c, "expires_at"));
	ck_assert_str_eq(http_json_str(&r, "url"), http_json_str(&c, "url"));
	ck_assert_ptr_nonnull(http_json_str(&r, "created_at"));
	ck_assert(json_object_object_get_ex(r.json, "items", &items));
	ck_assert_int_eq(json_object_array_length(items), 2);
	it = json_object_array_get_idx(items, 0);
	ck_assert(json_object_object_get_ex(it, "name", &v));
	ck_assert_str_eq(json_object_get_string(v), "Tea");
	ck_assert(json_object_object_get_ex(it, "price", &v));
	ck_assert_str_eq(json_object_get_string(v), "12.50");
	http_free(&r);
	/* Another merchant's session looks exactly like a missing one. */
	ck_assert_int_eq(http_do("GET", path, b, NULL, 0, &r), 0);
	assert_fail(&r, 404, "payment session not found");
	http_free(&r);
	ck_assert_int_eq(http_do("GET", "/api/v1/payment/sessions/00000000-0000-4000-8000-"
	    "000000000000", a, NULL, 0, &r), 0);
	assert_fail(&r, 404, "payment session not found");
	http_free(&r);
	ck_assert_int_eq(http_do("GET", "/api/v1/payment/sessions/'%3B--", a, NULL, 0, &r), 0);
	assert_fail(&r, 404, "payment session not found");
	http_free(&r);
	/* The read looks its key up in its own statement; an unknown key is still a 401 first. */
	snprintf(bad, sizeof(bad), "Authorization: API-KEY %.40s%024d", fx.key_a, 7);
	ck_assert_int_eq(http_do("GET", path, (const char *[]){ bad, NULL }, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 401);
	http_free(&r);
	ck_assert_int_eq(http_do("GET", "/api/v1/payment/sessions/'%3B--",
	    (const char *[]){ bad, NULL }, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 401);
	http_free(&r);
	/* With an Idempotency-Key the key is looked up first, the session after: the same reply. */
	ck_assert_int_eq(http_do("GET", path, (const char *[]){ fx.auth_a, "Idempotency-Key: g-1",
	    NULL }, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(http_json_str(&r, "session_id"), http_json_str(&c, "session_id"));
	http_free(&r);
	http_free(&c);
}
END_TEST

START_TEST(test_idempotency)
{
	struct http_resp r1, r2, r3;
	char buf[64], before[FOOTPRINT_LEN], key[300];

	snprintf(before, sizeof(before), "%s", db_value("SELECT count(*) FROM payment_sessions",
	    NULL));
	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, "Idempotency-Key: order-42-try", &r1), 0);
	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, "Idempotency-Key: order-42-try", &r2), 0);
	ck_assert_int_eq(r1.status, 200);
	ck_assert_int_eq(r2.status, 200);
	ck_assert_str_eq(r1.body, r2.body);
	ck_assert_ptr_null(http_header(&r1, "Idempotent-Replayed", buf, sizeof(buf)));
	ck_assert_str_eq(http_header(&r2, "Idempotent-Replayed", buf, sizeof(buf)), "true");
	ck_assert_int_eq(atoi(db_value("SELECT count(*) FROM payment_sessions", NULL)),
	    atoi(before) + 1);
	/* A replay notes the API key's use too (looked up in the replay's transaction). */
	ck_assert_ptr_nonnull(db_value("WITH u AS (UPDATE api_keys SET last_used_at = now() -"
	    " interval '1 hour' WHERE merchant_id = $1::bigint RETURNING 1) SELECT count(*)"
	    " FROM u", fx.merchant_a));
	http_free(&r2);
	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, "Idempotency-Key: order-42-try", &r2), 0);
	ck_assert_str_eq(http_header(&r2, "Idempotent-Replayed", buf, sizeof(buf)), "true");
	ck_assert_str_eq(db_value("SELECT count(*) FROM api_keys WHERE merchant_id = $1::bigint"
	    " AND last_used_at > now() - interval '1 minute'", fx.merchant_a), "1");
	/* The same key with another body is refused; another merchant has its own keys. */
	ck_assert_int_eq(create(fx.auth_a, "{\"items\":[{\"id\":\"x\",\"name\":\"y\",\"price\":1}]}",
	    -1, "Idempotency-Key: order-42-try", &r3), 0);
	assert_fail(&r3, 422, "Idempotency-Key");
	http_free(&r3);
	ck_assert_int_eq(create(fx.auth_b, GOOD_BODY, -1, "Idempotency-Key: order-42-try", &r3), 0);
	ck_assert_int_eq(r3.status, 200);
	ck_assert_str_ne(http_json_str(&r3, "session_id"), http_json_str(&r1, "session_id"));
	http_free(&r3);
	memset(key, 'k', sizeof(key));
	memcpy(key, "Idempotency-Key: ", 17);
	key[17 + 256] = '\0';
	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, key, &r3), 0);
	assert_fail(&r3, 400, "Idempotency-Key must be 1 to 255");
	http_free(&r3);
	/* Records past idempotency_ttl are purged; the fresh one stays. */
	ck_assert_ptr_nonnull(db_value("UPDATE idempotency_keys SET created_at = now() - interval"
	    " '2 days' WHERE key = 'order-42-try' AND merchant_id = $1::bigint RETURNING 1",
	    fx.merchant_b));
	ck_assert_ptr_nonnull(ctl("idempotency purge"));
	ck_assert_str_eq(db_value("SELECT count(*) FROM idempotency_keys WHERE key ="
	    " 'order-42-try' AND merchant_id = $1::bigint", fx.merchant_b), "0");
	ck_assert_str_eq(db_value("SELECT count(*) FROM idempotency_keys WHERE key ="
	    " 'order-42-try' AND merchant_id = $1::bigint", fx.merchant_a), "1");
	http_free(&r1);
	http_free(&r2);
}
END_TEST

START_TEST(test_idempotency_in_flight)
{
	/* Hold the lock a first request with this key would hold, as if it were still running. */
	PGconn *c = hold_idempotency_lock(fx.merchant_a, "busy-key");
	struct http_resp r;
	char revoked[200];

	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, "Idempotency-Key: busy-key", &r), 0);
	assert_fail(&r, 409, "still in progress");
	http_free(&r);
	/* A refused API key (merchant A's, revoked) takes no lock: 401, not the 409. */
	snprintf(revoked, sizeof(revoked), "Authorization: API-KEY %s", fx.key_revoked);
	ck_assert_int_eq(create(revoked, GOOD_BODY, -1, "Idempotency-Key: busy-key", &r), 0);
	ck_assert_int_eq(r.status, 401);
	http_free(&r);
	db_release(c);
	ck_assert_int_eq(create(fx.auth_a, GOOD_BODY, -1, "Idempotency-Key: busy-key", &r), 0);
	ck_assert_int_eq(r.status, 200);
	http_free(&r);
}
END_TEST

START_TEST(test_concurrent_creates)
{
	enum { N = 64 };
	struct http_resp r[N];
	const char *h[] = { JSON_CT, fx.auth_b, NULL };
	char before[32], in_list[N * 40 + 8] = "";
	int i;

	snprintf(before, sizeof(before), "%s", db_value("SELECT count(*) FROM payment_sessions",
	    NULL));
	ck_assert_int_eq(http_parallel(N, CREATE, h, GOOD_BODY, r), 0);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(r[i].status, 200);
		strcat(in_list, i ? "," : "");
		strcat(in_list, http_json_str(&r[i], "session_id"));
	}
	ck_assert_int_eq(atoi(db_value("SELECT count(*) FROM payment_sessions", NULL)),
	    atoi(before) + N);
	/* Every reply names its own stored session. */
	ck_assert_int_eq(atoi(db_value("SELECT count(DISTINCT id) FROM payment_sessions WHERE"
	    " id = ANY(string_to_array($1, ',')::uuid[])", in_list)), N);
	for (i = 0; i < N; i++)
		http_free(&r[i]);
}
END_TEST

/* How many lines of r's header block start with name (case-insensitive) and a colon. */
static int
header_count(const struct http_resp *r, const char *name)
{
	const char *p = r->headers;
	size_t n = strlen(name);
	int count = 0;

	for (; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncasecmp(p, name, n) == 0 && p[n] == ':')
			count++;
	return count;
}

/*
 * Every JSON reply of the API, whatever its status and whether replayed: not stored by a
 * cache, not sniffed as another type; each header once.
 */
START_TEST(test_json_headers)
{
	const char *none[] = { NULL }, *bad_key[] = { "Authorization: API-KEY mp_test_nope",
		NULL }, *auth[] = { fx.auth_a, NULL };
	struct {
		const char *method, *path, *body, *extra;
		const char *const *headers;  /* NULL: create() with merchant A's key */
		long status;
	} cases[] = {
		{ "POST", CREATE, GOOD_BODY, NULL, NULL, 200 },
		{ "POST", CREATE, GOOD_BODY, "Idempotency-Key: headers-1", NULL, 200 },
		{ "POST", CREATE, GOOD_BODY, "Idempotency-Key: headers-1", NULL, 200 },  /* replay */
		{ "POST", CREATE, "{\"items\":[]}", NULL, NULL, 400 },
		{ "GET", "/api/v1/health", NULL, NULL, none, 200 },
		{ "GET", "/api/v1/payment/sessions/00000000-0000-4000-8000-000000000000", NULL, NULL,
		  bad_key, 401 },
		{ "GET", "/api/v1/payment/sessions/00000000-0000-4000-8000-000000000000", NULL, NULL,
		  auth, 404 },
		{ "GET", "/api/v1/nope", NULL, NULL, auth, 404 },
		{ "GET", CREATE, NULL, NULL, auth, 405 },
	};
	struct http_resp r;
	char buf[128];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].headers == NULL)
			ck_assert_int_eq(create(fx.auth_a, cases[i].body, -1, cases[i].extra, &r), 0);
		else
			ck_assert_int_eq(http_do(cases[i].method, cases[i].path, cases[i].headers,
			    cases[i].body, -1, &r), 0);
		ck_assert_msg(r.status == cases[i].status, "case %zu: %ld", i, r.status);
		ck_assert_str_eq(http_header(&r, "Content-Type", buf, sizeof(buf)),
		    "application/json");
		ck_assert_msg(http_header(&r, "Cache-Control", buf, sizeof(buf)) != NULL &&
		    strcmp(buf, "no-store") == 0, "case %zu: Cache-Control in %s", i, r.headers);
		ck_assert_msg(http_header(&r, "X-Content-Type-Options", buf, sizeof(buf)) != NULL &&
		    strcmp(buf, "nosniff") == 0, "case %zu: nosniff in %s", i, r.headers);
		ck_assert_int_eq(header_count(&r, "Cache-Control"), 1);
		ck_assert_int_eq(header_count(&r, "X-Content-Type-Options"), 1);
		if (i == 2)
			ck_assert_str_eq(http_header(&r, "Idempotent-Replayed", buf, sizeof(buf)),
			    "true");
		http_free(&r);
	}
}
END_TEST

START_TEST(test_health)
{
	struct http_resp r;

	ck_assert_int_eq(http_do("GET", "/api/v1/health", NULL, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(http_json_str(&r, "status"), "ok");
	http_free(&r);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("api", "create-session", 60, &t);

	tcase_add_test(t, test_health);
	tcase_add_test(t, test_json_headers);
	tcase_add_test(t, test_create_ok);
	tcase_add_test(t, test_create_unicode_limits);
	tcase_add_test(t, test_create_array_metacharacters);
	tcase_add_loop_test(t, test_create_invalid, 0, sizeof(bad_bodies) / sizeof(bad_bodies[0]));
	tcase_add_test(t, test_transport_errors);
	tcase_add_loop_test(t, test_auth_denied, 0, NBAD_AUTH);
	tcase_add_test(t, test_auth_scheme_case);
	tcase_add_test(t, test_get_session);
	tcase_add_test(t, test_idempotency);
	tcase_add_test(t, test_idempotency_in_flight);
	tcase_add_test(t, test_concurrent_creates);
	return fixture_main(s, NULL, NULL);
}
