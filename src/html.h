#ifndef MP_HTML_H
#define MP_HTML_H

#include <stddef.h>

/* A growing text buffer for pages; every untrusted value goes in through html_text. */
struct html {
	char *p;
	size_t len, cap;
	int failed;     /* set when an allocation failed; the page is then not sent */
};

/* Appends the formatted text as it is: only for our own markup and trusted values. */
void html_raw(struct html *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends s with &, <, >, " and ' escaped: safe in text and in quoted attributes. */
void html_text(struct html *h, const char *s);

/*
 * Appends a message (a catalog's text): msg escaped as html_text does, with its first "%s"
 * replaced by raw, markup of the caller's own making (an isolated amount or name).
 */
void html_msg(struct html *h, const char *msg, const char *raw);

/* Releases the buffer. */
void html_free(struct html *h);

/*
 * Percent-encodes s for a URL query component (RFC 3986 unreserved characters stay).
 * Returns a string the caller frees, or NULL on ENOMEM.
 */
char *html_url_encode(const char *s);

#endif
