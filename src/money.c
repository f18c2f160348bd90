#include <string.h>

#include "money.h"

/* Digits before the point we accept at all: keeps every intermediate well inside int64. */
#define MAX_INT_DIGITS 15

enum money_rc
money_parse(const char *text, size_t len, int64_t max, int64_t *out)
{
	const char *p = text, *end = text + len;
	int64_t whole = 0, frac = 0, value;
	int negative = 0, ndigits = 0, nfrac = 0;

	if (p < end && *p == '-') {
		negative = 1;
		p++;
	}
	if (p == end || *p < '0' || *p > '9')
		return MONEY_SYNTAX;
	/* JSON forbids leading zeros; so do we, so "007" is not silently 7. */
	if (*p == '0' && p + 1 < end && p[1] >= '0' && p[1] <= '9')
		return MONEY_SYNTAX;
	while (p < end && *p >= '0' && *p <= '9') {
		if (++ndigits > MAX_INT_DIGITS)
			return negative ? MONEY_NEGATIVE : MONEY_RANGE;
		whole = whole * 10 + (*p++ - '0');
	}
	if (p < end && *p == '.') {
		p++;
		if (p == end || *p < '0' || *p > '9')
			return MONEY_SYNTAX;
		while (p < end && *p >= '0' && *p <= '9') {
			if (++nfrac <= 2)
				frac = frac * 10 + (*p - '0');
			p++;
		}
	}
	if (p != end)
		return MONEY_SYNTAX;
	if (nfrac > 2)
		return MONEY_DECIMALS;
	if (nfrac == 1)
		frac *= 10;
	value = whole * 100 + frac;
	if (negative && value != 0)
		return MONEY_NEGATIVE;
	if (value == 0)
		return MONEY_ZERO;
	if (value > max)
		return MONEY_RANGE;
	*out = value;
	return MONEY_OK;
}

const char *
money_rule(enum money_rc rc)
{
	static const char *const rule[MONEY__MAX] = {
		"is valid",                                   /* MONEY_OK */
		"must be a plain decimal number such as 12.50", /* MONEY_SYNTAX */
		"must have at most two decimal places",       /* MONEY_DECIMALS */
		"must not be negative",                       /* MONEY_NEGATIVE */
		"must be greater than 0",                     /* MONEY_ZERO */
		"is above the maximum amount",                /* MONEY_RANGE */
	};

	if ((int)rc < 0 || rc >= MONEY__MAX)
		return "is invalid";
	return rule[rc];
}

char *
money_format(int64_t minor, char out[MONEY_BUFLEN])
{
	uint64_t u = minor < 0 ? (uint64_t)0 - (uint64_t)minor : (uint64_t)minor;
	char tmp[MONEY_BUFLEN];
	size_t n = 0, i = 0;

	/* Build the digits backwards: two decimals, the point, then at least one whole digit. */
	do {
		if (n == 2)
			tmp[n++] = '.';
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0 || n < 4);
	if (minor < 0)
		out[i++] = '-';
	while (n > 0)
		out[i++] = tmp[--n];
	out[i] = '\0';
	return out;
}
