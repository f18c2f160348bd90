#ifndef MP_CONFIG_H
#define MP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define CONFIG_DEFAULT_PATH "/etc/marketpay/marketpay.conf"
/* The currency of new merchants in a sandbox whose config sets none. */
#define CONFIG_SANDBOX_CURRENCY "AFN"

enum config_env {
	CONFIG_SANDBOX = 0,
	CONFIG_PRODUCTION,
	CONFIG_ENV__MAX
};

/* Everything read from marketpay.conf; strings are owned by the struct (config_free). */
struct config {
	enum config_env environment;
	char *database;            /* libpq connection string */
	char *checkout_base_url;   /* no trailing slash */
	char *currency;            /* ISO 4217 code for new merchants, "" = none (config_currency) */
	long session_lifetime;     /* seconds */
	int64_t max_amount;        /* minor units */
	long max_body_bytes;
	long max_items;
	long idempotency_wait_ms;
	long idempotency_ttl;      /* seconds */
	char *log_file;            /* "syslog" (default), "stderr" (or ""), else a path */
	char *log_level;           /* error, warn, info, debug */
	char *sql_dir;             /* migrations for marketpayctl db migrate */
	char *locale_dir;          /* the hosted page's catalogs: LANG/LC_MESSAGES/marketpay.mo */
	char *secrets_key_file;    /* 32 bytes: encrypts webhook signing secrets at rest */
	char *pepper_file;         /* 32 bytes: the HMAC key of PIN digests */
	char *pin_key_file;        /* RSA private key (PEM) merchants encrypt transfer PINs to */
	long max_vendors;          /* vendors per multi-vendor transfer */
	char *timezone;            /* of transaction_date in transfer replies */
	long pin_max_attempts;     /* consecutive wrong PINs before a lock (marketpayctl) */
	long pin_lock_seconds;     /* the first lock; each next one is 4 times longer */
	long pin_max_locks;        /* timed locks before the hard lock */
	long pin_max_age;          /* seconds an encrypted transfer PIN stays fresh */
	long redeliveries_per_minute; /* a merchant's POST events/{id}/redeliver (marketpayctl) */
	char *webhook_retry_schedule; /* seconds between attempts, comma-separated */
	long webhook_timeout;      /* seconds per delivery attempt */
	long webhook_poll_interval; /* seconds between scans when no NOTIFY arrives */
	long webhook_senders;      /* delivery processes of one marketpay-webhookd */
	long webhook_max_in_flight; /* deliveries one sender keeps in flight at once */
	long webhook_endpoint_in_flight; /* of one merchant's endpoint, across all senders */
	long webhook_breaker_failures; /* consecutive endpoint failures that open its breaker */
	long webhook_breaker_cooldown; /* seconds it stays open first (doubling after) */
	long webhook_allow_private; /* 1: webhooks may go to loopback, private, ... addresses */
	long webhook_secret_rotation_window; /* seconds a rotated-out secret still signs
	                                      * (marketpayctl db migrate stores it) */
	long expire_interval;      /* seconds between marketpay-webhookd's expiry sweeps */
	long retention_events_days; /* marketpayctl purge: settled webhook events older go */
	long retention_sessions_days; /* marketpayctl purge: unpaid ended sessions older go */
	char *metrics_dir;         /* the metrics files (metrics.h); "" = no metrics */
};

enum config_kind {
	CONFIG_STR,    /* string, copied */
	CONFIG_LONG,   /* decimal integer within [min, max] */
	CONFIG_MONEY,  /* amount in major units, stored as minor units */
	CONFIG_ENV,    /* "sandbox" or "production" */
	CONFIG_KIND__MAX
};

/* One row per key: the table drives parsing, defaults and the docs test. */
struct config_key {
	const char *name;
	enum config_kind kind;
	size_t offset;         /* into struct config */
	long min, max;         /* CONFIG_LONG bounds */
	const char *def;       /* default, as it would be written in the file */
};

extern const struct config_key config_keys[];
extern const size_t config_nkeys;

/*
 * Fills c with the defaults, then reads path (NULL: $MARKETPAY_CONFIG, else the default
 * path). Returns 0, or -1 with a message naming file, line and key written to err.
 * Free with config_free, also after a failure.
 */
int config_load(struct config *c, const char *path, char *err, size_t errlen);

/* Sets one key from its text form; returns 0 or -1 with the rule in err. */
int config_set(struct config *c, const char *name, const char *value, char *err, size_t errlen);

/* Releases the strings of c. */
void config_free(struct config *c);

/* "sandbox" or "production": the configured environment, a static string. */
const char *config_env_name(const struct config *c);

/*
 * The ISO 4217 code of new merchants and accounts when the operator names none: the
 * configured currency, else AFN in a sandbox; NULL in production without one (the caller
 * refuses). A string owned by c or static.
 */
const char *config_currency(const struct config *c);

/* The API key prefix of the configured environment ("mp_test_" or "mp_live_"). */
const char *config_key_prefix(const struct config *c);

#endif
