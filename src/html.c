#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"

static int
reserve(struct html *h, size_t more)
{
	size_t cap;
	char *p;

	if (h->failed)
		return -1;
	if (h->len + more + 1 <= h->cap)
		return 0;
	cap = h->cap ? h->cap : 4096;
	while (cap < h->len + more + 1)
		cap *= 2;
	if ((p = realloc(h->p, cap)) == NULL) {
		h->failed = 1;
		return -1;
	}
	h->p = p;
	h->cap = cap;
	return 0;
}

void
html_raw(struct html *h, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(h, (size_t)n) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(h->p + h->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	h->len += (size_t)n;
}

void
html_text(struct html *h, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '&': html_raw(h, "&amp;"); break;
		case '<': html_raw(h, "&lt;"); break;
		case '>': html_raw(h, "&gt;"); break;
		case '"': html_raw(h, "&quot;"); break;
		case '\'': html_raw(h, "&#39;"); break;
		default:
			if (reserve(h, 1) == 0) {
				h->p[h->len++] = *s;
				h->p[h->len] = '\0';
			}
		}
	}
}

void
html_msg(struct html *h, const char *msg, const char *raw)
{
	const char *at = strstr(msg, "%s");
	char *head;

	if (at == NULL) {
		html_text(h, msg);
		return;
	}
	if ((head = strndup(msg, (size_t)(at - msg))) == NULL) {
		h->failed = 1;
		return;
	}
	html_text(h, head);
	free(head);
	html_raw(h, "%s", raw);
	html_text(h, at + 2);
}

void
html_free(struct html *h)
{
	free(h->p);
	memset(h, 0, sizeof(*h));
}

char *
html_url_encode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = malloc(strlen(s) * 3 + 1), *o = out;

	if (out == NULL)
		return NULL;
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~')
			*o++ = (char)c;
		else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 0xf];
		}
	}
	*o = '\0';
	return out;
}
