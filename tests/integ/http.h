#ifndef MP_TEST_HTTP_H
#define MP_TEST_HTTP_H

#include <stddef.h>

#include <json-c/json.h>

/* One HTTP exchange with the stack under test, over real HTTP with libcurl. */
struct http_resp {
	long status;
	char *body;                 /* NUL-terminated */
	size_t len;
	char *headers;              /* raw response header block */
	struct json_object *json;   /* body parsed, or NULL when it is not JSON */
	int result;                 /* libcurl's CURLcode: 0, or why the transfer failed
	                               (18, CURLE_PARTIAL_FILE: the body was cut short) */
};

/*
 * Sends method path (relative to $MARKETPAY_BASE_URL) with the given extra header lines
 * (NULL-terminated list, may be NULL) and body (NULL: none; len -1: strlen). Returns 0, or
 * -1 when the transfer itself failed. Free out with http_free.
 */
int http_do(const char *method, const char *path, const char *const *headers,
    const char *body, long len, struct http_resp *out);

/* Sends n identical POSTs at once (curl multi) and stores each reply in out[i]. */
int http_parallel(int n, const char *path, const char *const *headers, const char *body,
    struct http_resp *out);

/* The same with bodies[i] for request i (strings kept by the caller until it returns). */
int http_parallel_each(int n, const char *path, const char *const *headers,
    const char *const *bodies, struct http_resp *out);

/* One request of a batch: method, path, extra header lines (NULL-terminated or NULL), body. */
struct http_req {
	const char *method;
	const char *path;
	const char *const *headers;
	const char *body;           /* NULL: none */
};

/*
 * Sends the n requests at once (curl multi), each reply into out[i]; while they run, calls
 * during(arg) every 50 ms or so (during NULL: never). Returns 0, or -1 when a request could
 * not be set up. http_parallel and http_parallel_each are this with one path and method POST.
 */
int http_parallel_reqs(int n, const struct http_req *reqs, struct http_resp *out,
    void (*during)(void *), void *arg);

/* The value of response header name (case-insensitive), copied into buf; NULL if absent. */
const char *http_header(const struct http_resp *r, const char *name, char *buf, size_t buflen);

/* A string member of the JSON body, or NULL. */
const char *http_json_str(const struct http_resp *r, const char *key);

void http_free(struct http_resp *r);

#endif
