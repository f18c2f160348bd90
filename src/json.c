#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "valid.h"

/*
 * What json-c 0.16 lets through even in strict mode and RFC 8259 does not: invalid UTF-8,
 * raw control characters inside strings, single-quoted strings, "1." Returns the problem, or
 * NULL when the text is clean. *members counts the colons outside strings: in valid JSON,
 * one per object member.
 */
static const char *
lexical_problem(const char *buf, size_t len, size_t *members)
{
	const unsigned char *p = (const unsigned char *)buf;
	bool in_string = false;
	size_t i, n;

	for (i = 0; i < len; i += n) {
		if ((n = valid_utf8_seq(p + i, len - i)) == 0)
			return "invalid UTF-8";
		if (n > 1)
			continue;
		if (in_string) {
			if (p[i] < 0x20)
				return "control character in a string";
			if (p[i] == '\\' && i + 1 < len && p[i + 1] >= 0x20)
				n = 2;
			else if (p[i] == '"')
				in_string = false;
		} else if (p[i] == '"')
			in_string = true;
		else if (p[i] == ':')
			(*members)++;
		else if (p[i] == '\'')
			return "single-quoted string";
		else if (p[i] == '.' && (i == 0 || p[i - 1] < '0' || p[i - 1] > '9' ||
		    i + 1 == len || p[i + 1] < '0' || p[i + 1] > '9'))
			return "a decimal point needs digits on both sides";
	}
	return NULL;
}

/*
 * Members of every object in the tree. json-c keeps the last of two equal keys (and cuts a
 * key at \u0000, which makes "a\u0000b" equal "a"), so fewer members here than colons in
 * the text means a key appeared twice in one object: which value counts would be a guess.
 */
static size_t
count_members(struct json_object *o)
{
	size_t i, n, sum = 0;

	switch (json_object_get_type(o)) {
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			sum += count_members(json_object_array_get_idx(o, i));
		return sum;
	case json_type_object: {
		json_object_object_foreach(o, key, val) {
			(void)key;
			sum += 1 + count_members(val);
		}
		return sum;
	}
	default:
		return 0;
	}
}

/* json-c parses NaN and Infinity even in strict mode; JSON has no such numbers. */
static bool
has_non_finite(struct json_object *o)
{
	size_t i, n;

	switch (json_object_get_type(o)) {
	case json_type_double:
		return !isfinite(json_object_get_double(o));
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			if (has_non_finite(json_object_array_get_idx(o, i)))
				return true;
		return false;
	case json_type_object: {
		json_object_object_foreach(o, key, val) {
			(void)key;
			if (has_non_finite(val))
				return true;
		}
		return false;
	}
	default:
		return false;
	}
}

struct json_object *
json_parse_strict(const char *buf, size_t len, char *msg, size_t msglen)
{
	struct json_tokener *tok = NULL;
	struct json_object *obj = NULL;
	enum json_tokener_error jerr;
	const char *problem;
	size_t first, members = 0;

	if (len == 0) {
		snprintf(msg, msglen, "request body must be a JSON object");
		return NULL;
	}
	if (memchr(buf, '\0', len) != NULL) {
		snprintf(msg, msglen, "request body is not valid JSON: NUL byte");
		return NULL;
	}
	if ((problem = lexical_problem(buf, len, &members)) != NULL) {
		snprintf(msg, msglen, "request body is not valid JSON: %s", problem);
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
		/*
		 * json-c waits for more after a bare top-level scalar such as 12 or "x". The scan
		 * stays within len: buf need not be NUL-terminated and may be all whitespace.
		 */
		for (first = 0; first < len && memchr(" \t\r\n", buf[first], 4) != NULL; first++)
			;
		if (first < len && buf[first] != '{' && buf[first] != '[')
			snprintf(msg, msglen, "request body must be a JSON object");
		else
			snprintf(msg, msglen, "request body is not valid JSON: unexpected end of "
			    "input");
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
	/* A top-level null parses to no object at all: without this, NULL came back with no msg. */
	if (obj == NULL) {
		snprintf(msg, msglen, "request body must be a JSON object");
		goto fail;
	}
	if (has_non_finite(obj)) {
		snprintf(msg, msglen, "request body is not valid JSON: NaN or Infinity");
		goto fail;
	}
	if (count_members(obj) != members) {
		snprintf(msg, msglen, "request body is not valid JSON: a key appears twice in one "
		    "object");
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
