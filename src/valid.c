#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "money.h"
#include "valid.h"

/*
 * json-c 0.16's VALIDATE_UTF8 lets overlong forms and surrogates through, and PostgreSQL
 * would then refuse the text with a 500: json.c checks request bodies with this instead.
 */
size_t
valid_utf8_seq(const unsigned char *p, size_t left)
{
	size_t n, i;
	unsigned int cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		n = 2, cp = p[0] & 0x1F;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF)
		n = 3, cp = p[0] & 0x0F;
	else if (p[0] >= 0xF0 && p[0] <= 0xF4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (left < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

bool
valid_utf8(const char *s, size_t len)
{
	size_t i, n;

	for (i = 0; i < len; i += n)
		if ((n = valid_utf8_seq((const unsigned char *)s + i, len - i)) == 0)
			return false;
	return true;
}

size_t
valid_utf8_chars(const char *s, size_t len)
{
	size_t i, n = 0;

	/* Continuation bytes are 10xxxxxx; every other byte starts a character. */
	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			n++;
	return n;
}

static bool
has_space_or_control(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= 0x20 || *s == 0x7f)
			return true;
	return false;
}

bool
valid_email(const char *s)
{
	const char *at, *dot;
	size_t len = strlen(s);

	if (len < 3 || len > 254 || has_space_or_control(s))
		return false;
	at = strchr(s, '@');
	if (at == NULL || at == s || strchr(at + 1, '@') != NULL || at - s > 64)
		return false;
	dot = strrchr(at + 1, '.');
	/* The domain needs a dot with a label on both sides: "a@b.c". */
	if (dot == NULL || dot == at + 1 || dot[1] == '\0' || at[1] == '.')
		return false;
	return strstr(at + 1, "..") == NULL;
}

bool
valid_http_url(const char *s)
{
	const char *host;
	size_t len = strlen(s), hostlen;

	if (len > 2048 || has_space_or_control(s))
		return false;
	if (strncasecmp(s, "https://", 8) == 0)
		host = s + 8;
	else if (strncasecmp(s, "http://", 7) == 0)
		host = s + 7;
	else
		return false;
	hostlen = strcspn(host, "/?#");
	/* A host is required; userinfo ("user@") is refused: it hides where the link goes. */
	if (hostlen == 0 || memchr(host, '@', hostlen) != NULL || host[0] == ':' ||
	    host[0] == '.')
		return false;
	return strchr(s, '\\') == NULL;
}

static const char *const type_word[VALID_TYPE__MAX] = {
	"a string",  /* VALID_STRING */
	"a number",  /* VALID_MONEY */
	"an array",  /* VALID_ARRAY */
};

static bool
type_ok(enum valid_type t, struct json_object *v)
{
	switch (t) {
	case VALID_STRING: return json_object_is_type(v, json_type_string);
	case VALID_MONEY:  return json_object_is_type(v, json_type_int) ||
	                          json_object_is_type(v, json_type_double);
	case VALID_ARRAY:  return json_object_is_type(v, json_type_array);
	default:           return false;
	}
}

static bool
check_string(const struct valid_field *f, struct json_object *v, const char *prefix,
    char *msg, size_t msglen)
{
	const char *s = json_object_get_string(v);
	size_t len = (size_t)json_object_get_string_len(v);

	if (strlen(s) != len) {
		snprintf(msg, msglen, "%s%s must not contain NUL characters", prefix, f->name);
		return false;
	}
	if (f->nonempty && len == 0) {
		snprintf(msg, msglen, "%s%s must not be empty", prefix, f->name);
		return false;
	}
	if (f->max_chars > 0 && valid_utf8_chars(s, len) > f->max_chars) {
		snprintf(msg, msglen, "%s%s must be at most %zu characters", prefix, f->name,
		    f->max_chars);
		return false;
	}
	if (f->check != NULL && !f->check(s)) {
		snprintf(msg, msglen, "%s%s %s", prefix, f->name, f->check_rule);
		return false;
	}
	return true;
}

static bool
known_key(const char *key, const struct valid_field *fields, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(key, fields[i].name) == 0)
			return true;
	return false;
}

bool
valid_object(struct json_object *obj, const struct valid_field *fields, size_t n,
    const char *prefix, int64_t money_max, void *out, char *msg, size_t msglen)
{
	char *base = out;
	size_t i;

	json_object_object_foreach(obj, key, unused) {
		(void)unused;
		if (!known_key(key, fields, n)) {
			snprintf(msg, msglen, "%s%s is not a known field", prefix, key);
			return false;
		}
	}
	for (i = 0; i < n; i++) {
		const struct valid_field *f = &fields[i];
		struct json_object *v = NULL;
		enum money_rc rc;
		int64_t minor = 0;

		if (!json_object_object_get_ex(obj, f->name, &v) || v == NULL) {
			if (f->required) {
				snprintf(msg, msglen, "%s%s is required", prefix, f->name);
				return false;
			}
			continue;
		}
		if (!type_ok(f->type, v)) {
			snprintf(msg, msglen, "%s%s must be %s", prefix, f->name, type_word[f->type]);
			return false;
		}
		switch (f->type) {
		case VALID_STRING:
			if (!check_string(f, v, prefix, msg, msglen))
				return false;
			*(const char **)(base + f->offset) = json_object_get_string(v);
			break;
		case VALID_MONEY:
			rc = money_parse(json_number_text(v), strlen(json_number_text(v)),
			    money_max, &minor);
			if (rc != MONEY_OK) {
				snprintf(msg, msglen, "%s%s %s", prefix, f->name, money_rule(rc));
				return false;
			}
			*(int64_t *)(base + f->offset) = minor;
			break;
		case VALID_ARRAY:
			*(struct json_object **)(base + f->offset) = v;
			break;
		default:
			snprintf(msg, msglen, "%s%s has an unknown rule", prefix, f->name);
			return false;
		}
		if (f->present_offset != VALID_NO_PRESENT)
			*(bool *)(base + f->present_offset) = true;
	}
	return true;
}
