#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ini.h>

#include "config.h"
#include "money.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/share/marketpay"
#endif

#ifndef LOCALEDIR
#define LOCALEDIR "/usr/share/locale"
#endif

#define OFF(f) offsetof(struct config, f)

const struct config_key config_keys[] = {
	{ "environment",         CONFIG_ENV,   OFF(environment), 0, 0, "sandbox" },
	{ "database",            CONFIG_STR,   OFF(database), 0, 0, "dbname=marketpay" },
	{ "checkout_base_url",   CONFIG_STR,   OFF(checkout_base_url), 0, 0, "http://127.0.0.1:8080" },
	{ "currency",            CONFIG_STR,   OFF(currency), 0, 0, "" },
	{ "session_lifetime",    CONFIG_LONG,  OFF(session_lifetime), 60, 7 * 86400, "1800" },
	{ "max_amount",          CONFIG_MONEY, OFF(max_amount), 0, 0, "999999999.99" },
	{ "max_body_bytes",      CONFIG_LONG,  OFF(max_body_bytes), 1024, 16 << 20, "262144" },
	{ "max_items",           CONFIG_LONG,  OFF(max_items), 1, 10000, "100" },
	{ "idempotency_wait_ms", CONFIG_LONG,  OFF(idempotency_wait_ms), 1, 600000, "5000" },
	{ "idempotency_ttl",     CONFIG_LONG,  OFF(idempotency_ttl), 60, 30 * 86400, "86400" },
	{ "log_file",            CONFIG_STR,   OFF(log_file), 0, 0, "syslog" },
	{ "log_level",           CONFIG_STR,   OFF(log_level), 0, 0, "info" },
	{ "sql_dir",             CONFIG_STR,   OFF(sql_dir), 0, 0, PKGDATADIR "/sql" },
	{ "locale_dir",          CONFIG_STR,   OFF(locale_dir), 0, 0, LOCALEDIR },
	{ "secrets_key_file",    CONFIG_STR,   OFF(secrets_key_file), 0, 0,
	  "/etc/marketpay/secrets.key" },
	{ "pepper_file",         CONFIG_STR,   OFF(pepper_file), 0, 0, "/etc/marketpay/pin-pepper" },
	{ "pin_key_file",        CONFIG_STR,   OFF(pin_key_file), 0, 0, "/etc/marketpay/pin-key.pem" },
	{ "max_vendors",         CONFIG_LONG,  OFF(max_vendors), 1, 1000, "16" },
	{ "timezone",            CONFIG_STR,   OFF(timezone), 0, 0, "UTC" },
	{ "pin_max_attempts",    CONFIG_LONG,  OFF(pin_max_attempts), 1, 100, "5" },
	{ "pin_lock_seconds",    CONFIG_LONG,  OFF(pin_lock_seconds), 1, 86400, "900" },
	{ "pin_max_locks",       CONFIG_LONG,  OFF(pin_max_locks), 0, 100, "3" },
	{ "pin_max_age",         CONFIG_LONG,  OFF(pin_max_age), 10, 3600, "300" },
	{ "redeliveries_per_minute", CONFIG_LONG, OFF(redeliveries_per_minute), 1, 1000, "10" },
	{ "webhook_retry_schedule", CONFIG_STR, OFF(webhook_retry_schedule), 0, 0,
	  "5,300,1800,7200,18000,36000,36000" },
	{ "webhook_timeout",     CONFIG_LONG,  OFF(webhook_timeout), 1, 300, "10" },
	{ "webhook_poll_interval", CONFIG_LONG, OFF(webhook_poll_interval), 1, 3600, "5" },
	{ "webhook_senders",     CONFIG_LONG,  OFF(webhook_senders), 1, 64, "2" },
	{ "webhook_max_in_flight", CONFIG_LONG, OFF(webhook_max_in_flight), 1, 10000, "1000" },
	{ "webhook_endpoint_in_flight", CONFIG_LONG, OFF(webhook_endpoint_in_flight), 1, 1000,
	  "10" },
	{ "webhook_breaker_failures", CONFIG_LONG, OFF(webhook_breaker_failures), 1, 1000, "5" },
	{ "webhook_breaker_cooldown", CONFIG_LONG, OFF(webhook_breaker_cooldown), 1, 3600, "30" },
	{ "webhook_allow_private", CONFIG_LONG, OFF(webhook_allow_private), 0, 1, "0" },
	{ "webhook_secret_rotation_window", CONFIG_LONG, OFF(webhook_secret_rotation_window), 0,
	  30 * 86400, "86400" },
	{ "expire_interval",     CONFIG_LONG,  OFF(expire_interval), 1, 60, "30" },
	/* At least 30 days: reconciliation reads events and sessions that far back. */
	{ "retention_events_days", CONFIG_LONG, OFF(retention_events_days), 30, 36500, "90" },
	{ "retention_sessions_days", CONFIG_LONG, OFF(retention_sessions_days), 30, 36500, "365" },
	/* The processes' counters, one file per program and environment; "" = none kept. */
	{ "metrics_dir",         CONFIG_STR,   OFF(metrics_dir), 0, 0, "/run/marketpay/metrics" },
};

const size_t config_nkeys = sizeof(config_keys) / sizeof(config_keys[0]);

static const char *const env_name[CONFIG_ENV__MAX] = {
	"sandbox",     /* CONFIG_SANDBOX */
	"production",  /* CONFIG_PRODUCTION */
};

static const char *const log_levels[] = { "error", "warn", "info", "debug", NULL };

static int
set_value(struct config *c, const struct config_key *k, const char *value, char *err,
    size_t errlen)
{
	char *base = (char *)c, *end = NULL, *copy;
	long n;
	int64_t minor;
	int i;

	switch (k->kind) {
	case CONFIG_STR:
		if ((copy = strdup(value)) == NULL) {
			snprintf(err, errlen, "%s: out of memory", k->name);
			return -1;
		}
		free(*(char **)(base + k->offset));
		*(char **)(base + k->offset) = copy;
		return 0;
	case CONFIG_LONG:
		errno = 0;
		n = strtol(value, &end, 10);
		if (errno != 0 || end == value || *end != '\0' || n < k->min || n > k->max) {
			snprintf(err, errlen, "%s must be a whole number from %ld to %ld", k->name,
			    k->min, k->max);
			return -1;
		}
		*(long *)(base + k->offset) = n;
		return 0;
	case CONFIG_MONEY:
		if (money_parse(value, strlen(value), INT64_MAX / 1000, &minor) != MONEY_OK) {
			snprintf(err, errlen, "%s must be an amount above 0 with at most two "
			    "decimals, at most 92233720368547.75", k->name);
			return -1;
		}
		*(int64_t *)(base + k->offset) = minor;
		return 0;
	case CONFIG_ENV:
		for (i = 0; i < CONFIG_ENV__MAX; i++)
			if (strcmp(value, env_name[i]) == 0) {
				*(enum config_env *)(base + k->offset) = (enum config_env)i;
				return 0;
			}
		snprintf(err, errlen, "%s must be sandbox or production", k->name);
		return -1;
	default:
		snprintf(err, errlen, "%s: unknown kind", k->name);
		return -1;
	}
}

int
config_set(struct config *c, const char *name, const char *value, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < config_nkeys; i++)
		if (strcmp(config_keys[i].name, name) == 0)
			return set_value(c, &config_keys[i], value, err, errlen);
	snprintf(err, errlen, "unknown key %s", name);
	return -1;
}

struct load_ctx {
	struct config *c;
	FILE *fp;
	int line;           /* the line inih is looking at */
	int err_line;       /* the line of the first error we found, 0 = none */
	char err[256];
};

/*
 * inih's reader, fgets with a line count: the handler then knows its line, and a line
 * longer than inih's buffer is an error instead of being cut and read as two lines.
 */
static char *
read_line(char *str, int num, void *stream)
{
	struct load_ctx *ctx = stream;
	size_t n;
	int ch;

	if (fgets(str, num, ctx->fp) == NULL)
		return NULL;
	ctx->line++;
	n = strlen(str);
	if (n > 0 && str[n - 1] != '\n' && (ch = fgetc(ctx->fp)) != EOF) {
		ungetc(ch, ctx->fp);
		if (ctx->err_line == 0) {
			ctx->err_line = ctx->line;
			snprintf(ctx->err, sizeof(ctx->err), "line longer than %d characters",
			    num - 2);
		}
		/* Skip the rest of the long line so it is not read as a line of its own. */
		while ((ch = fgetc(ctx->fp)) != EOF && ch != '\n')
			;
	}
	return str;
}

static int
on_ini(void *user, const char *section, const char *name, const char *value)
{
	struct load_ctx *ctx = user;

	char msg[sizeof(ctx->err)];

	/* One flat namespace: keys outside a section or under [marketpay]. */
	if (section[0] != '\0' && strcmp(section, "marketpay") != 0)
		snprintf(msg, sizeof(msg), "unknown section [%s]", section);
	else if (config_set(ctx->c, name, value, msg, sizeof(msg)) == 0)
		return 1;
	if (ctx->err_line == 0) {
		ctx->err_line = ctx->line;
		snprintf(ctx->err, sizeof(ctx->err), "%s", msg);
	}
	return 0;
}

/*
 * PostgreSQL on Debian reads the system time zone database, so a zone it knows is a file
 * there: checked at load, a misspelt zone stops the program instead of failing transfers.
 */
static int
timezone_known(const char *tz)
{
	const char *dir = getenv("TZDIR") ? getenv("TZDIR") : "/usr/share/zoneinfo";
	char path[512];
	struct stat st;
	size_t n = strlen(tz);

	if (n == 0 || n > 64 || tz[0] == '/' || strstr(tz, "..") != NULL ||
	    strspn(tz, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+-/") != n)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, tz);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int
check_values(struct config *c, char *err, size_t errlen)
{
	size_t n, i;

	for (i = 0; log_levels[i] != NULL; i++)
		if (strcmp(c->log_level, log_levels[i]) == 0)
			break;
	if (log_levels[i] == NULL) {
		snprintf(err, errlen, "log_level must be error, warn, info or debug");
		return -1;
	}
	/* Empty: none configured (config_currency). */
	if (c->currency[0] != '\0' &&
	    (strlen(c->currency) != 3 || strspn(c->currency, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != 3)) {
		snprintf(err, errlen, "currency must be a three-letter ISO 4217 code such as AFN");
		return -1;
	}
	n = strlen(c->checkout_base_url);
	while (n > 0 && c->checkout_base_url[n - 1] == '/')
		c->checkout_base_url[--n] = '\0';
	if (strncmp(c->checkout_base_url, "http://", 7) != 0 &&
	    strncmp(c->checkout_base_url, "https://", 8) != 0) {
		snprintf(err, errlen, "checkout_base_url must start with http:// or https://");
		return -1;
	}
	if (!timezone_known(c->timezone)) {
		snprintf(err, errlen, "timezone must name a zone of the time zone database, such as"
		    " UTC or Asia/Kabul");
		return -1;
	}
	return 0;
}

int
config_load(struct config *c, const char *path, char *err, size_t errlen)
{
	struct load_ctx ctx;
	char inner[256] = "";
	size_t i;
	int rc;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < config_nkeys; i++)
		if (set_value(c, &config_keys[i], config_keys[i].def, err, errlen) != 0)
			return -1;
	if (path == NULL)
		path = getenv("MARKETPAY_CONFIG");
	if (path == NULL || path[0] == '\0')
		path = CONFIG_DEFAULT_PATH;
	memset(&ctx, 0, sizeof(ctx));
	ctx.c = c;
	if ((ctx.fp = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	rc = ini_parse_stream(read_line, &ctx, on_ini, &ctx);
	fclose(ctx.fp);
	/* inih returns the first line it found wrong; ours may be a later one. */
	if (ctx.err_line != 0 && (rc <= 0 || ctx.err_line <= rc)) {
		snprintf(err, errlen, "%s:%d: %s", path, ctx.err_line, ctx.err);
		return -1;
	}
	if (rc != 0) {
		snprintf(err, errlen, "%s:%d: syntax error", path, rc);
		return -1;
	}
	if (check_values(c, inner, sizeof(inner)) != 0) {
		snprintf(err, errlen, "%s: %s", path, inner);
		return -1;
	}
	return 0;
}

void
config_free(struct config *c)
{
	size_t i;

	for (i = 0; i < config_nkeys; i++)
		if (config_keys[i].kind == CONFIG_STR) {
			free(*(char **)((char *)c + config_keys[i].offset));
			*(char **)((char *)c + config_keys[i].offset) = NULL;
		}
}

const char *
config_env_name(const struct config *c)
{
	return env_name[c->environment];
}

const char *
config_currency(const struct config *c)
{
	if (c->currency[0] != '\0')
		return c->currency;
	/*
	 * Production has no default: a live merchant given a currency nobody chose was found
	 * in a real deployment (the example config sets none).
	 */
	return c->environment == CONFIG_SANDBOX ? CONFIG_SANDBOX_CURRENCY : NULL;
}

const char *
config_key_prefix(const struct config *c)
{
	return c->environment == CONFIG_PRODUCTION ? "mp_live_" : "mp_test_";
}
