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

/* Adds key to obj; returns 0, or -1 when val is NULL or json-c fails (val is released). */
int json_add(struct json_object *obj, const char *key, struct json_object *val);

/* Compact serialization of obj, owned by obj. */
const char *json_text(struct json_object *obj);

#endif
