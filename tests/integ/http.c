#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>

#include "http.h"

struct buf {
	char *p;
	size_t n;
};

static size_t
collect(char *data, size_t size, size_t nmemb, void *user)
{
	struct buf *b = user;
	size_t n = size * nmemb;
	char *p = realloc(b->p, b->n + n + 1);

	if (p == NULL)
		return 0;
	memcpy(p + b->n, data, n);
	b->n += n;
	p[b->n] = '\0';
	b->p = p;
	return n;
}

struct xfer {
	CURL *c;
	struct curl_slist *hdrs;
	struct buf body, head;
	char url[2048];
	/* The request as the caller gave it (kept by the caller until xfer_done), to record. */
	const char *method, *path, *req_body;
	const char *const *req_headers;
	long req_len;
	CURLcode result;
};

/* A string member of o, n bytes (they may hold NUL or bytes that are not UTF-8). */
static void
put_str(struct json_object *o, const char *key, const char *s, size_t n)
{
	json_object_object_add(o, key, s == NULL ? NULL : json_object_new_string_len(s, (int)n));
}

/* The value of header line name in a NULL-terminated list of "Name: value" lines, or NULL. */
static const char *
req_header(const char *const *lines, const char *name)
{
	size_t n = strlen(name);

	for (; lines != NULL && *lines != NULL; lines++)
		if (strncasecmp(*lines, name, n) == 0 && (*lines)[n] == ':')
			return *lines + n + 1 + strspn(*lines + n + 1, " \t");
	return NULL;
}

/*
 * When $MP_HTTP_RECORD names a file, appends the exchange to it as one JSON line: method,
 * path, the request's Content-Type and body, the response's status, headers (names in lower
 * case; the last of a repeated name) and body. tests/openapi/validate.mjs checks them against
 * doc/openapi.yaml. One write(2) with O_APPEND per line: the suites' forked cases share it.
 */
static void
record(const struct xfer *x, long status)
{
	const char *file = getenv("MP_HTTP_RECORD"), *line, *colon;
	struct json_object *o, *h;
	const char *text;
	size_t len;
	int fd;

	if (file == NULL || *file == '\0' || (o = json_object_new_object()) == NULL)
		return;
	put_str(o, "method", x->method, strlen(x->method));
	put_str(o, "path", x->path, strlen(x->path));
	line = req_header(x->req_headers, "Content-Type");
	put_str(o, "request_content_type", line, line ? strlen(line) : 0);
	put_str(o, "request_body", x->req_body,
	    x->req_body == NULL ? 0 : x->req_len < 0 ? strlen(x->req_body) : (size_t)x->req_len);
	json_object_object_add(o, "status", json_object_new_int64(status));
	h = json_object_new_object();
	/* Only the last response's headers (a 100 Continue or a redirect is not followed). */
	for (line = x->head.p; line != NULL && *line != '\0'; line += len + (line[len] != '\0')) {
		char name[128];
		size_t i, n;

		len = strcspn(line, "\n");
		if (strncmp(line, "HTTP/", 5) == 0) {
			json_object_put(h);
			h = json_object_new_object();
			continue;
		}
		if ((colon = memchr(line, ':', len)) == NULL || (n = (size_t)(colon - line)) >= sizeof(name))
			continue;
		for (i = 0; i < n; i++)
			name[i] = (char)(line[i] >= 'A' && line[i] <= 'Z' ? line[i] + 32 : line[i]);
		name[n] = '\0';
		colon += 1 + strspn(colon + 1, " \t");
		put_str(h, name, colon, strcspn(colon, "\r\n"));
	}
	json_object_object_add(o, "headers", h);
	put_str(o, "body", x->body.p ? x->body.p : "", x->body.n);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if ((fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) >= 0) {
		char *l = malloc(strlen(text) + 2);

		if (l != NULL) {
			len = strlen(text);
			memcpy(l, text, len);
			l[len++] = '\n';
			if (write(fd, l, len) != (ssize_t)len)
				fprintf(stderr, "http: could not record an exchange in %s\n", file);
			free(l);
		}
		close(fd);
	}
	json_object_put(o);
}

static int
xfer_setup(struct xfer *x, const char *method, const char *path, const char *const *headers,
    const char *body, long len)
{
	const char *base = getenv("MARKETPAY_BASE_URL");
	size_t i;

	memset(x, 0, sizeof(*x));
	x->method = method;
	x->path = path;
	x->req_headers = headers;
	x->req_body = body;
	x->req_len = len;
	if (base == NULL || (x->c = curl_easy_init()) == NULL)
		return -1;
	snprintf(x->url, sizeof(x->url), "%s%s", base, path);
	curl_easy_setopt(x->c, CURLOPT_URL, x->url);
	curl_easy_setopt(x->c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(x->c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(x->c, CURLOPT_WRITEDATA, &x->body);
	curl_easy_setopt(x->c, CURLOPT_HEADERFUNCTION, collect);
	curl_easy_setopt(x->c, CURLOPT_HEADERDATA, &x->head);
	curl_easy_setopt(x->c, CURLOPT_TIMEOUT, 30L);
	/* No "Expect: 100-continue" pause on large bodies; every other header is ours. */
	x->hdrs = curl_slist_append(NULL, "Expect:");
	for (i = 0; headers != NULL && headers[i] != NULL; i++)
		x->hdrs = curl_slist_append(x->hdrs, headers[i]);
	curl_easy_setopt(x->c, CURLOPT_HTTPHEADER, x->hdrs);
	if (body != NULL) {
		curl_easy_setopt(x->c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(x->c, CURLOPT_POSTFIELDSIZE, len < 0 ? (long)strlen(body) : len);
	} else if (strcmp(method, "GET") == 0)
		curl_easy_setopt(x->c, CURLOPT_HTTPGET, 1L);
	return 0;
}

static void
xfer_done(struct xfer *x, struct http_resp *out)
{
	memset(out, 0, sizeof(*out));
	curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &out->status);
	out->body = x->body.p ? x->body.p : strdup("");
	out->len = x->body.n;
	out->headers = x->head.p ? x->head.p : strdup("");
	out->json = json_tokener_parse(out->body);
	out->result = (int)x->result;
	record(x, out->status);
	curl_slist_free_all(x->hdrs);
	curl_easy_cleanup(x->c);
}

int
http_do(const char *method, const char *path, const char *const *headers, const char *body,
    long len, struct http_resp *out)
{
	struct xfer x;
	CURLcode rc;

	if (xfer_setup(&x, method, path, headers, body, len) != 0)
		return -1;
	rc = x.result = curl_easy_perform(x.c);
	xfer_done(&x, out);
	return rc == CURLE_OK ? 0 : -1;
}

int
http_parallel(int n, const char *path, const char *const *headers, const char *body,
    struct http_resp *out)
{
	const char **bodies = calloc((size_t)n, sizeof(*bodies));
	int i, rc;

	if (bodies == NULL)
		return -1;
	for (i = 0; i < n; i++)
		bodies[i] = body;
	rc = http_parallel_each(n, path, headers, bodies, out);
	free(bodies);
	return rc;
}

int
http_parallel_each(int n, const char *path, const char *const *headers,
    const char *const *bodies, struct http_resp *out)
{
	struct http_req *q = calloc((size_t)n, sizeof(*q));
	int i, rc;

	if (q == NULL)
		return -1;
	for (i = 0; i < n; i++)
		q[i] = (struct http_req){ "POST", path, headers, bodies[i] };
	rc = http_parallel_reqs(n, q, out, NULL, NULL);
	free(q);
	return rc;
}

int
http_parallel_reqs(int n, const struct http_req *reqs, struct http_resp *out,
    void (*during)(void *), void *arg)
{
	struct xfer *x = calloc((size_t)n, sizeof(*x));
	CURLM *m = curl_multi_init();
	CURLMsg *msg;
	int i, running = 0, rc = 0, left;

	if (x == NULL || m == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (xfer_setup(&x[i], reqs[i].method, reqs[i].path, reqs[i].headers, reqs[i].body,
		    -1) != 0)
			rc = -1;
		else
			curl_multi_add_handle(m, x[i].c);
	}
	do {
		curl_multi_perform(m, &running);
		if (running)
			curl_multi_poll(m, NULL, 0, during != NULL ? 50 : 1000, NULL);
		if (during != NULL)
			during(arg);
	} while (running);
	while ((msg = curl_multi_info_read(m, &left)) != NULL)
		for (i = 0; i < n; i++)
			if (msg->msg == CURLMSG_DONE && msg->easy_handle == x[i].c)
				x[i].result = msg->data.result;
	for (i = 0; i < n; i++) {
		curl_multi_remove_handle(m, x[i].c);
		xfer_done(&x[i], &out[i]);
	}
	curl_multi_cleanup(m);
	free(x);
	return rc;
}

const char *
http_header(const struct http_resp *r, const char *name, char *buf, size_t buflen)
{
	size_t n = strlen(name);
	const char *line = r->headers;

	while (line != NULL && *line != '\0') {
		if (strncasecmp(line, name, n) == 0 && line[n] == ':') {
			const char *v = line + n + 1;
			size_t len;

			v += strspn(v, " \t");
			len = strcspn(v, "\r\n");
			if (len >= buflen)
				len = buflen - 1;
			memcpy(buf, v, len);
			buf[len] = '\0';
			return buf;
		}
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	return NULL;
}

const char *
http_json_str(const struct http_resp *r, const char *key)
{
	struct json_object *v;

	if (r->json == NULL || !json_object_object_get_ex(r->json, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

void
http_free(struct http_resp *r)
{
	free(r->body);
	free(r->headers);
	json_object_put(r->json);
	memset(r, 0, sizeof(*r));
}
