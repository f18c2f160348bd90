/* CSV fields (RFC 4180). */
#include <string.h>

#include "csv.h"

int
csv_field(csv_out *out, void *arg, const char *v, size_t n, bool last)
{
	const char *q;
	size_t i;

	for (i = 0; i < n && strchr(",\"\r\n", v[i]) == NULL; i++)
		;
	if (i == n)
		return out(arg, v, n) == 0 && out(arg, last ? "\r\n" : ",", last ? 2 : 1) == 0 ?
		    0 : -1;
	if (out(arg, "\"", 1) != 0)
		return -1;
	while ((q = memchr(v, '"', n)) != NULL) {
		if (out(arg, v, (size_t)(q - v) + 1) != 0 || out(arg, "\"", 1) != 0)
			return -1;
		n -= (size_t)(q - v) + 1;
		v = q + 1;
	}
	return out(arg, v, n) == 0 && out(arg, last ? "\"\r\n" : "\",", last ? 3 : 2) == 0 ?
	    0 : -1;
}
