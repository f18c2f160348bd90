#ifndef MP_MONEY_H
#define MP_MONEY_H

#include <stddef.h>
#include <stdint.h>

/* Amounts are int64 minor units (two decimals) from the moment they are parsed. */

#define MONEY_BUFLEN 32           /* enough for any int64 formatted by money_format */
#define MONEY_MAX_DEFAULT 99999999999LL /* 999999999.99 */

enum money_rc {
	MONEY_OK = 0,
	MONEY_SYNTAX,    /* not plain decimal notation: exponent, sign '+', "1.", ".5", letters */
	MONEY_DECIMALS,  /* more than two digits after the point */
	MONEY_NEGATIVE,  /* below zero */
	MONEY_ZERO,      /* exactly zero */
	MONEY_RANGE,     /* above the maximum (or beyond int64) */
	MONEY__MAX
};

/*
 * Parses len bytes of plain decimal text ("12", "12.5", "12.50") into minor units.
 * Accepts only digits with an optional '-' and at most two decimals; the value must be
 * > 0 and <= max. Returns MONEY_OK and sets *out, or the rule broken (*out untouched).
 */
enum money_rc money_parse(const char *text, size_t len, int64_t max, int64_t *out);

/* The rule broken, as words that follow a field name ("must be greater than 0"). */
const char *money_rule(enum money_rc rc);

/* Writes minor units as "12.50" (or "-0.05") into out[MONEY_BUFLEN]; returns out. */
char *money_format(int64_t minor, char out[MONEY_BUFLEN]);

#endif
