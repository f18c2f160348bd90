#ifndef MP_WEBHOOK_POST_H
#define MP_WEBHOOK_POST_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The HTTP side of webhook deliveries (the only libcurl user): many POSTs in flight at once
 * on one libcurl multi handle, driven by the caller's event loop; connections to an
 * endpoint are kept and reused.
 */
struct webhook_post;

/* What one delivery attempt came to. */
struct webhook_result {
	long http_status;   /* the answer's status, 0 when no HTTP answer came */
	long duration_ms;   /* from the start of the attempt to its end */
	char error[256];    /* why it failed, for the attempt record; "" when delivered */
	bool endpoint_down; /* the endpoint itself failed: no answer, 408, 429 or 5xx (not a
	                       refused address or a request never made) */
};

/*
 * A client whose requests give up after timeout seconds and, unless allow_private, never
 * connect to an address netguard refuses. Returns NULL when libcurl cannot be set up.
 * Free with webhook_post_free.
 */
struct webhook_post *webhook_post_new(long timeout, bool allow_private);

/*
 * Abandons the requests in flight, handing each one's tag to drop (unless NULL), closes the
 * connections and frees p (NULL is fine).
 */
void webhook_post_free(struct webhook_post *p, void (*drop)(void *tag));

/*
 * Starts POSTing len bytes of body (copied) to url (http or https only, redirects not
 * followed) with the Standard Webhooks headers webhook-id: id, webhook-timestamp: stamp and
 * webhook-signature: signature. tag comes back with the result (webhook_post_run). Returns
 * 0, or -1 with res filled when the request cannot even start (it is then over).
 */
int webhook_post_start(struct webhook_post *p, const char *url, const char *id,
    long long stamp, const char *signature, const char *body, size_t len, void *tag,
    struct webhook_result *res);

/* How many requests are in flight. */
size_t webhook_post_running(const struct webhook_post *p);

/*
 * Moves the requests on as far as they go without waiting and hands each finished one to
 * done with its tag and result (ok: a 2xx came). Returns how many finished.
 */
int webhook_post_run(struct webhook_post *p,
    void (*done)(void *arg, void *tag, bool ok, const struct webhook_result *res), void *arg);

/*
 * Waits at most ms for the requests in flight to have something to do, or for one of the
 * nfds descriptors in fds to become readable (negative ones are left out). 0, or -1.
 */
int webhook_post_wait(struct webhook_post *p, const int *fds, size_t nfds, long ms);

#endif
