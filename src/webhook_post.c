/* Webhook HTTP deliveries on one libcurl multi handle: the only file that includes curl.h. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <curl/curl.h>

#include "netguard.h"
#include "webhook_post.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif

#define WAIT_FDS_MAX 4

/* One request, in flight or kept for the next one (its easy handle keeps its options). */
struct xfer {
	struct webhook_post *p;
	CURL *curl;
	struct curl_slist *headers;
	char errbuf[CURL_ERROR_SIZE];
	char refused[128];   /* the address open_socket last refused, and why; "" = none */
	struct timespec t0;
	void *tag;
	struct xfer *prev, *next;   /* in the list of requests in flight, or the free list */
};

struct webhook_post {
	CURLM *multi;
	long timeout;
	bool allow_private;
	size_t running;
	struct xfer *live;   /* in flight */
	struct xfer *free;
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
	struct xfer *x = arg;

	(void)purpose;
	if (!x->p->allow_private && netguard_refuse(&a->addr, a->addrlen, x->refused,
	    sizeof(x->refused)))
		return CURL_SOCKET_BAD;
	return socket(a->family, a->socktype, a->protocol);
}

/* The options every request shares, set once: the handle keeps them between requests. */
static int
set_fixed(struct xfer *x, long timeout)
{
	CURL *c = x->curl;

	return curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_PRIVATE, x) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, x->errbuf) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, x) != CURLE_OK ||
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

static void
xfer_free(struct xfer *x)
{
	if (x == NULL)
		return;
	curl_easy_cleanup(x->curl);
	curl_slist_free_all(x->headers);
	free(x);
}

/* A kept request handle, or a new one; NULL when libcurl cannot make one. */
static struct xfer *
xfer_get(struct webhook_post *p)
{
	struct xfer *x = p->free;

	if (x != NULL) {
		p->free = x->next;
		return x;
	}
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return NULL;
	x->p = p;
	if ((x->curl = curl_easy_init()) == NULL || set_fixed(x, p->timeout) != 0) {
		xfer_free(x);
		return NULL;
	}
	return x;
}

/* Back to the free list, its header list freed (the handle must not point at it). */
static void
xfer_put(struct webhook_post *p, struct xfer *x)
{
	curl_easy_setopt(x->curl, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
	curl_slist_free_all(x->headers);
	x->headers = NULL;
	x->tag = NULL;
	x->next = p->free;
	p->free = x;
}

struct webhook_post *
webhook_post_new(long timeout, bool allow_private)
{
	struct webhook_post *p = NULL;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL || (p->multi = curl_multi_init()) == NULL) {
		free(p);
		curl_global_cleanup();
		return NULL;
	}
	p->timeout = timeout;
	p->allow_private = allow_private;
	return p;
}

void
webhook_post_free(struct webhook_post *p, void (*drop)(void *tag))
{
	struct xfer *x;

	if (p == NULL)
		return;
	/* Requests still in flight are abandoned: their events' leases bring them back. */
	while ((x = p->live) != NULL) {
		p->live = x->next;
		curl_multi_remove_handle(p->multi, x->curl);
		if (drop != NULL)
			drop(x->tag);
		xfer_free(x);
	}
	while ((x = p->free) != NULL) {
		p->free = x->next;
		xfer_free(x);
	}
	curl_multi_cleanup(p->multi);
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
 * empty "Expect:" (no waiting for a 100 Continue). NULL on ENOMEM.
 */
static struct curl_slist *
make_headers(const char *id, long long stamp, const char *signature)
{
	char id_h[128], stamp_h[64], sig_h[512];
	const char *lines[] = { "Content-Type: application/json", id_h, stamp_h, sig_h, "Expect:" };
	struct curl_slist *list = NULL, *grown;
	size_t i;

	snprintf(id_h, sizeof(id_h), "webhook-id: %s", id);
	snprintf(stamp_h, sizeof(stamp_h), "webhook-timestamp: %lld", stamp);
	snprintf(sig_h, sizeof(sig_h), "webhook-signature: %s", signature);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if ((grown = curl_slist_append(list, lines[i])) == NULL) {
			curl_slist_free_all(list);
			return NULL;
		}
		list = grown;
	}
	return list;
}

int
webhook_post_start(struct webhook_post *p, const char *url, const char *id, long long stamp,
    const char *signature, const char *body, size_t len, void *tag, struct webhook_result *res)
{
	struct xfer *x;

	memset(res, 0, sizeof(*res));
	if ((x = xfer_get(p)) == NULL) {
		snprintf(res->error, sizeof(res->error), "cannot set up the request (libcurl)");
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &x->t0);
	x->errbuf[0] = '\0';
	x->refused[0] = '\0';
	x->tag = tag;
	if ((x->headers = make_headers(id, stamp, signature)) == NULL)
		snprintf(res->error, sizeof(res->error), "out of memory");
	else if (curl_easy_setopt(x->curl, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(x->curl, CURLOPT_HTTPHEADER, x->headers) != CURLE_OK ||
	    curl_easy_setopt(x->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len) != CURLE_OK ||
	    curl_easy_setopt(x->curl, CURLOPT_COPYPOSTFIELDS, body) != CURLE_OK)
		snprintf(res->error, sizeof(res->error), "cannot set up the request (bad URL?)");
	else if (curl_multi_add_handle(p->multi, x->curl) != CURLM_OK)
		snprintf(res->error, sizeof(res->error), "cannot start the request (libcurl)");
	else {
		p->running++;
		x->prev = NULL;
		x->next = p->live;
		if (p->live != NULL)
			p->live->prev = x;
		p->live = x;
		return 0;
	}
	xfer_put(p, x);
	return -1;
}

size_t
webhook_post_running(const struct webhook_post *p)
{
	return p->running;
}

/* What the finished request x came to, with cc libcurl's verdict: 1 when a 2xx came. */
static int
result(struct xfer *x, CURLcode cc, struct webhook_result *res)
{
	memset(res, 0, sizeof(*res));
	if (curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &res->http_status) != CURLE_OK)
		res->http_status = 0;
	res->duration_ms = ms_since(&x->t0);
	/* Said plainly: curl itself only knows that no connection came about. */
	if (cc == CURLE_COULDNT_CONNECT && x->refused[0] != '\0')
		snprintf(res->error, sizeof(res->error), "refused: %s (webhook_allow_private is "
		    "off)", x->refused);
	else if (cc != CURLE_OK) {
		snprintf(res->error, sizeof(res->error), "%s", x->errbuf[0] != '\0' ? x->errbuf :
		    curl_easy_strerror(cc));
		res->endpoint_down = cc != CURLE_URL_MALFORMAT && cc != CURLE_UNSUPPORTED_PROTOCOL;
	} else if (res->http_status >= 200 && res->http_status <= 299)
		return 1;
	else if (res->http_status >= 300 && res->http_status <= 399)
		snprintf(res->error, sizeof(res->error), "HTTP %ld (redirects are not followed)",
		    res->http_status);
	else {
		snprintf(res->error, sizeof(res->error), "HTTP %ld", res->http_status);
		res->endpoint_down = res->http_status == 408 || res->http_status == 429 ||
		    res->http_status >= 500;
	}
	return 0;
}

int
webhook_post_run(struct webhook_post *p,
    void (*done)(void *arg, void *tag, bool ok, const struct webhook_result *res), void *arg)
{
	struct webhook_result res;
	struct xfer *x;
	CURLMsg *m;
	int still, left, n = 0, ok;

	curl_multi_perform(p->multi, &still);
	while ((m = curl_multi_info_read(p->multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		ok = result(x, m->data.result, &res);
		curl_multi_remove_handle(p->multi, x->curl);
		p->running--;
		if (x->prev != NULL)
			x->prev->next = x->next;
		else
			p->live = x->next;
		if (x->next != NULL)
			x->next->prev = x->prev;
		done(arg, x->tag, ok, &res);
		xfer_put(p, x);
		n++;
	}
	return n;
}

int
webhook_post_wait(struct webhook_post *p, const int *fds, size_t nfds, long ms)
{
	struct curl_waitfd w[WAIT_FDS_MAX];
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < nfds && n < WAIT_FDS_MAX; i++)
		if (fds[i] >= 0) {
			w[n].fd = fds[i];
			w[n].events = CURL_WAIT_POLLIN;
			w[n].revents = 0;
			n++;
		}
	return curl_multi_poll(p->multi, w, n, ms < 0 ? 0 : (int)ms, NULL) == CURLM_OK ? 0 : -1;
}
