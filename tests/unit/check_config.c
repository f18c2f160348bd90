/* Unit tests for config.c: defaults, every key, the errors a mistyped file gets, the docs. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "config.h"
#include "money.h"
#include "runner.h"

#define LIFETIME_RULE "session_lifetime must be a whole number from 60 to 604800"
#define MAX_AMOUNT_RULE \
	"max_amount must be an amount above 0 with at most two decimals, at most 92233720368547.75"

static char path[64];

/* Writes text to a new temp file whose name goes to path. */
static void
write_conf(const char *text)
{
	int fd;
	size_t len = strlen(text);

	snprintf(path, sizeof(path), "/tmp/check_config.XXXXXX");
	fd = mkstemp(path);
	ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* Loads text as a config file; returns config_load's result, err filled. */
static int
load_text(struct config *c, const char *text, char *err, size_t errlen)
{
	int rc;

	write_conf(text);
	err[0] = '\0';
	rc = config_load(c, path, err, errlen);
	unlink(path);
	return rc;
}

static const char *
str_at(const struct config *c, const struct config_key *k)
{
	return *(char *const *)((const char *)c + k->offset);
}

/* Every row of config_keys has its default applied, as the table writes it. */
START_TEST(test_defaults)
{
	struct config c;
	char err[512];
	size_t i;
	int64_t minor;

	ck_assert_msg(load_text(&c, "# only a comment\n", err, sizeof(err)) == 0, "%s", err);
	for (i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		const char *at = (const char *)&c + k->offset;

		switch (k->kind) {
		case CONFIG_STR:
			ck_assert_msg(str_at(&c, k) != NULL && strcmp(str_at(&c, k), k->def) == 0,
			    "%s: \"%s\", default \"%s\"", k->name, str_at(&c, k), k->def);
			break;
		case CONFIG_LONG:
			ck_assert_msg(*(const long *)at == strtol(k->def, NULL, 10), "%s: %ld",
			    k->name, *(const long *)at);
			break;
		case CONFIG_MONEY:
			ck_assert_int_eq(money_parse(k->def, strlen(k->def), INT64_MAX, &minor),
			    MONEY_OK);
			ck_assert_msg(*(const int64_t *)at == minor, "%s", k->name);
			break;
		case CONFIG_ENV:
			ck_assert_str_eq(k->def, "sandbox");
			ck_assert_int_eq(*(const enum config_env *)at, CONFIG_SANDBOX);
			break;
		default:
			ck_abort_msg("%s: unknown kind %d", k->name, (int)k->kind);
		}
	}
	/* The values the docs promise, spelled out. */
	ck_assert_int_eq(c.environment, CONFIG_SANDBOX);
	ck_assert_str_eq(config_key_prefix(&c), "mp_test_");
	ck_assert_str_eq(c.database, "dbname=marketpay");
	ck_assert_str_eq(c.checkout_base_url, "http://127.0.0.1:8080");
	ck_assert_str_eq(c.currency, "");
	ck_assert_str_eq(config_currency(&c), "AFN");
	ck_assert_int_eq(c.session_lifetime, 1800);
	ck_assert_int_eq(c.max_amount, 99999999999LL);
	ck_assert_int_eq(c.max_amount, MONEY_MAX_DEFAULT);
	ck_assert_int_eq(c.max_body_bytes, 262144);
	ck_assert_int_eq(c.max_items, 100);
	ck_assert_int_eq(c.idempotency_wait_ms, 5000);
	ck_assert_int_eq(c.idempotency_ttl, 86400);
	ck_assert_str_eq(c.log_file, "syslog");
	ck_assert_str_eq(c.log_level, "info");
	ck_assert_str_eq(c.metrics_dir, "/run/marketpay/metrics");
	config_free(&c);
	ck_assert_ptr_null(c.database);
}
END_TEST

START_TEST(test_full_file)
{
	static const char text[] =
	    "; a full file\n"
	    "[marketpay]\n"
	    "environment = production\n"
	    "database = host=/run/postgresql dbname=mp\n"
	    "checkout_base_url = https://pay.example/checkout/\n"
	    "currency = EUR\n"
	    "session_lifetime = 60\n"
	    "max_amount = 500.25\n"
	    "max_body_bytes = 1024\n"
	    "max_items = 10000\n"
	    "idempotency_wait_ms = 1\n"
	    "idempotency_ttl = 2592000\n"
	    "log_file = syslog\n"
	    "log_level = debug\n"
	    "sql_dir = /opt/mp/sql\n";
	struct config c;
	char err[512];

	ck_assert_msg(load_text(&c, text, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(c.environment, CONFIG_PRODUCTION);
	ck_assert_str_eq(config_key_prefix(&c), "mp_live_");
	ck_assert_str_eq(c.database, "host=/run/postgresql dbname=mp");
	ck_assert_str_eq(c.checkout_base_url, "https://pay.example/checkout");
	ck_assert_str_eq(c.currency, "EUR");
	ck_assert_str_eq(config_currency(&c), "EUR");
	ck_assert_int_eq(c.session_lifetime, 60);
	ck_assert_int_eq(c.max_amount, 50025);
	ck_assert_int_eq(c.max_body_bytes, 1024);
	ck_assert_int_eq(c.max_items, 10000);
	ck_assert_int_eq(c.idempotency_wait_ms, 1);
	ck_assert_int_eq(c.idempotency_ttl, 2592000);
	ck_assert_str_eq(c.log_file, "syslog");
	ck_assert_str_eq(c.log_level, "debug");
	ck_assert_str_eq(c.sql_dir, "/opt/mp/sql");
	config_free(&c);
}
END_TEST

/*
 * Production has no default currency: a live merchant must not get one nobody chose. The
 * sandbox keeps AFN, and a configured currency wins in both.
 */
START_TEST(test_production_currency)
{
	struct config c;
	char err[512];

	ck_assert_msg(load_text(&c, "environment = production\n", err, sizeof(err)) == 0, "%s",
	    err);
	ck_assert_ptr_null(config_currency(&c));
	config_free(&c);
	ck_assert_msg(load_text(&c, "environment = production\ncurrency = USD\n", err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(config_currency(&c), "USD");
	config_free(&c);
	ck_assert_msg(load_text(&c, "environment = sandbox\n", err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(config_currency(&c), "AFN");
	config_free(&c);
}
END_TEST

#define TZ_RULE "timezone must name a zone of the time zone database, such as UTC or Asia/Kabul"

static const struct {
	const char *text;
	int line;          /* 0: a whole-file check, "path: msg"; else "path:line: msg" */
	const char *msg;
} bad_files[] = {
	{ "# c\n\nfoo = 1\n", 3, "unknown key foo" },
	{ "foo = 1\nbar = 2\n", 1, "unknown key foo" },               /* the first error */
	{ "max_items = 0\n[x]\nfoo = 1\n", 1, "max_items must be a whole number from 1 to 10000" },
	{ "[x]\nfoo = 1\n[y]\nbar = 1\n", 2, "unknown section [x]" },
	{ "session_lifetime = abc\n", 1, LIFETIME_RULE },
	{ "session_lifetime = 59\n", 1, LIFETIME_RULE },
	{ "session_lifetime = 604801\n", 1, LIFETIME_RULE },
	{ "session_lifetime = 10s\n", 1, LIFETIME_RULE },
	{ "session_lifetime =\n", 1, LIFETIME_RULE },
	{ "max_items = 0\n", 1, "max_items must be a whole number from 1 to 10000" },
	{ "max_body_bytes = 99999999999999999999\n", 1,
	  "max_body_bytes must be a whole number from 1024 to 16777216" },
	{ "max_amount = 0\n", 1, MAX_AMOUNT_RULE },
	{ "max_amount = 1.001\n", 1, MAX_AMOUNT_RULE },
	{ "max_amount = -5\n", 1, MAX_AMOUNT_RULE },
	{ "expire_interval = 0\n", 1, "expire_interval must be a whole number from 1 to 60" },
	{ "expire_interval = 61\n", 1, "expire_interval must be a whole number from 1 to 60" },
	{ "expire_interval = 1s\n", 1, "expire_interval must be a whole number from 1 to 60" },
	{ "environment = live\n", 1, "environment must be sandbox or production" },
	{ "environment = Production\n", 1, "environment must be sandbox or production" },
	{ "[other]\nenvironment = production\n", 2, "unknown section [other]" },
	{ "no equals sign here\n", 1, "syntax error" },
	{ "currency = afn\n", 0, "currency must be a three-letter ISO 4217 code such as AFN" },
	{ "currency = AF\n", 0, "currency must be a three-letter ISO 4217 code such as AFN" },
	{ "currency = AFNX\n", 0, "currency must be a three-letter ISO 4217 code such as AFN" },
	{ "currency = A1N\n", 0, "currency must be a three-letter ISO 4217 code such as AFN" },
	{ "log_level = verbose\n", 0, "log_level must be error, warn, info or debug" },
	{ "log_level = INFO\n", 0, "log_level must be error, warn, info or debug" },
	{ "checkout_base_url = pay.example\n", 0,
	  "checkout_base_url must start with http:// or https://" },
	{ "checkout_base_url = ftp://pay.example\n", 0,
	  "checkout_base_url must start with http:// or https://" },
	{ "timezone = Mars/Olympus_Mons\n", 0, TZ_RULE },
	{ "timezone = ../../etc/passwd\n", 0, TZ_RULE },
	{ "timezone = /etc/localtime\n", 0, TZ_RULE },
	{ "timezone = Asia\n", 0, TZ_RULE },           /* a directory, not a zone */
	{ "timezone = Asia/Kabul; DROP\n", 0, TZ_RULE },
};

START_TEST(test_timezone_known)
{
	struct config c;
	char err[512];

	ck_assert_msg(load_text(&c, "timezone = Asia/Kabul\n", err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(c.timezone, "Asia/Kabul");
	config_free(&c);
	ck_assert_msg(load_text(&c, "timezone = Etc/GMT+5\n", err, sizeof(err)) == 0, "%s", err);
	config_free(&c);
}
END_TEST

/* The expiry sweep's interval: 30 seconds unless set, 1 to 60 (bad_files has the rest). */
START_TEST(test_expire_interval)
{
	struct config c;
	char err[512];

	ck_assert_msg(load_text(&c, "", err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(c.expire_interval, 30);
	config_free(&c);
	ck_assert_msg(load_text(&c, "expire_interval = 1\n", err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(c.expire_interval, 1);
	config_free(&c);
	ck_assert_msg(load_text(&c, "expire_interval = 60\n", err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(c.expire_interval, 60);
	config_free(&c);
}
END_TEST

START_TEST(test_bad_file)
{
	struct config c;
	char err[512], want[512];

	ck_assert_msg(load_text(&c, bad_files[_i].text, err, sizeof(err)) == -1, "accepted: %s",
	    bad_files[_i].text);
	if (bad_files[_i].line > 0)
		snprintf(want, sizeof(want), "%s:%d: %s", path, bad_files[_i].line, bad_files[_i].msg);
	else
		snprintf(want, sizeof(want), "%s: %s", path, bad_files[_i].msg);
	ck_assert_str_eq(err, want);
	config_free(&c);
}
END_TEST

START_TEST(test_base_url_slashes)
{
	static const struct {
		const char *value, *stored;
	} cases[] = {
		{ "https://pay.example/", "https://pay.example" },
		{ "https://pay.example/base//", "https://pay.example/base" },
		{ "http://127.0.0.1:8080", "http://127.0.0.1:8080" },
	};
	char text[256], err[512];
	struct config c;
	size_t i;

	for (i = 0; i < NELEM(cases); i++) {
		snprintf(text, sizeof(text), "checkout_base_url = %s\n", cases[i].value);
		ck_assert_msg(load_text(&c, text, err, sizeof(err)) == 0, "%s", err);
		ck_assert_str_eq(c.checkout_base_url, cases[i].stored);
		config_free(&c);
	}
}
END_TEST

START_TEST(test_missing_file)
{
	static const char missing[] = "/nonexistent/marketpay.conf";
	struct config c;
	char err[512];

	ck_assert_int_eq(config_load(&c, missing, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "/nonexistent/marketpay.conf: cannot read: No such file or directory");
	config_free(&c);
}
END_TEST

/* path NULL reads $MARKETPAY_CONFIG. */
START_TEST(test_env_path)
{
	struct config c;
	char err[512];
	int rc;

	write_conf("[marketpay]\nmax_items = 7\n");
	ck_assert_int_eq(setenv("MARKETPAY_CONFIG", path, 1), 0);
	rc = config_load(&c, NULL, err, sizeof(err));
	unlink(path);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_int_eq(c.max_items, 7);
	config_free(&c);
}
END_TEST

START_TEST(test_set)
{
	struct config c;
	char err[512];

	ck_assert_int_eq(load_text(&c, "", err, sizeof(err)), 0);
	ck_assert_int_eq(config_set(&c, "currency", "USD", err, sizeof(err)), 0);
	ck_assert_str_eq(c.currency, "USD");
	ck_assert_int_eq(config_set(&c, "nope", "1", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "unknown key nope");
	config_free(&c);
}
END_TEST

/* Reads a whole file into a NUL-terminated string; NULL when it cannot. */
static char *
slurp(const char *file)
{
	FILE *f = fopen(file, "r");
	char *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) != NULL) {
		buf[fread(buf, 1, (size_t)n, f)] = '\0';
	}
	fclose(f);
	return buf;
}

/*
 * True when a line of text starts with head followed by end; with end "", head must be
 * followed by a space or the end of the line (".It Cm max_items" is not ".It Cm max").
 */
static bool
has_line(const char *text, const char *head, const char *end)
{
	const char *p = text;
	size_t n = strlen(head), m = strlen(end);

	while (p != NULL && *p != '\0') {
		if (strncmp(p, head, n) == 0 &&
		    (m == 0 ? (p[n] == '\n' || p[n] == ' ' || p[n] == '\0') :
		    strncmp(p + n, end, m) == 0))
			return true;
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	return false;
}

/* Every key in the table is documented in marketpay.conf(5) and the example config. */
START_TEST(test_docs)
{
	const char *top = getenv("top_srcdir");
	char man[1024], example[1024], head[128];
	char *mantext, *extext;
	size_t i;

	if (top == NULL || top[0] == '\0')
		top = ".";
	snprintf(man, sizeof(man), "%s/man/marketpay.conf.5", top);
	snprintf(example, sizeof(example), "%s/etc/marketpay.conf.example", top);
	mantext = slurp(man);
	extext = slurp(example);
	ck_assert_msg(mantext != NULL, "cannot read %s", man);
	ck_assert_msg(extext != NULL, "cannot read %s", example);
	for (i = 0; i < config_nkeys; i++) {
		const char *k = config_keys[i].name;

		snprintf(head, sizeof(head), ".It Cm %s", k);
		ck_assert_msg(has_line(mantext, head, ""), "%s has no line \".It Cm %s\"", man, k);
		snprintf(head, sizeof(head), "# %s", k);
		ck_assert_msg(has_line(extext, k, " =") || has_line(extext, head, " ="),
		    "%s has no line \"%s =\" or \"# %s =\"", example, k, k);
	}
	free(mantext);
	free(extext);
}
END_TEST

/*
 * A line inih cannot parse calls no handler; the first error is still the one reported,
 * with its own line, and a line too long for inih's buffer is an error of its own.
 */
START_TEST(test_first_error)
{
	struct config c;
	char err[512], want[512], long_line[400], text[512];

	ck_assert_int_eq(load_text(&c, "no equals sign here\nbar = 2\n", err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:1: syntax error", path);
	ck_assert_str_eq(err, want);
	config_free(&c);
	ck_assert_int_eq(load_text(&c, "max_items = 5\nbar = 2\nno equals\n", err, sizeof(err)),
	    -1);
	snprintf(want, sizeof(want), "%s:2: unknown key bar", path);
	ck_assert_str_eq(err, want);
	config_free(&c);
	memset(long_line, 'x', sizeof(long_line) - 1);
	memcpy(long_line, "database = ", 11);
	long_line[sizeof(long_line) - 1] = '\0';
	snprintf(text, sizeof(text), "%s\nmax_items = 5\n", long_line);
	ck_assert_int_eq(load_text(&c, text, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ":1: line longer than") != NULL, "%s", err);
	config_free(&c);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("load");
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_production_currency);
	tcase_add_test(tc, test_full_file);
	tcase_add_loop_test(tc, test_bad_file, 0, (int)NELEM(bad_files));
	tcase_add_test(tc, test_timezone_known);
	tcase_add_test(tc, test_expire_interval);
	tcase_add_test(tc, test_base_url_slashes);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_env_path);
	tcase_add_test(tc, test_set);
	tcase_add_test(tc, test_first_error);
	suite_add_tcase(s, tc);
	tc = tcase_create("docs");
	tcase_add_test(tc, test_docs);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(config_suite());
}
