/* JSON replies as text, around PostgreSQL's own JSON objects (see jtext.h). */
#include <stdlib.h>
#include <string.h>

#include "jtext.h"

/* Room for n more bytes and a NUL; false (t failed) when there is none. */
static bool
room(struct jtext *t, size_t n)
{
	size_t cap;
	char *s;

	if (t->failed)
		return false;
	if (t->len + n + 1 <= t->cap)
		return true;
	for (cap = t->cap ? t->cap : 512; cap < t->len + n + 1; cap *= 2)
		;
	if ((s = realloc(t->s, cap)) == NULL) {
		t->failed = true;
		return false;
	}
	t->s = s;
	t->cap = cap;
	return true;
}

void
jtext_reserve(struct jtext *t, size_t n)
{
	(void)room(t, n);
}

void
jtext_raw(struct jtext *t, const char *s, size_t n)
{
	if (!room(t, n))
		return;
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = '\0';
}

void
jtext_lit(struct jtext *t, const char *s)
{
	jtext_raw(t, s, strlen(s));
}

void
jtext_string(struct jtext *t, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	char *o;

	/* Six bytes at most for each, and the quotes. */
	if (!room(t, strlen(s) * 6 + 2))
		return;
	o = t->s + t->len;
	*o++ = '"';
	for (; *p != '\0'; p++) {
		switch (*p) {
		case '"': *o++ = '\\'; *o++ = '"'; break;
		case '\\': *o++ = '\\'; *o++ = '\\'; break;
		case '\b': *o++ = '\\'; *o++ = 'b'; break;
		case '\f': *o++ = '\\'; *o++ = 'f'; break;
		case '\n': *o++ = '\\'; *o++ = 'n'; break;
		case '\r': *o++ = '\\'; *o++ = 'r'; break;
		case '\t': *o++ = '\\'; *o++ = 't'; break;
		default:
			if (*p < 0x20) {
				memcpy(o, "\\u00", 4);
				o[4] = hex[*p >> 4];
				o[5] = hex[*p & 0xf];
				o += 6;
			} else
				*o++ = (char)*p;
		}
	}
	*o++ = '"';
	*o = '\0';
	t->len = (size_t)(o - t->s);
}

void
jtext_success(struct jtext *t, const char *message)
{
	jtext_lit(t, "{\"status_code\":10,\"success\":true");
	if (message == NULL)
		return;
	jtext_lit(t, ",\"message\":");
	jtext_string(t, message);
}

static bool
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* What ends a run of a string's bytes in jtext_pg: its end, an escape, and a NUL. */
static const bool string_stop[256] = { ['\0'] = true, ['"'] = true, ['\\'] = true };

void
jtext_pg(struct jtext *t, const char *text, size_t len, bool members)
{
	size_t i = 0, depth = 0, start = t->len;
	bool quoted = false, closed = false;
	char *o, c;

	while (i < len && blank(text[i]))
		i++;
	if (i == len || text[i] != '{') {
		t->failed = true;
		return;
	}
	/* The text without its blanks is no longer than it is. */
	if (!room(t, len - i))
		return;
	for (o = t->s + t->len; i < len; i++) {
		if (quoted) {
			/* A string's bytes up to its next quote, escape or NUL, copied as one run. */
			size_t r = i;

			while (r < len && !string_stop[(unsigned char)text[r]])
				r++;
			memcpy(o, text + i, r - i);
			o += r - i;
			if ((i = r) == len)
				break;
		}
		c = text[i];
		if (c == '\0')
			break;   /* no JSON text holds one */
		if (quoted) {
			if (c == '\\' && i + 1 < len) {
				*o++ = c;
				if ((c = text[++i]) == '\0')
					break;
			} else if (c == '"')
				quoted = false;
		} else if (blank(c))
			continue;
		else if (closed)
			break;
		else if (c == '"')
			quoted = true;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0) {
			if (c != '}')
				break;   /* "{ ]": not an object's end */
			closed = true;
		}
		*o++ = c;
	}
	if (quoted || !closed || i < len) {
		t->failed = true;
		t->s[start] = '\0';
		t->len = start;
		return;
	}
	t->len = (size_t)(o - t->s);
	if (members) {
		/* {...} becomes ,... and {} nothing */
		if (t->len - start == 2)
			t->len = start;
		else {
			t->s[start] = ',';
			t->len--;
		}
	}
	t->s[t->len] = '\0';
}

const char *
jtext_member(const struct jtext *t, size_t from, int depth, const char *key, size_t *n)
{
	size_t i, k = strlen(key), end = t->len;
	const char *s = t->s, *v;
	int d = 0;

	if (t->failed)
		return NULL;
	for (i = from; i < end; i++) {
		switch (s[i]) {
		case '{':
		case '[':
			d++;
			break;
		case '}':
		case ']':
			d--;
			break;
		case '"':
			/* A string: a key of this object when ':' follows it at the object's depth. */
			if (d == depth && i + k + 3 < end && memcmp(s + i + 1, key, k) == 0 &&
			    memcmp(s + i + k + 1, "\":\"", 3) == 0) {
				v = s + i + k + 4;
				*n = strcspn(v, "\"\\");
				return v[*n] == '"' ? v : NULL;
			}
			for (i++; i < end && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			break;
		}
	}
	return NULL;
}

void
jtext_free(struct jtext *t)
{
	free(t->s);
	memset(t, 0, sizeof(*t));
}
