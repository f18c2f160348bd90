#ifndef MP_WEBHOOK_POST_H
#define MP_WEBHOOK_POST_H

#include <stdbool.h>
#include <stddef.h>

/*
 * One HTTP client for webhook deliveries (the only libcurl user), which signs what it sends;
 * its connections are reused.
 */
struct webhook_post;

/* What one delivery attempt came to. */
struct webhook_result {
	long http_status;   /* the answer's status, 0 when no HTTP answer came */
	long duration_ms;   /* from the start of the attempt to its end */
	char error[256];    /* why it failed, for the attempt record; "" when delivered */
};

/*
 * A client whose requests give up after timeout seconds and, unless allow_private, never
 * connect to an address netguard refuses. Returns NULL when libcurl cannot be set up.
 * Free with webhook_post_free.
 */
struct webhook_post *webhook_post_new(long timeout, bool allow_private);

/* Closes the client's connections and frees it (NULL is fine). */
void webhook_post_free(struct webhook_post *p);

/*
 * POSTs len bytes of body, event id, to url (http or https only, redirects not followed),
 * signed with secret as Standard Webhooks has it: webhook-id, webhook-timestamp (now) and
 * webhook-signature headers. Returns 1 when the answer was 2xx, else 0; res says what
 * happened either way.
 */
int webhook_post_send(struct webhook_post *p, const char *url, const char *secret,
    const char *id, const char *body, size_t len, struct webhook_result *res);

#endif
