#ifndef MP_VALID_H
#define MP_VALID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* Field rules are declared in tables; valid_object() walks a table over one JSON object. */

enum valid_type {
	VALID_STRING,  /* JSON string; stored as const char * (owned by the JSON object) */
	VALID_MONEY,   /* JSON number in plain decimal notation; stored as int64_t minor units */
	VALID_ARRAY,   /* JSON array; stored as struct json_object * (owned by the parent) */
	VALID_TYPE__MAX
};

struct valid_field {
	const char *name;       /* JSON key */
	enum valid_type type;
	bool required;
	bool nonempty;          /* strings: "" is rejected */
	size_t max_chars;       /* strings: limit in Unicode characters; 0 = none */
	bool (*check)(const char *s); /* strings: extra rule, NULL = none */
	const char *check_rule; /* words for a failed check ("must be an absolute http(s) URL") */
	size_t offset;          /* where the value goes in the caller's struct */
	size_t present_offset;  /* a bool set when the field was given; SIZE_MAX = none */
};

#define VALID_NO_PRESENT ((size_t)-1)

/*
 * Checks obj (which must be a JSON object) against n rules and stores the values into out.
 * Keys not in the table are rejected. A JSON null counts as absent. On failure returns
 * false and writes one message naming the field (prefix + name) and the rule into msg;
 * out may then be partly filled.
 */
bool valid_object(struct json_object *obj, const struct valid_field *fields, size_t n,
    const char *prefix, int64_t money_max, void *out, char *msg, size_t msglen);

/*
 * The JSON array arr, named name in messages: 1 to max elements, each an object passing the
 * n rules (its prefix "name[i]."), element i stored at out + i * size (zeroed first; out
 * holds max). Returns the number of elements, or 0 with the field and rule in msg.
 */
size_t valid_objects(struct json_object *arr, const char *name, size_t max,
    const struct valid_field *fields, size_t n, int64_t money_max, void *out, size_t size,
    char *msg, size_t msglen);

/*
 * Length of the UTF-8 sequence at p, of at most left bytes (no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 when it is invalid.
 */
size_t valid_utf8_seq(const unsigned char *p, size_t left);

/* True when the len bytes at s are valid UTF-8 by the rules of valid_utf8_seq(). */
bool valid_utf8(const char *s, size_t len);

/* Number of Unicode characters in len bytes of valid UTF-8. */
size_t valid_utf8_chars(const char *s, size_t len);

/* A plausible e-mail address: local@domain.tld, no spaces or controls, at most 254 bytes. */
bool valid_email(const char *s);

/* An absolute http:// or https:// URL with a host, no spaces or controls, at most 2048 bytes. */
bool valid_http_url(const char *s);

/*
 * For a URL valid_http_url() takes: true when its host is one a browser keeps as written, so
 * that it can be named in a Content-Security-Policy: ASCII letters, digits and hyphens in
 * labels joined by single dots, a dotted-quad IPv4 address or a bracketed IPv6 address, with
 * an optional port of 1 to 65535. Percent-encoded and non-ASCII hosts are refused.
 */
bool valid_url_host(const char *url);

/* True when s is a UUID in its 36-character text form (8-4-4-4-12 hex digits, any case). */
bool valid_uuid(const char *s);

#endif
