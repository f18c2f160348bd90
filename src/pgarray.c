/* PostgreSQL array literals, for lists passed as one parameter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgarray.h"

static void
put(struct pgarray *a, const char *p, size_t n)
{
	char *s;
	size_t cap;

	if (a->oom)
		return;
	if (a->len + n + 1 > a->cap) {
		cap = a->cap ? a->cap : 128;
		while (cap < a->len + n + 1)
			cap *= 2;
		if ((s = realloc(a->s, cap)) == NULL) {
			a->oom = true;
			return;
		}
		a->s = s;
		a->cap = cap;
	}
	memcpy(a->s + a->len, p, n);
	a->len += n;
	a->s[a->len] = '\0';
}

void
pgarray_init(struct pgarray *a)
{
	memset(a, 0, sizeof(*a));
	put(a, "{", 1);
}

static void
separate(struct pgarray *a)
{
	if (a->n++ > 0)
		put(a, ",", 1);
}

void
pgarray_add(struct pgarray *a, const char *text)
{
	size_t n;

	separate(a);
	if (text == NULL) {
		put(a, "NULL", 4);
		return;
	}
	put(a, "\"", 1);
	while (*text != '\0') {
		n = strcspn(text, "\"\\");
		put(a, text, n);
		text += n;
		if (*text != '\0') {
			put(a, "\\", 1);
			put(a, text++, 1);
		}
	}
	put(a, "\"", 1);
}

void
pgarray_add_int(struct pgarray *a, long long v)
{
	char buf[24];

	separate(a);
	put(a, buf, (size_t)snprintf(buf, sizeof(buf), "%lld", v));
}

const char *
pgarray_end(struct pgarray *a)
{
	put(a, "}", 1);
	return a->oom ? NULL : a->s;
}

void
pgarray_free(struct pgarray *a)
{
	free(a->s);
	memset(a, 0, sizeof(*a));
}
