#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "money.h"

/*
 * json-c 0.16 accepts single-quoted strings even in strict mode; RFC 8259 does not. Finds
 * a quote character outside any double-quoted string.
 */
static bool
has_single_quote(const char *buf, size_t len)
{
	bool in_string = false;
	size_t i;

	for (i = 0; i < len; i++) {
		if (in_string) {
			if (buf[i] == '\\')
				i++;
			else if (buf[i] == '"')
				in_string = false;
		} else if (buf[i] == '"')
			in_string = true;
		else if (buf[i] == '\'')
			return true;
	}
	return false;
}

struct json_object *
json_parse_strict(const char *buf, size_t len, char *msg, size_t msglen)
{
	struct json_tokener *tok = NULL;
	struct json_object *obj = NULL;
	enum json_tokener_error jerr;

	if (len == 0) {
		snprintf(msg, msglen, "request body must be a JSON object");
		return NULL;
	}
	if (memchr(buf, '\0', len) != NULL) {
		snprintf(msg, msglen, "request body is not valid JSON: NUL byte");
		return NULL;
	}
	if (has_single_quote(buf, len)) {
		snprintf(msg, msglen, "request body is not valid JSON: single-quoted string");
		return NULL;
	}
	if ((tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH)) == NULL) {
		snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_continue) {
		snprintf(msg, msglen, "request body is not valid JSON: unexpected end of input");
		goto fail;
	}
	if (jerr != json_tokener_success) {
		snprintf(msg, msglen, "request body is not valid JSON: %s",
		    json_tokener_error_desc(jerr));
		goto fail;
	}
	if (json_tokener_get_parse_end(tok) != len) {
		snprintf(msg, msglen, "request body is not valid JSON: data after the value");
		goto fail;
	}
	json_tokener_free(tok);
	return obj;
fail:
	json_object_put(obj);
	json_tokener_free(tok);
	return NULL;
}

const char *
json_number_text(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_int:
		return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
	case json_type_double:
		/* NaN and Infinity carry no original text and print as words money_parse rejects. */
		if (!isfinite(json_object_get_double(v)))
			return "NaN";
		return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
	default:
		return NULL;
	}
}

struct json_object *
json_money_number(int64_t minor)
{
	char buf[MONEY_BUFLEN];

	/*
	 * json-c prints a double through its own text when one is given; the double itself is
	 * never read, so it stays 0 and no floating-point value ever stands for the amount.
	 */
	return json_object_new_double_s(0.0, money_format(minor, buf));
}

struct json_object *
json_money_string(int64_t minor)
{
	char buf[MONEY_BUFLEN];

	return json_object_new_string(money_format(minor, buf));
}

int
json_add(struct json_object *obj, const char *key, struct json_object *val)
{
	if (val == NULL)
		return -1;
	if (json_object_object_add(obj, key, val) != 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

const char *
json_text(struct json_object *obj)
{
	return json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}
