#ifndef MPLOAD_CLIENT_H
#define MPLOAD_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

/*
 * One HTTP connection to the stack (a libcurl easy handle, kept alive between requests),
 * used by one thread, and what its last request got back.
 */
struct client {
	CURL *c;
	char base[512];            /* $MARKETPAY_BASE_URL */
	char *body;                /* the last answer's body, NUL-terminated */
	size_t len, cap;
	long status;               /* 0: no answer */
	uint64_t lat_us;           /* from sending (or its scheduled time: lag_us) to the whole answer */
	int64_t start_ms;          /* Unix time in ms when it was sent (or scheduled: lag_us) */
	int64_t owed_us;           /* >= 0: the next request was due this long ago (mpload -q) */
	int64_t lag_us;            /* the last request's owed_us: counted in lat_us and start_ms;
	                              < 0: none (not the first request of a paced operation) */
	char request_id[80];       /* Request-Id header, or "" */
	char location[1024];       /* Location header, or "" */
	int replayed;              /* Idempotent-Replayed: true */
	char error[CURL_ERROR_SIZE + 16];  /* "curl:N" when no answer came */
};

/* A new client for base (no trailing slash) with a timeout per request; NULL when out of
 * memory. Free with client_free. */
struct client *client_new(const char *base, long timeout_s);

/*
 * Sends method ("GET" or "POST") path with the extra header lines (NULL-terminated list,
 * may be NULL) and body (POST only). Returns 0 when an answer came (c->status, c->body), -1
 * when none did (c->status 0, c->error says why).
 */
int client_do(struct client *c, const char *method, const char *path,
    const char *const *headers, const char *body);

void client_free(struct client *c);

#endif
