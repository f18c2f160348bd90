/* Webhook targets: the IP addresses marketpay-webhookd must not connect to. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "netguard.h"

struct range4 {
	uint32_t net;       /* host order */
	int len;
	const char *why;
};

/* The IPv4 special-purpose ranges that are not globally reachable; first match wins. */
static const struct range4 ranges4[] = {
	{ 0x00000000,  8, "an unspecified address" },           /* 0.0.0.0/8, "this network" */
	{ 0x0a000000,  8, "a private address" },                /* 10.0.0.0/8 */
	{ 0x64400000, 10, "a shared (carrier-grade NAT) address" }, /* 100.64.0.0/10 */
	{ 0x7f000000,  8, "a loopback address" },               /* 127.0.0.0/8 */
	{ 0xa9fe0000, 16, "a link-local address" },             /* 169.254.0.0/16, metadata */
	{ 0xac100000, 12, "a private address" },                /* 172.16.0.0/12 */
	{ 0xc0000000, 24, "an IETF protocol assignment address" }, /* 192.0.0.0/24 */
	{ 0xc0000200, 24, "a documentation address" },          /* 192.0.2.0/24 */
	{ 0xc0586300, 24, "a deprecated 6to4 relay address" },  /* 192.88.99.0/24 */
	{ 0xc0a80000, 16, "a private address" },                /* 192.168.0.0/16 */
	{ 0xc6120000, 15, "a benchmarking address" },           /* 198.18.0.0/15 */
	{ 0xc6336400, 24, "a documentation address" },          /* 198.51.100.0/24 */
	{ 0xcb007100, 24, "a documentation address" },          /* 203.0.113.0/24 */
	{ 0xe0000000,  4, "a multicast address" },              /* 224.0.0.0/4 */
	{ 0xffffffff, 32, "the broadcast address" },
	{ 0xf0000000,  4, "a reserved address" },               /* 240.0.0.0/4 */
};

const char *
netguard_why_v4(const struct in_addr *a)
{
	uint32_t h = ntohl(a->s_addr);
	size_t i;

	for (i = 0; i < sizeof(ranges4) / sizeof(ranges4[0]); i++)
		if ((h ^ ranges4[i].net) >> (32 - ranges4[i].len) == 0)
			return ranges4[i].why;
	return NULL;
}

enum judge6 {
	REFUSE,
	ALLOW,
	INNER_LOW,    /* judged by the IPv4 address in its last 4 bytes */
	INNER_6TO4,   /* judged by the IPv4 address in bytes 2 to 5 */
};

struct range6 {
	const char *net;
	int len;
	enum judge6 judge;
	const char *why;
};

/*
 * First match wins. Global unicast is 2000::/3: what is outside it is reserved or local.
 * Of the IETF protocol assignments (2001::/23) the globally reachable blocks are allowed;
 * its anycast service addresses, Teredo, benchmarking and ORCHID (deprecated) are not.
 */
static const struct range6 ranges6[] = {
	{ "::",            128, REFUSE, "an unspecified address" },
	{ "::1",           128, REFUSE, "a loopback address" },
	{ "::ffff:0:0",     96, INNER_LOW, NULL },            /* IPv4-mapped */
	{ "64:ff9b::",      96, INNER_LOW, NULL },            /* NAT64 */
	{ "100::",          64, REFUSE, "a discard address" },
	{ "fc00::",          7, REFUSE, "a unique local (private) address" },
	{ "fe80::",         10, REFUSE, "a link-local address" },
	{ "fec0::",         10, REFUSE, "a site-local address" },
	{ "ff00::",          8, REFUSE, "a multicast address" },
	{ "2001:3::",       32, ALLOW, NULL },                /* AMT */
	{ "2001:4:112::",   48, ALLOW, NULL },                /* AS112-v6 */
	{ "2001:20::",      28, ALLOW, NULL },                /* ORCHIDv2 */
	{ "2001:30::",      28, ALLOW, NULL },                /* drone remote ID */
	{ "2001::",         23, REFUSE, "an IETF protocol assignment address" },
	{ "2001:db8::",     32, REFUSE, "a documentation address" },
	{ "3fff::",         20, REFUSE, "a documentation address" },
	{ "2002::",         16, INNER_6TO4, NULL },           /* 6to4 */
	{ "2000::",          3, ALLOW, NULL },
	{ "::",              0, REFUSE, "a reserved address" },
};

/* True when the first len bits of a and net are the same. */
static int
prefix_is(const struct in6_addr *a, const struct in6_addr *net, int len)
{
	int whole = len / 8, rest = len % 8;

	return memcmp(a->s6_addr, net->s6_addr, (size_t)whole) == 0 && (rest == 0 ||
	    ((a->s6_addr[whole] ^ net->s6_addr[whole]) >> (8 - rest)) == 0);
}

const char *
netguard_why_v6(const struct in6_addr *a)
{
	struct in6_addr net;
	struct in_addr inner;
	size_t i;

	for (i = 0; i < sizeof(ranges6) / sizeof(ranges6[0]); i++) {
		if (inet_pton(AF_INET6, ranges6[i].net, &net) != 1 ||
		    !prefix_is(a, &net, ranges6[i].len))
			continue;
		switch (ranges6[i].judge) {
		case INNER_LOW:
			memcpy(&inner, a->s6_addr + 12, 4);
			return netguard_why_v4(&inner);
		case INNER_6TO4:
			memcpy(&inner, a->s6_addr + 2, 4);
			return netguard_why_v4(&inner);
		case ALLOW:
			return NULL;
		default:
			return ranges6[i].why;
		}
	}
	return "a reserved address";
}

int
netguard_refuse(const struct sockaddr *sa, size_t len, char *msg, size_t msglen)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
	char text[INET6_ADDRSTRLEN] = "?";
	const char *why;

	if (sa->sa_family == AF_INET && len >= sizeof(*in4)) {
		why = netguard_why_v4(&in4->sin_addr);
		inet_ntop(AF_INET, &in4->sin_addr, text, sizeof(text));
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(*in6)) {
		why = netguard_why_v6(&in6->sin6_addr);
		inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
	} else {
		snprintf(msg, msglen, "an address of family %d is neither IPv4 nor IPv6",
		    (int)sa->sa_family);
		return 1;
	}
	if (why == NULL)
		return 0;
	snprintf(msg, msglen, "%s is %s", text, why);
	return 1;
}

const char *
netguard_why_host(const char *host)
{
	char name[256];
	struct in_addr a4;
	struct in6_addr a6;
	size_t n = strlen(host);

	if (n == 0 || n >= sizeof(name))
		return NULL;
	/* A fully qualified "localhost." or "127.0.0.1." is the same host. */
	memcpy(name, host, n + 1);
	if (n > 1 && name[n - 1] == '.')
		name[--n] = '\0';
	if (inet_pton(AF_INET6, name, &a6) == 1)
		return netguard_why_v6(&a6);
	if (inet_aton(name, &a4) == 1)
		return netguard_why_v4(&a4);
	if (strcasecmp(name, "localhost") == 0 ||
	    (n > 10 && strcasecmp(name + n - 10, ".localhost") == 0))
		return "a loopback name";
	return NULL;
}
