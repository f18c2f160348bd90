/* Webhook HTTP deliveries: the only file that includes curl.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <curl/curl.h>

#include "netguard.h"
#include "webhook_post.h"
#include "webhook_sign.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif

struct webhook_post {
	CURL *curl;
	char errbuf[CURL_ERROR_SIZE];
	bool allow_private;
	char refused[128];   /* the address open_socket last refused, and why; "" = none */
};

/* The receiver's answer body says nothing we keep: read and drop it. */
static size_t
discard(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	(void)arg;
	return size * n;
}

/*
 * libcurl's socket opener, called for every address it is about to connect to, after DNS:
 * an internal address is refused here, so a name that resolves (or later re-resolves) to
 * one gets no connection.
 */
static curl_socket_t
open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct webhook_post *p = arg;

	(void)purpose;
	if (!p->allow_private && netguard_refuse(&a->addr, a->addrlen, p->refused,
	    sizeof(p->refused)))
		return CURL_SOCKET_BAD;
	return socket(a->family, a->socktype, a->protocol);
}

/* The options every request shares, set once: the handle keeps them between requests. */
static int
set_fixed(struct webhook_post *p, long timeout)
{
	CURL *c = p->curl;

	return curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, p->errbuf) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, p) != CURLE_OK ||
#if LIBCURL_VERSION_NUM >= 0x075500
	    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
#else
	    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) !=
	    CURLE_OK ||
#endif
	    curl_easy_setopt(c, CURLOPT_USERAGENT, "marketpay-webhookd/" PACKAGE_VERSION) !=
	    CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_POST, 1L) != CURLE_OK ? -1 : 0;
}

struct webhook_post *
webhook_post_new(long timeout, bool allow_private)
{
	struct webhook_post *p = NULL;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return NULL;
	if ((p = calloc(1, sizeof(*p))) != NULL)
		p->allow_private = allow_private;
	if (p == NULL || (p->curl = curl_easy_init()) == NULL || set_fixed(p, timeout) != 0) {
		webhook_post_free(p);
		if (p == NULL)
			curl_global_cleanup();
		return NULL;
	}
	return p;
}

void
webhook_post_free(struct webhook_post *p)
{
	if (p == NULL)
		return;
	curl_easy_cleanup(p->curl);
	free(p);
	curl_global_cleanup();
}

static long
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (long)((t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000);
}

/*
 * The request's header lines: the content type, the three of Standard Webhooks, and an
 * empty "Expect:" (no waiting for a 100 Continue). Returns a list the caller frees with
 * curl_slist_free_all, or NULL with the reason in res.
 */
static struct curl_slist *
make_headers(const char *secret, const char *id, const char *body, size_t len,
    struct webhook_result *res)
{
	char sig[WEBHOOK_SIGNATURE_MAX], id_h[128], stamp_h[64], sig_h[128];
	const char *lines[] = { "Content-Type: application/json", id_h, stamp_h, sig_h, "Expect:" };
	struct curl_slist *list = NULL, *grown;
	long long now = (long long)time(NULL);
	size_t i;

	if (webhook_sign(secret, id, now, body, len, sig) != 0) {
		snprintf(res->error, sizeof(res->error), "cannot sign the event");
		return NULL;
	}
	snprintf(id_h, sizeof(id_h), "webhook-id: %s", id);
	snprintf(stamp_h, sizeof(stamp_h), "webhook-timestamp: %lld", now);
	snprintf(sig_h, sizeof(sig_h), "webhook-signature: %s", sig);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if ((grown = curl_slist_append(list, lines[i])) == NULL) {
			curl_slist_free_all(list);
			snprintf(res->error, sizeof(res->error), "out of memory");
			return NULL;
		}
		list = grown;
	}
	return list;
}

int
webhook_post_send(struct webhook_post *p, const char *url, const char *secret,
    const char *id, const char *body, size_t len, struct webhook_result *res)
{
	struct curl_slist *list;
	struct timespec t0;
	CURLcode cc;
	int ok = 0;

	memset(res, 0, sizeof(*res));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((list = make_headers(secret, id, body, len, res)) == NULL)
		goto out;
	p->errbuf[0] = '\0';
	p->refused[0] = '\0';
	if (curl_easy_setopt(p->curl, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, list) != CURLE_OK ||
	    curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len) != CURLE_OK ||
	    curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, body) != CURLE_OK) {
		snprintf(res->error, sizeof(res->error), "cannot set up the request (bad URL?)");
		goto out;
	}
	cc = curl_easy_perform(p->curl);
	if (curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &res->http_status) != CURLE_OK)
		res->http_status = 0;
	/* Said plainly: curl itself only knows that no connection came about. */
	if (cc == CURLE_COULDNT_CONNECT && p->refused[0] != '\0')
		snprintf(res->error, sizeof(res->error), "refused: %s (webhook_allow_private is "
		    "off)", p->refused);
	else if (cc != CURLE_OK)
		snprintf(res->error, sizeof(res->error), "%s", p->errbuf[0] != '\0' ? p->errbuf :
		    curl_easy_strerror(cc));
	else if (res->http_status >= 200 && res->http_status <= 299)
		ok = 1;
	else if (res->http_status >= 300 && res->http_status <= 399)
		snprintf(res->error, sizeof(res->error), "HTTP %ld (redirects are not followed)",
		    res->http_status);
	else
		snprintf(res->error, sizeof(res->error), "HTTP %ld", res->http_status);
out:
	/* The list is freed below: the handle must not keep pointing at it. */
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
	curl_slist_free_all(list);
	res->duration_ms = ms_since(&t0);
	return ok;
}
