/* marketpay-webhookd's counters: what a sender counts, and how a scrape shows them. */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "metrics_delivery.h"

void
metrics_delivery_attach(const struct config *cfg)
{
	char path[512];

	/* Without its metrics file a sender still delivers; it says so once. */
	if (metrics_path(cfg->metrics_dir, config_env_name(cfg), "webhookd", path,
	    sizeof(path)) != NULL && metrics_attach(path, MD__MAX, 0) != 0)
		log_msg(LOG_LVL_WARN, NULL, "metrics file %s: %s; this sender's deliveries are "
		    "not counted", path, strerror(errno));
}

void
metrics_delivery_done(const char *result, long duration_ms)
{
	if (strcmp(result, "delivered") == 0)
		metrics_add(MD_DELIVERED, 1);
	else if (strcmp(result, "dead") == 0)
		metrics_add(MD_DEAD, 1);
	else
		metrics_add(MD_RETRY, 1);
	metrics_observe(MD_ATTEMPT_HIST, duration_ms > 0 ? (uint64_t)duration_ms * 1000 : 0);
}

void
metrics_delivery_latency(long long latency_ms)
{
	metrics_observe_in(MD_LATENCY_HIST, metrics_slow_bucket_us,
	    latency_ms > 0 ? (uint64_t)latency_ms * 1000 : 0);
}

void
metrics_delivery_text(struct metrics_text *t, const uint64_t *v, unsigned senders)
{
	static const char attempts[] = "marketpay_webhook_attempts_total";

	metrics_text_family(t, attempts, "counter",
	    "Webhook delivery attempts finished, by result (retry: to be tried again; dead: "
	    "the last one failed).");
	metrics_text_value(t, attempts, "result=\"delivered\"", v[MD_DELIVERED]);
	metrics_text_value(t, attempts, "result=\"retry\"", v[MD_RETRY]);
	metrics_text_value(t, attempts, "result=\"dead\"", v[MD_DEAD]);
	metrics_text_family(t, "marketpay_webhook_attempt_duration_seconds", "histogram",
	    "Duration of each webhook delivery attempt, connect to answer.");
	metrics_text_histogram(t, "marketpay_webhook_attempt_duration_seconds", "",
	    v + MD_ATTEMPT_HIST);
	metrics_text_family(t, "marketpay_webhook_delivery_latency_seconds", "histogram",
	    "From an event's creation (database clock) to the 2xx of its endpoint, for events "
	    "delivered without a redelivery asked for; retries included.");
	metrics_text_histogram_in(t, "marketpay_webhook_delivery_latency_seconds", "",
	    v + MD_LATENCY_HIST, metrics_slow_bucket_us);
	metrics_text_family(t, "marketpay_webhookd_senders", "gauge",
	    "marketpay-webhookd sender processes alive.");
	metrics_text_value(t, "marketpay_webhookd_senders", "", senders);
	metrics_text_family(t, "marketpay_webhookd_db_reconnects_total", "counter",
	    "Database connections marketpay-webhookd's senders made again after losing one.");
	metrics_text_value(t, "marketpay_webhookd_db_reconnects_total", "", v[MD_DB_RECONNECTS]);
}
