/* One kept-alive HTTP connection per load thread, with libcurl's easy interface. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "client.h"

static size_t
on_body(char *data, size_t size, size_t nmemb, void *user)
{
	struct client *c = user;
	size_t n = size * nmemb, cap;
	char *p;

	if (c->len + n + 1 > c->cap) {
		cap = c->cap ? c->cap : 8192;
		while (cap < c->len + n + 1)
			cap *= 2;
		if ((p = realloc(c->body, cap)) == NULL)
			return 0;   /* libcurl fails the transfer: counted as no answer */
		c->body = p;
		c->cap = cap;
	}
	memcpy(c->body + c->len, data, n);
	c->len += n;
	c->body[c->len] = '\0';
	return n;
}

/* Copies the value of header line "Name: value\r\n" into out when it is name. */
static void
header_value(const char *line, size_t n, const char *name, char *out, size_t outlen)
{
	size_t k = strlen(name), len;
	const char *v;

	if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
		return;
	v = line + k + 1;
	while (v < line + n && (*v == ' ' || *v == '\t'))
		v++;
	len = (size_t)(line + n - v);
	while (len > 0 && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' '))
		len--;
	if (len >= outlen)
		len = outlen - 1;
	memcpy(out, v, len);
	out[len] = '\0';
}

static size_t
on_header(char *data, size_t size, size_t nmemb, void *user)
{
	struct client *c = user;
	size_t n = size * nmemb;
	char v[16] = "";

	/* A status line starts a new header block (after a 100 Continue, say): forget the last. */
	if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		c->request_id[0] = c->location[0] = '\0';
		c->replayed = 0;
	}
	header_value(data, n, "Request-Id", c->request_id, sizeof(c->request_id));
	header_value(data, n, "Location", c->location, sizeof(c->location));
	header_value(data, n, "Idempotent-Replayed", v, sizeof(v));
	if (strcasecmp(v, "true") == 0)
		c->replayed = 1;
	return n;
}

struct client *
client_new(const char *base, long timeout_s)
{
	struct client *c = calloc(1, sizeof(*c));

	if (c == NULL || (c->body = malloc(8192)) == NULL || (c->c = curl_easy_init()) == NULL) {
		if (c != NULL)
			free(c->body);
		free(c);
		return NULL;
	}
	c->cap = 8192;
	c->body[0] = '\0';
	c->owed_us = c->lag_us = -1;
	snprintf(c->base, sizeof(c->base), "%s", base);
	curl_easy_setopt(c->c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->c, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(c->c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c->c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->c, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->c, CURLOPT_HEADERDATA, c);
	return c;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
client_do(struct client *c, const char *method, const char *path,
    const char *const *headers, const char *body)
{
	struct curl_slist *h, *t;
	struct timespec a, b;
	char url[2048];
	CURLcode rc;
	size_t i;

	snprintf(url, sizeof(url), "%s%s", c->base, path);
	/* No "Expect: 100-continue" pause; every other header is the caller's. */
	h = curl_slist_append(NULL, "Expect:");
	for (i = 0; h != NULL && headers != NULL && headers[i] != NULL; i++) {
		if ((t = curl_slist_append(h, headers[i])) == NULL)
			break;
		h = t;
	}
	curl_easy_setopt(c->c, CURLOPT_URL, url);
	curl_easy_setopt(c->c, CURLOPT_HTTPHEADER, h);
	if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(c->c, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(c->c, CURLOPT_POSTFIELDSIZE, (long)(body ? strlen(body) : 0));
	} else
		curl_easy_setopt(c->c, CURLOPT_HTTPGET, 1L);
	c->len = 0;
	c->body[0] = '\0';
	c->status = 0;
	c->request_id[0] = c->location[0] = c->error[0] = '\0';
	c->replayed = 0;
	c->lag_us = c->owed_us;
	c->owed_us = -1;
	c->start_ms = now_ms();
	clock_gettime(CLOCK_MONOTONIC, &a);
	rc = curl_easy_perform(c->c);
	clock_gettime(CLOCK_MONOTONIC, &b);
	c->lat_us = (uint64_t)((b.tv_sec - a.tv_sec) * 1000000LL + (b.tv_nsec - a.tv_nsec) / 1000);
	/* Open loop: counted from when it was due, so a stall that delayed it is not hidden. */
	if (c->lag_us > 0) {
		c->lat_us += (uint64_t)c->lag_us;
		c->start_ms -= c->lag_us / 1000;
	}
	curl_easy_setopt(c->c, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	if (rc != CURLE_OK) {
		snprintf(c->error, sizeof(c->error), "curl:%d", (int)rc);
		return -1;
	}
	curl_easy_getinfo(c->c, CURLINFO_RESPONSE_CODE, &c->status);
	return 0;
}

void
client_free(struct client *c)
{
	if (c == NULL)
		return;
	curl_easy_cleanup(c->c);
	free(c->body);
	free(c);
}
