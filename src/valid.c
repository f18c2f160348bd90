#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Where the authority of an http:// or https:// URL starts, or NULL for another scheme. */
static const char *
http_authority(const char *s)
{
	if (strncasecmp(s, "https://", 8) == 0)
		return s + 8;
	if (strncasecmp(s, "http://", 7) == 0)
		return s + 7;
	return NULL;
}

bool
valid_http_url(const char *s)
{
	const char *host;
	size_t len = strlen(s), hostlen;

	if (len > 2048 || has_space_or_control(s) || (host = http_authority(s)) == NULL)
		return false;
	hostlen = strcspn(host, "/?#");
	/* A host is required; userinfo ("user@") is refused: it hides where the link goes. */
	if (hostlen == 0 || memchr(host, '@', hostlen) != NULL || host[0] == ':' ||
	    host[0] == '.')
		return false;
	return strchr(s, '\\') == NULL;
}

/* len bytes at s as a C string in buf (bufsize bytes); false when they do not fit. */
static bool
copy_part(const char *s, size_t len, char *buf, size_t bufsize)
{
	if (len >= bufsize)
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return true;
}

/* An IPv4 address in the one form a browser writes it: four decimals, no leading zeros. */
static bool
ipv4_ok(const char *s, size_t len)
{
	char buf[INET_ADDRSTRLEN], back[INET_ADDRSTRLEN];
	struct in_addr a;

	return copy_part(s, len, buf, sizeof(buf)) && inet_pton(AF_INET, buf, &a) == 1 &&
	    inet_ntop(AF_INET, &a, back, sizeof(back)) != NULL && strcmp(buf, back) == 0;
}

/*
 * Labels of ASCII letters, digits and hyphens (1 to 63 each, at most 253 bytes in all) joined
 * by single dots. A name whose last label is a number (decimal, or 0x hex) is an IPv4
 * address to a browser ("1.2.3", "0x7f.1"): that must be a plain dotted quad.
 */
static bool
hostname_ok(const char *s, size_t len)
{
	size_t i, label = 0;
	const char *last;

	if (len == 0 || len > 253)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-",
		    s[i]) == NULL || ++label > 63)
			return false;
	}
	if (label == 0)
		return false;
	last = s + len - label;
	if (strspn(last, "0123456789") >= label || (label >= 2 && last[0] == '0' &&
	    (last[1] == 'x' || last[1] == 'X') &&
	    strspn(last + 2, "0123456789abcdefABCDEF") >= label - 2))
		return ipv4_ok(s, len);
	return true;
}

bool
valid_url_host(const char *url)
{
	const char *host = http_authority(url), *end;
	char buf[INET6_ADDRSTRLEN + 2];
	struct in6_addr a6;
	size_t authlen, hostlen;
	long port;

	if (host == NULL)
		return false;
	authlen = strcspn(host, "/?#");
	if (host[0] == '[') {
		end = memchr(host, ']', authlen);
		if (end == NULL || !copy_part(host + 1, (size_t)(end - host) - 1, buf, sizeof(buf)) ||
		    inet_pton(AF_INET6, buf, &a6) != 1)
			return false;
		hostlen = (size_t)(end - host) + 1;
	} else {
		hostlen = strcspn(host, ":/?#");
		if (!hostname_ok(host, hostlen))
			return false;
	}
	if (hostlen == authlen)
		return true;
	/* A port: 1 to 5 digits, 1 to 65535 (":" alone is no port to a Content-Security-Policy). */
	if (host[hostlen] != ':' || authlen - hostlen - 1 < 1 || authlen - hostlen - 1 > 5 ||
	    strspn(host + hostlen + 1, "0123456789") < authlen - hostlen - 1)
		return false;
	port = strtol(host + hostlen + 1, NULL, 10);
	return port >= 1 && port <= 65535;
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

size_t
valid_objects(struct json_object *arr, const char *name, size_t max,
    const struct valid_field *fields, size_t n, int64_t money_max, void *out, size_t size,
    char *msg, size_t msglen)
{
	size_t count = json_object_array_length(arr), i;
	char prefix[64];

	if (count == 0 || count > max) {
		snprintf(msg, msglen, count == 0 ? "%s must not be empty" :
		    "%s must have at most %zu entries", name, max);
		return 0;
	}
	for (i = 0; i < count; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);

		snprintf(prefix, sizeof(prefix), "%s[%zu]", name, i);
		if (!json_object_is_type(o, json_type_object)) {
			snprintf(msg, msglen, "%s must be an object", prefix);
			return 0;
		}
		strncat(prefix, ".", sizeof(prefix) - strlen(prefix) - 1);
		memset((char *)out + i * size, 0, size);
		if (!valid_object(o, fields, n, prefix, money_max, (char *)out + i * size, msg,
		    msglen))
			return 0;
	}
	return count;
}

bool
valid_uuid(const char *s)
{
	size_t i;

	if (strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (strchr("0123456789abcdefABCDEF", s[i]) == NULL || s[i] == '\0')
			return false;
	}
	return true;
}
