/*
 * marketpayctl's webhook commands against the real stack (tests/integration.sh): merchant
 * webhook, webhook list and show (formats, checks, the sealed secret), and the webhook URLs
 * merchant webhook and merchant create --webhook-url refuse up front (internal hosts, upper
 * case schemes, plain http in production).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "fixture.h"
#include "outbox.h"
#include "receiver.h"

static char receiver[256];

/* marketpayctl merchant webhook, webhook list and show: formats, checks, the sealed secret. */
START_TEST(test_ctl)
{
	char m[32], sec[128], ev[64], before[64];
	const char *p[2];

	snprintf(m, sizeof(m), "%s", ctl("merchant create --name 'Ctl shop'"));
	ck_assert_ptr_null(ctl("merchant webhook %s --url ftp://x.example/ 2>/dev/null", m));
	ck_assert_ptr_null(ctl("merchant webhook %s 2>/dev/null", m));
	ck_assert_ptr_null(ctl("merchant webhook 999999999 --url https://x.example/ 2>/dev/null"));
	ck_assert_ptr_null(ctl("merchant webhook x --url https://x.example/ 2>/dev/null"));
	/* --keep-secret needs a secret to keep. */
	ck_assert_int_ne(sh(CTL "merchant webhook %s --url"
	    " https://x.example/ --keep-secret 2>/dev/null", m), 0);
	snprintf(sec, sizeof(sec), "%s", ctl("merchant webhook %s --url https://x.example/h", m));
	ck_assert_int_eq(strlen(sec), 6 + 32);
	ck_assert_int_eq(strncmp(sec, "whsec_", 6), 0);
	ck_assert_int_eq(strspn(sec + 6, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789+/"), 32);
	/* Stored sealed only: 38 characters + nonce and tag, the secret nowhere in it. */
	p[0] = m;
	p[1] = sec;
	ck_assert_str_eq(db_valuev("SELECT length(webhook_secret_sealed) || ' ' ||"
	    " position(convert_to(substr($2, 7), 'UTF8') IN webhook_secret_sealed) FROM merchants"
	    " WHERE id = $1", 2, p), "66 0");
	snprintf(before, sizeof(before), "%s", db_value("SELECT md5(webhook_secret_sealed) FROM"
	    " merchants WHERE id = $1", m));
	ck_assert_int_eq(sh(CTL "merchant webhook %s --url"
	    " %s --keep-secret", m, receiver), 0);
	ck_assert_str_eq(db_value("SELECT md5(webhook_secret_sealed) FROM merchants WHERE id = $1",
	    m), before);
	snprintf(ev, sizeof(ev), "%s", insert_event(m, "{\"kept\":1}"));
	wait_status(ev, "delivered");
	ck_assert_int_eq(sh(CTL "webhook list | awk -F'\\t'"
	    " '$1 == \"%s\" && $2 == \"%s\" && $4 == \"delivered\" && $5 == \"1\" && NF == 6"
	    " { n++ } END { exit n != 1 }'", ev, m), 0);
	ck_assert_int_ne(sh(CTL "webhook list --status"
	    " sent 2>/dev/null"), 0);
	ck_assert_int_eq(sh(CTL "webhook show %s | awk"
	    " -F'\\t' '$1 == \"status\" && $2 == \"delivered\" { s++ } $1 == \"attempt\" &&"
	    " $2 == \"1\" && $4 == \"204\" && $6 == \"%s\" { a++ }"
	    " $0 == \"body\\t{\\\"kept\\\":1}\" { b++ }"
	    " END { exit !(s == 1 && a == 1 && b == 1) }'", ev, receiver), 0);
	ck_assert_ptr_null(ctl("webhook show evt_00000000000000000000000000000000 2>/dev/null"));
	ck_assert_ptr_null(ctl("webhook show %s extra 2>/dev/null", ev));
}
END_TEST

struct ctl_case {
	const char *conf;   /* "guarded" (webhook_allow_private = 0), "stack", "live" */
	const char *url;
	const char *says;   /* a piece of the message; NULL: accepted */
};

/* Hosts that are internal however they are written, and URLs the database would refuse. */
static const struct ctl_case ctl_cases[] = {
	{ "guarded", "http://127.0.0.1:5432/", "names 127.0.0.1, a loopback address" },
	{ "guarded", "http://localhost:8080/", "names localhost, a loopback name" },
	{ "guarded", "http://shop.localhost/hook", "a loopback name" },
	{ "guarded", "http://169.254.169.254/latest/meta-data/", "a link-local address" },
	{ "guarded", "http://[::1]/", "names ::1, a loopback address" },
	{ "guarded", "http://[::ffff:127.0.0.1]/", "a loopback address" },
	{ "guarded", "http://0.0.0.0/", "an unspecified address" },
	{ "guarded", "http://2130706433/", "names 2130706433, a loopback address" },
	{ "guarded", "http://0x7f.1/", "names 0x7f.1, a loopback address" },
	{ "guarded", "http://0177.0.0.1/", "a loopback address" },
	{ "guarded", "http://127.1/", "a loopback address" },
	{ "guarded", "http://10.1.2.3/", "a private address" },
	{ "guarded", "http://192.168.0.1/", "a private address" },
	{ "guarded", "http://100.64.0.1/", "carrier-grade NAT" },
	{ "guarded", "http://[fd00::1]/", "a unique local (private) address" },
	{ "guarded", "HTTP://example.com/", "must begin with http:// or https:// in lower case" },
	{ "stack", "HTTP://example.com/", "must begin with http:// or https:// in lower case" },
	{ "stack", "Https://example.com/", "in lower case" },
	{ "live", "http://example.com/hook", "must be an https:// URL in production" },
	{ "live", "http://127.0.0.1/hook", "must be an https:// URL in production" },
	{ "guarded", "https://example.com/hook", NULL },
	{ "live", "https://example.com/hook", NULL },
};

/* The merchant's URL and sealed secret, hashed: what a refused command must not change. */
static const char *
webhook_row(const char *m)
{
	static char v[64];

	snprintf(v, sizeof(v), "%s", db_value("SELECT md5(coalesce(webhook_url, '-') ||"
	    " coalesce(encode(webhook_secret_sealed, 'hex'), '-')) FROM merchants WHERE id = $1",
	    m));
	return v;
}

/*
 * marketpayctl merchant webhook and merchant create --webhook-url refuse those up front:
 * exit status non-zero, a message naming the rule, the merchant's row and the number of
 * merchants as they were. The switch off, or in production, a public https URL goes in.
 */
START_TEST(test_ctl_refuses_internal)
{
	const struct ctl_case *c = &ctl_cases[_i];
	char conf[1024], err[1024], m[32], before[64], count[32];
	const char *nmerchants = "SELECT count(*) FROM merchants";

	if (strcmp(c->conf, "guarded") == 0)
		snprintf(conf, sizeof(conf), "%s", config_plus("ctl-guarded.conf",
		    "webhook_allow_private = 0"));
	else if (strcmp(c->conf, "live") == 0)
		snprintf(conf, sizeof(conf), "%s", config_plus("ctl-live.conf",
		    "environment = production"));
	else
		snprintf(conf, sizeof(conf), "%s", env("MARKETPAY_CONFIG"));
	ck_assert_ptr_nonnull(db_value("UPDATE mp_settings SET environment = 'sandbox'"
	    " RETURNING 1", NULL));
	snprintf(err, sizeof(err), "%s", stack_file("ctl-refused.err"));
	snprintf(m, sizeof(m), "%s", ctl("merchant create --name 'Guarded shop'"));
	ck_assert_ptr_nonnull(ctl("merchant webhook %s --url https://shop.example/hook", m));
	snprintf(before, sizeof(before), "%s", webhook_row(m));
	snprintf(count, sizeof(count), "%s", db_value(nmerchants, NULL));
	/* marketpayctl refuses a database of the other environment: this one says it is one. */
	if (strcmp(c->conf, "live") == 0)
		ck_assert_ptr_nonnull(db_value("UPDATE mp_settings SET environment = 'production'"
		    " RETURNING 1", NULL));
	if (c->says == NULL) {
		ck_assert_int_eq(sh("\"$MARKETPAYCTL\" -c '%s' merchant webhook %s --url '%s'"
		    " --keep-secret", conf, m, c->url), 0);
		ck_assert_str_eq(db_value("SELECT webhook_url FROM merchants WHERE id = $1", m),
		    c->url);
		/* Production has no default currency: named here, refused without it. */
		ck_assert_int_eq(sh("\"$MARKETPAYCTL\" -c '%s' merchant create --name Hooked"
		    " --currency AFN --webhook-url '%s' >/dev/null", conf, c->url), 0);
		snprintf(count, sizeof(count), "%s", db_value(nmerchants, NULL));
		ck_assert_int_eq(sh("\"$MARKETPAYCTL\" -c '%s' merchant create --name Hooked"
		    " --webhook-url '%s' >/dev/null 2>'%s'", conf, c->url, err) == 0,
		    strcmp(c->conf, "live") != 0);
		ck_assert(strcmp(c->conf, "live") != 0 ||
		    file_has(err, "production has no default currency", 0));
		if (strcmp(c->conf, "live") == 0)
			ck_assert_str_eq(db_value(nmerchants, NULL), count);
		ck_assert_ptr_nonnull(db_value("UPDATE mp_settings SET environment = 'sandbox'"
		    " RETURNING 1", NULL));
		return;
	}
	ck_assert_int_ne(sh("\"$MARKETPAYCTL\" -c '%s' merchant webhook %s --url '%s'"
	    " >/dev/null 2>'%s'", conf, m, c->url, err), 0);
	ck_assert_msg(file_has(err, "marketpayctl: --url ", 0) && file_has(err, c->says, 0),
	    "%s: it did not say \"%s\"", c->url, c->says);
	ck_assert_int_ne(sh("\"$MARKETPAYCTL\" -c '%s' merchant webhook %s --url '%s'"
	    " --keep-secret 2>/dev/null", conf, m, c->url), 0);
	ck_assert_str_eq(webhook_row(m), before);
	ck_assert_int_ne(sh("\"$MARKETPAYCTL\" -c '%s' merchant create --name Hostile"
	    " --currency AFN --webhook-url '%s' >/dev/null 2>'%s'", conf, c->url, err), 0);
	ck_assert_msg(file_has(err, "marketpayctl: --webhook-url ", 0) && file_has(err, c->says,
	    0), "%s: it did not say \"%s\" for --webhook-url", c->url, c->says);
	ck_assert_str_eq(db_value(nmerchants, NULL), count);
	ck_assert_ptr_nonnull(db_value("UPDATE mp_settings SET environment = 'sandbox'"
	    " RETURNING 1", NULL));
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("webhook-ctl", "marketpayctl", 90, &t);

	env("MARKETPAYCTL");
	snprintf(receiver, sizeof(receiver), "%s", env("MARKETPAY_WEBHOOK_RECEIVER"));
	tcase_add_test(t, test_ctl);
	tcase_add_loop_test(t, test_ctl_refuses_internal, 0, NELEM(ctl_cases));
	return run_suite(s);
}
