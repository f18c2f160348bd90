#ifndef MP_JSON_H
#define MP_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/*
 * Parses len bytes strictly: RFC 8259 JSON, valid UTF-8, nothing after the value, no
 * NaN/Infinity, no comments. Returns a new object the caller frees with json_object_put,
 * or NULL with the reason written into msg.
 */
struct json_object *json_parse_strict(const char *buf, size_t len, char *msg, size_t msglen);

/*
 * The original text of a JSON number as it appeared in the request (json-c keeps it for
 * decimals; integers are re-formatted from int64). NULL when v is not a number.
 * The string belongs to v.
 */
const char *json_number_text(struct json_object *v);

/* A JSON number printed with exactly two decimals ("36.00") for minor units; NULL on ENOMEM. */
struct json_object *json_money_number(int64_t minor);

/* A JSON string "36.00" for minor units; NULL on ENOMEM. */
struct json_object *json_money_string(int64_t minor);

/*
 * A new success body: {"status_code": 10, "success": true, "message": message} (marketpay-api(7),
 * 2.5). The caller adds the endpoint's fields and frees it; NULL on ENOMEM.
 */
struct json_object *json_success(const char *message);

/* Adds key to obj; returns 0, or -1 when val is NULL or json-c fails (val is released). */
int json_add(struct json_object *obj, const char *key, struct json_object *val);

/* Compact serialization of obj, owned by obj. */
const char *json_text(struct json_object *obj);

#endif
