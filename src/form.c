#include <stdbool.h>
#include <string.h>

#include "form.h"
#include "i18n.h"
#include "pin.h"
#include "valid.h"

#define DIGITS "0123456789"

/* Two capital letters and ten digits, as the accounts table's CHECK has it. */
static bool
account_ok(const char *s)
{
	return strlen(s) == 12 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == 2 &&
	    strspn(s + 2, DIGITS) == 10;
}

/* 12 to 19 digits, spaces allowed between them (as the number is printed on the card). */
static bool
card_number_ok(const char *s)
{
	size_t i, n = 0;

	for (i = 0; s[i] != '\0'; i++)
		if (s[i] >= '0' && s[i] <= '9')
			n++;
		else if (s[i] != ' ')
			return false;
	return n >= 12 && n <= 19;
}

/* MM/YY with a month of 01 to 12 (whether it has passed is the payment's business). */
static bool
card_expiry_ok(const char *s)
{
	return strlen(s) == 5 && strspn(s, DIGITS) == 2 && s[2] == '/' &&
	    strspn(s + 3, DIGITS) == 2 && ((s[0] == '0' && s[1] != '0') ||
	    (s[0] == '1' && s[1] <= '2'));
}

static bool
card_cvc_ok(const char *s)
{
	return (strlen(s) == 3 || strlen(s) == 4) && strspn(s, DIGITS) == strlen(s);
}

/* The fields with a shape: the rule, and what the customer is told when a value breaks it. */
static const struct {
	const char *name;
	bool (*ok)(const char *s);
	const char *problem;
} shapes[] = {
	{ "account_number", account_ok,
	  N_("The account number is two capital letters and ten digits.") },
	{ "pin", pin_format_ok, N_("The PIN is 4 to 12 digits.") },
	{ "card_number", card_number_ok, N_("The card number is not valid.") },
	{ "card_expiry", card_expiry_ok, N_("The expiry date must be MM/YY, this month or later.") },
	{ "card_cvc", card_cvc_ok, N_("The security code is 3 or 4 digits.") },
};

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long
form_get(const char *body, size_t len, const char *name, char *out, size_t outlen)
{
	size_t nlen = strlen(name), i = 0, o;

	while (i < len) {
		size_t end = i;

		while (end < len && body[end] != '&')
			end++;
		if (end - i > nlen && strncmp(body + i, name, nlen) == 0 && body[i + nlen] == '=') {
			for (i += nlen + 1, o = 0; i < end; i++) {
				int hi, lo;
				char c = body[i];

				if (c == '+')
					c = ' ';
				else if (c == '%') {
					if (i + 2 >= end || (hi = hexval(body[i + 1])) < 0 ||
					    (lo = hexval(body[i + 2])) < 0)
						return -1;
					c = (char)(hi * 16 + lo);
					i += 2;
				}
				if (c == '\0' || o + 1 >= outlen)
					return -1;
				out[o++] = c;
			}
			out[o] = '\0';
			return (long)o;
		}
		i = end + 1;
	}
	return -1;
}

const char *
form_check(const char *name, const char *value)
{
	size_t i;

	if (!valid_utf8(value, strlen(value)))
		return N_("The form holds characters that are not text. Please type it in again.");
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (strcmp(name, shapes[i].name) == 0)
			return shapes[i].ok(value) ? NULL : shapes[i].problem;
	return NULL;
}
