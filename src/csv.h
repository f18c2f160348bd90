#ifndef MP_CSV_H
#define MP_CSV_H

#include <stdbool.h>
#include <stddef.h>

/* CSV (RFC 4180) as the API's balance transactions and marketpayctl's reports write it. */

/* Where the bytes go: returns 0, or -1 to stop. */
typedef int csv_out(void *arg, const char *s, size_t n);

/*
 * Writes the field v[n] through out, quoted (and its quotes doubled) when it holds a comma,
 * a quote or a line break, then "," or, for the last field of a row, CRLF. 0, or -1 when
 * out failed.
 */
int csv_field(csv_out *out, void *arg, const char *v, size_t n, bool last);

#endif
