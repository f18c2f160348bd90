/* A merchant's webhook URL as marketpayctl takes it: its form, its scheme, its host. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "netguard.h"
#include "valid.h"
#include "webhook_url.h"

#define HOST_MAX 253   /* the longest DNS name */

static bool __attribute__((format(printf, 3, 4)))
refuse(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return false;
}

/* True when the n bytes at s are a port number, 1 to 65535. */
static bool
port_ok(const char *s, size_t n)
{
	long v = 0;
	size_t i;

	if (n == 0 || n > 5)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	return v >= 1 && v <= 65535;
}

/*
 * The host of the n-byte authority a (valid_http_url has refused userinfo) into host,
 * without the brackets of an IPv6 address; checks the port. True, or false with msg.
 */
static bool
split_authority(const char *a, size_t n, char host[HOST_MAX + 1], char *msg, size_t msglen)
{
	const char *h = a, *end = a + n, *colon;
	struct in6_addr a6;
	size_t hn;

	if (a[0] == '[') {
		h = a + 1;
		if ((colon = memchr(h, ']', n - 1)) == NULL)
			return refuse(msg, msglen, "has a [ without ] in its host");
		hn = (size_t)(colon - h);
		colon++;
		if (colon < end && *colon != ':')
			return refuse(msg, msglen, "has something other than a port after ]");
	} else {
		colon = memchr(a, ':', n);
		hn = (size_t)((colon ? colon : end) - a);
	}
	if (hn == 0 || hn > HOST_MAX)
		return refuse(msg, msglen, "must have a host of 1 to %d characters", HOST_MAX);
	memcpy(host, h, hn);
	host[hn] = '\0';
	if (colon != NULL && colon < end && !port_ok(colon + 1, (size_t)(end - colon - 1)))
		return refuse(msg, msglen, "must have a port from 1 to 65535 after the colon");
	if (h != a && inet_pton(AF_INET6, host, &a6) != 1)
		return refuse(msg, msglen, "has [%s] as its host, which is not an IPv6 address "
		    "(nor may it carry a %%zone)", host);
	if (h == a && strpbrk(host, "[]%") != NULL)
		return refuse(msg, msglen, "must name its host plainly: no brackets around a name, "
		    "no %%-encoding");
	return true;
}

bool
webhook_url_check(const char *url, const struct config *cfg, char *msg, size_t msglen)
{
	char host[HOST_MAX + 1];
	const char *auth, *why;

	if (!valid_http_url(url))
		return refuse(msg, msglen, "must be an absolute http or https URL");
	/* The database's CHECK is case-sensitive: HTTPS:// would fail there, secret and all. */
	if (strncmp(url, "https://", 8) == 0)
		auth = url + 8;
	else if (strncmp(url, "http://", 7) == 0)
		auth = url + 7;
	else
		return refuse(msg, msglen, "must begin with http:// or https:// in lower case");
	if (cfg->environment == CONFIG_PRODUCTION && auth == url + 7)
		return refuse(msg, msglen, "must be an https:// URL in production");
	if (!split_authority(auth, strcspn(auth, "/?#"), host, msg, msglen))
		return false;
	if (!cfg->webhook_allow_private && (why = netguard_why_host(host)) != NULL)
		return refuse(msg, msglen, "names %s, %s: webhooks go only to public addresses "
		    "(webhook_allow_private is off)", host, why);
	return true;
}
