/*
 * Unit tests of the webhook target guard: which addresses netguard refuses (every
 * special-purpose range, a few public addresses beside them), and the URL check
 * marketpayctl makes before it stores a merchant's webhook URL.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "config.h"
#include "netguard.h"
#include "webhook_url.h"
#include "runner.h"

struct why_case {
	const char *s;      /* an address or a host as text */
	const char *why;    /* what netguard must say; NULL: allowed */
};

/* got, netguard's answer for what, is c's. */
static void
check_why(const char *what, const char *got, const struct why_case *c)
{
	ck_assert_msg(c->why ? got != NULL && strcmp(got, c->why) == 0 : got == NULL,
	    "%s \"%s\": \"%s\", want \"%s\"", what, c->s, got ? got : "(allowed)",
	    c->why ? c->why : "(allowed)");
}

static const struct why_case addrs[] = {
	/* IPv4: each range at its first, a middle and its last address. */
	{ "0.0.0.0", "an unspecified address" },
	{ "0.255.255.255", "an unspecified address" },
	{ "10.0.0.0", "a private address" },
	{ "10.200.3.4", "a private address" },
	{ "10.255.255.255", "a private address" },
	{ "100.64.0.0", "a shared (carrier-grade NAT) address" },
	{ "100.127.255.255", "a shared (carrier-grade NAT) address" },
	{ "127.0.0.1", "a loopback address" },
	{ "127.255.255.254", "a loopback address" },
	{ "169.254.0.1", "a link-local address" },
	{ "169.254.169.254", "a link-local address" },
	{ "172.16.0.0", "a private address" },
	{ "172.31.255.255", "a private address" },
	{ "192.0.0.0", "an IETF protocol assignment address" },
	{ "192.0.0.255", "an IETF protocol assignment address" },
	{ "192.0.2.1", "a documentation address" },
	{ "192.88.99.1", "a deprecated 6to4 relay address" },
	{ "192.168.0.0", "a private address" },
	{ "192.168.255.255", "a private address" },
	{ "198.18.0.0", "a benchmarking address" },
	{ "198.19.255.255", "a benchmarking address" },
	{ "198.51.100.7", "a documentation address" },
	{ "203.0.113.9", "a documentation address" },
	{ "224.0.0.1", "a multicast address" },
	{ "239.255.255.255", "a multicast address" },
	{ "240.0.0.1", "a reserved address" },
	{ "254.1.2.3", "a reserved address" },
	{ "255.255.255.255", "the broadcast address" },
	/* IPv4: public, also right beside the ranges. */
	{ "8.8.8.8", NULL },
	{ "1.1.1.1", NULL },
	{ "1.0.0.0", NULL },
	{ "9.255.255.255", NULL },
	{ "11.0.0.0", NULL },
	{ "100.63.255.255", NULL },
	{ "100.128.0.0", NULL },
	{ "126.255.255.255", NULL },
	{ "128.0.0.0", NULL },
	{ "169.253.255.255", NULL },
	{ "169.255.0.0", NULL },
	{ "172.15.255.255", NULL },
	{ "172.32.0.0", NULL },
	{ "192.0.1.0", NULL },
	{ "192.0.3.0", NULL },
	{ "192.167.255.255", NULL },
	{ "192.169.0.0", NULL },
	{ "198.17.255.255", NULL },
	{ "198.20.0.0", NULL },
	{ "223.255.255.255", NULL },
	/* IPv6 */
	{ "::", "an unspecified address" },
	{ "::1", "a loopback address" },
	{ "::2", "a reserved address" },
	{ "::127.0.0.1", "a reserved address" },             /* IPv4-compatible, deprecated */
	{ "::ffff:127.0.0.1", "a loopback address" },         /* IPv4-mapped: its IPv4 */
	{ "::ffff:7f00:1", "a loopback address" },
	{ "::ffff:10.1.2.3", "a private address" },
	{ "::ffff:169.254.169.254", "a link-local address" },
	{ "::ffff:0.0.0.0", "an unspecified address" },
	{ "::ffff:8.8.8.8", NULL },
	{ "64:ff9b::127.0.0.1", "a loopback address" },       /* NAT64: its IPv4 */
	{ "64:ff9b::192.168.1.1", "a private address" },
	{ "64:ff9b::8.8.8.8", NULL },
	{ "64:ff9b:1::1", "a reserved address" },             /* local-use NAT64 */
	{ "100::", "a discard address" },
	{ "100::ffff:ffff:ffff:ffff", "a discard address" },
	{ "fc00::1", "a unique local (private) address" },
	{ "fd12:3456:789a::1", "a unique local (private) address" },
	{ "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "a unique local (private) address" },
	{ "fe80::1", "a link-local address" },
	{ "febf:ffff::1", "a link-local address" },
	{ "fec0::1", "a site-local address" },
	{ "ff02::1", "a multicast address" },
	{ "ff0e::101", "a multicast address" },
	{ "2001::1", "an IETF protocol assignment address" },  /* Teredo */
	{ "2001:2::1", "an IETF protocol assignment address" }, /* benchmarking */
	{ "2001:1::1", "an IETF protocol assignment address" },
	{ "2001:10::1", "an IETF protocol assignment address" }, /* ORCHID, deprecated */
	{ "2001:1ff:ffff::1", "an IETF protocol assignment address" },
	{ "2001:3::1", NULL },                                 /* AMT */
	{ "2001:4:112::1", NULL },                             /* AS112-v6 */
	{ "2001:20::1", NULL },                                /* ORCHIDv2 */
	{ "2001:2f:ffff::1", NULL },
	{ "2001:30::1", NULL },                                /* drone remote ID */
	{ "2001:200::1", NULL },                               /* just past 2001::/23 */
	{ "2001:db8::1", "a documentation address" },
	{ "2001:db8:ffff::1", "a documentation address" },
	{ "3fff::1", "a documentation address" },
	{ "3fff:fff::1", "a documentation address" },
	{ "3fff:1000::1", NULL },
	{ "2002:7f00:1::1", "a loopback address" },           /* 6to4 of 127.0.0.1 */
	{ "2002:c0a8:101::1", "a private address" },
	{ "2002:808:808::1", NULL },                           /* 6to4 of 8.8.8.8 */
	{ "2606:4700::1111", NULL },
	{ "2001:4860:4860::8888", NULL },
	{ "2a00:1450:4001::1", NULL },
	{ "4000::1", "a reserved address" },                   /* outside 2000::/3 */
	{ "1::1", "a reserved address" },
	{ "fe00::1", "a reserved address" },
};

START_TEST(test_address)
{
	const struct why_case *c = &addrs[_i];
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	const char *why;
	char msg[256], want[256];
	int refused;

	memset(&s4, 0, sizeof(s4));
	memset(&s6, 0, sizeof(s6));
	if (inet_pton(AF_INET, c->s, &s4.sin_addr) == 1) {
		s4.sin_family = AF_INET;
		why = netguard_why_v4(&s4.sin_addr);
		refused = netguard_refuse((struct sockaddr *)&s4, sizeof(s4), msg, sizeof(msg));
	} else {
		ck_assert_int_eq(inet_pton(AF_INET6, c->s, &s6.sin6_addr), 1);
		s6.sin6_family = AF_INET6;
		why = netguard_why_v6(&s6.sin6_addr);
		refused = netguard_refuse((struct sockaddr *)&s6, sizeof(s6), msg, sizeof(msg));
	}
	check_why("address", why, c);
	ck_assert_int_eq(refused, c->why != NULL);
	/* The same judgement from the host as a URL writes it. */
	check_why("host", netguard_why_host(c->s), c);
	if (c->why != NULL && strchr(c->s, ':') == NULL) {
		snprintf(want, sizeof(want), "%s is %s", c->s, c->why);
		ck_assert_str_eq(msg, want);
	}
}
END_TEST

/* Address families the guard does not know are refused, not waved through. */
START_TEST(test_unknown_family)
{
	struct sockaddr sa;
	char msg[128];

	memset(&sa, 0, sizeof(sa));
	sa.sa_family = AF_UNIX;
	ck_assert_int_eq(netguard_refuse(&sa, sizeof(sa), msg, sizeof(msg)), 1);
	ck_assert_ptr_nonnull(strstr(msg, "neither IPv4 nor IPv6"));
}
END_TEST

/* Hosts as written in URLs: inet_aton's forms of IPv4, localhost names, plain names. */
static const struct why_case hosts[] = {
	{ "2130706433", "a loopback address" },
	{ "0x7f.1", "a loopback address" },
	{ "0x7f000001", "a loopback address" },
	{ "0177.0.0.1", "a loopback address" },
	{ "017700000001", "a loopback address" },
	{ "127.1", "a loopback address" },
	{ "127.0.1", "a loopback address" },
	{ "127.0.0.1.", "a loopback address" },
	{ "0", "an unspecified address" },
	{ "0x0", "an unspecified address" },
	{ "0xa9.0xfe.0xa9.0xfe", "a link-local address" },
	{ "2852039166", "a link-local address" },           /* 169.254.169.254 */
	{ "10.1", "a private address" },
	{ "localhost", "a loopback name" },
	{ "LocalHost", "a loopback name" },
	{ "localhost.", "a loopback name" },
	{ "shop.localhost", "a loopback name" },
	{ "a.b.LOCALHOST.", "a loopback name" },
	{ "134744072", NULL },                              /* 8.8.8.8 */
	{ "shop.example", NULL },
	{ "localhost.example", NULL },
	{ "notlocalhost", NULL },
	{ "xlocalhost", NULL },
	{ "", NULL },
};

START_TEST(test_host)
{
	check_why("host", netguard_why_host(hosts[_i].s), &hosts[_i]);
}
END_TEST

enum { SANDBOX, PRODUCTION, ALLOW_PRIVATE };

struct url_case {
	const char *url;
	int setting;        /* the configuration it is checked under */
	const char *says;   /* a piece of the refusal; NULL: accepted */
};

static const struct url_case urls[] = {
	{ "https://example.com/hook", SANDBOX, NULL },
	{ "http://example.com/hook", SANDBOX, NULL },
	{ "https://example.com/hook", PRODUCTION, NULL },
	{ "https://example.com:8443/h?x=1#f", PRODUCTION, NULL },
	{ "https://8.8.8.8/h", PRODUCTION, NULL },
	{ "https://[2606:4700::1111]:443/h", PRODUCTION, NULL },
	{ "http://127.0.0.1:5432/", ALLOW_PRIVATE, NULL },
	{ "http://localhost:8080/", ALLOW_PRIVATE, NULL },
	{ "http://[::1]/h", ALLOW_PRIVATE, NULL },
	/* Internal hosts, in every spelling. */
	{ "http://127.0.0.1:5432/", SANDBOX, "names 127.0.0.1, a loopback address: webhooks go"
	    " only to public addresses (webhook_allow_private is off)" },
	{ "http://localhost:8080/", SANDBOX, "names localhost, a loopback name" },
	{ "http://LOCALHOST./", SANDBOX, "a loopback name" },
	{ "https://shop.localhost/h", PRODUCTION, "a loopback name" },
	{ "http://169.254.169.254/latest/meta-data/", SANDBOX, "a link-local address" },
	{ "http://[::1]/", SANDBOX, "names ::1, a loopback address" },
	{ "http://[::1]:8080/", SANDBOX, "a loopback address" },
	{ "http://[::ffff:127.0.0.1]/", SANDBOX, "a loopback address" },
	{ "http://[::]/", SANDBOX, "an unspecified address" },
	{ "http://0.0.0.0/", SANDBOX, "an unspecified address" },
	{ "http://0/", SANDBOX, "an unspecified address" },
	{ "http://2130706433/", SANDBOX, "names 2130706433, a loopback address" },
	{ "http://0x7f.1/", SANDBOX, "names 0x7f.1, a loopback address" },
	{ "http://0177.0.0.1/", SANDBOX, "a loopback address" },
	{ "http://127.1/", SANDBOX, "a loopback address" },
	{ "http://127.0.0.1./", SANDBOX, "a loopback address" },
	{ "http://10.0.0.5/", SANDBOX, "a private address" },
	{ "http://172.16.0.1/", SANDBOX, "a private address" },
	{ "http://192.168.1.1/", SANDBOX, "a private address" },
	{ "http://100.64.0.1/", SANDBOX, "a shared (carrier-grade NAT) address" },
	{ "http://[fd00::1]/", SANDBOX, "a unique local (private) address" },
	{ "http://[fe80::1]/", SANDBOX, "a link-local address" },
	{ "http://224.0.0.1/", SANDBOX, "a multicast address" },
	{ "http://255.255.255.255/", SANDBOX, "the broadcast address" },
	{ "https://127.0.0.1/", PRODUCTION, "a loopback address" },
	/* Forms the database's CHECK (^https?://) or the URL rules refuse. */
	{ "HTTP://example.com/", SANDBOX, "must begin with http:// or https:// in lower case" },
	{ "Https://example.com/", ALLOW_PRIVATE, "in lower case" },
	{ "ftp://example.com/", SANDBOX, "must be an absolute http or https URL" },
	{ "https://user@example.com/", SANDBOX, "must be an absolute http or https URL" },
	{ "http://example.com/hook", PRODUCTION, "must be an https:// URL in production" },
	{ "http://[::1/", ALLOW_PRIVATE, "has a [ without ]" },
	{ "http://[::1]x/", ALLOW_PRIVATE, "something other than a port after ]" },
	{ "http://[example.com]/", ALLOW_PRIVATE, "not an IPv6 address" },
	{ "http://[fe80::1%25eth0]/", ALLOW_PRIVATE, "not an IPv6 address" },
	{ "http://%31%32%37.0.0.1/", SANDBOX, "no %-encoding" },
	{ "http://example.com:/", SANDBOX, "a port from 1 to 65535" },
	{ "http://example.com:0/", SANDBOX, "a port from 1 to 65535" },
	{ "http://example.com:65536/", SANDBOX, "a port from 1 to 65535" },
	{ "http://example.com:80:80/", SANDBOX, "a port from 1 to 65535" },
	{ "http://example.com:8o/", SANDBOX, "a port from 1 to 65535" },
	{ "http://example.com:65535/", SANDBOX, NULL },
};

START_TEST(test_url)
{
	const struct url_case *c = &urls[_i];
	struct config cfg;
	char msg[512] = "";
	bool ok;

	memset(&cfg, 0, sizeof(cfg));
	cfg.environment = c->setting == PRODUCTION ? CONFIG_PRODUCTION : CONFIG_SANDBOX;
	cfg.webhook_allow_private = c->setting == ALLOW_PRIVATE;
	ok = webhook_url_check(c->url, &cfg, msg, sizeof(msg));
	if (c->says == NULL)
		ck_assert_msg(ok, "%s refused: %s", c->url, msg);
	else
		ck_assert_msg(!ok && strstr(msg, c->says) != NULL, "%s: %s \"%s\", want \"%s\"",
		    c->url, ok ? "accepted" : "refused with", msg, c->says);
}
END_TEST

/* A host longer than any DNS name is refused, one of 253 characters is not. */
START_TEST(test_url_long_host)
{
	struct config cfg;
	char url[512], msg[512];

	memset(&cfg, 0, sizeof(cfg));
	memset(url, 'a', sizeof(url));
	memcpy(url, "https://", 8);
	strcpy(url + 8 + 253, "/");
	ck_assert_msg(webhook_url_check(url, &cfg, msg, sizeof(msg)), "%s", msg);
	url[8 + 253] = 'a';
	strcpy(url + 8 + 254, "/");
	ck_assert(!webhook_url_check(url, &cfg, msg, sizeof(msg)));
	ck_assert_ptr_nonnull(strstr(msg, "1 to 253 characters"));
}
END_TEST

static Suite *
netguard_suite(void)
{
	Suite *s = suite_create("netguard");
	TCase *a = tcase_create("addresses");
	TCase *u = tcase_create("urls");

	tcase_add_loop_test(a, test_address, 0, NELEM(addrs));
	tcase_add_test(a, test_unknown_family);
	tcase_add_loop_test(a, test_host, 0, NELEM(hosts));
	suite_add_tcase(s, a);
	tcase_add_loop_test(u, test_url, 0, NELEM(urls));
	tcase_add_test(u, test_url_long_host);
	suite_add_tcase(s, u);
	return s;
}

int
main(void)
{
	return run_suite(netguard_suite());
}
