#include <string.h>

#include "form.h"

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
