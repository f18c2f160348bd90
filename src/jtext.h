/*
 * A JSON reply written as text around the objects PostgreSQL made for it (mp_session_json,
 * mp_refund_json and the rest), which are copied in without being parsed and written out
 * again: the bytes are the ones json_text would give for the same reply.
 */
#ifndef MARKETPAY_JTEXT_H
#define MARKETPAY_JTEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The text so far; failed once an allocation failed or a database object was not one. */
struct jtext {
	char *s;
	size_t len, cap;
	bool failed;
};

/*
 * Makes room for n more bytes at once: text written within them is never moved, so no copy
 * of it is left in memory given back (a reply that holds a secret, wiped at the end).
 */
void jtext_reserve(struct jtext *t, size_t n);
/* Appends n bytes of s as they are. */
void jtext_raw(struct jtext *t, const char *s, size_t n);

/* Appends a C string as they are. */
void jtext_lit(struct jtext *t, const char *s);

/* Appends s as a JSON string, escaped as json_text escapes it. */
void jtext_string(struct jtext *t, const char *s);

/*
 * Appends {"status_code":10,"success":true and, when message is not NULL, ,"message":
 * message: the start of every success reply, left open.
 */
void jtext_success(struct jtext *t, const char *message);

/*
 * Appends PostgreSQL's text of a JSON object (len bytes of text), without the whitespace
 * between its tokens. With members, only its members, after a comma, and nothing for an
 * empty object: they join those of the reply around them. Marks t failed when the text is
 * not an object (or holds a NUL).
 */
void jtext_pg(struct jtext *t, const char *text, size_t len, bool members);

/*
 * The value of member key of the object in t's text from offset from (its members at depth
 * 1: an object's text; 0: jtext_pg's members), when it is a string without escapes: a
 * pointer into t's text and its length in *n; NULL when there is none.
 */
const char *jtext_member(const struct jtext *t, size_t from, int depth, const char *key,
    size_t *n);

/* Frees the text; t is empty again. */
void jtext_free(struct jtext *t);

#endif
