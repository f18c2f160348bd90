#ifndef MP_FORM_H
#define MP_FORM_H

#include <stddef.h>

/*
 * Finds field name in an application/x-www-form-urlencoded body of len bytes and decodes
 * its value ('+' and %XX) into out (outlen bytes, NUL-terminated). Returns the decoded
 * length, or -1 when the field is absent, malformed (bad %XX, a decoded NUL) or too long.
 * The first occurrence counts.
 */
long form_get(const char *body, size_t len, const char *name, char *out, size_t outlen);

/*
 * Checks a decoded checkout form value before it goes anywhere: valid UTF-8 for every field,
 * and for account_number, pin, card_number, card_expiry and card_cvc their shape. Returns
 * NULL when value is fine, else what is wrong, in words for the customer (English, the
 * catalogs' key: the page shows it through _()).
 */
const char *form_check(const char *name, const char *value);

#endif
