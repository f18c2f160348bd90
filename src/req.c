#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "crypto.h"
#include "err.h"
#include "json.h"
#include "req.h"

/* Frees the response body, wiped first when it shows a secret. */
static void
drop_resp(struct req *req)
{
	if (req->secret_reply && req->resp != NULL)
		crypto_wipe(req->resp, req->resp_len);
	free(req->resp);
	req->resp = NULL;
	req->resp_len = 0;
}

void
req_free(struct req *req)
{
	size_t i;

	if (req == NULL)
		return;
	free(req->method);
	free(req->path);
	free(req->query);
	free(req->content_type);
	free(req->authorization);
	free(req->idempotency_key);
	free(req->accept);
	free(req->accept_language);
	free(req->request_id);
	free(req->body);
	free(req->merchant_currency);
	free(req->content_type_out);
	drop_resp(req);
	for (i = 0; i < req->nheaders; i++) {
		free(req->headers[i].name);
		free(req->headers[i].value);
	}
	free(req);
}

int
req_reply(struct req *req, int status, const char *content_type, const char *body, size_t len)
{
	char *copy = malloc(len + 1), *ct = strdup(content_type);

	if (copy == NULL || ct == NULL) {
		free(copy);
		free(ct);
		req->status = 500;
		return -1;
	}
	memcpy(copy, body, len);
	copy[len] = '\0';
	drop_resp(req);
	free(req->content_type_out);
	req->resp = copy;
	req->resp_len = len;
	req->content_type_out = ct;
	req->status = status;
	return 0;
}

int
req_reply_json(struct req *req, int status, struct json_object *obj)
{
	const char *text = json_text(obj);

	if (text == NULL) {
		req->status = 500;
		return -1;
	}
	return req_reply(req, status, "application/json", text, strlen(text));
}

int
req_reply_text(struct req *req, struct jtext *t)
{
	char *ct = t->failed ? NULL : strdup("application/json");

	if (ct == NULL) {
		if (req->secret_reply && t->s != NULL)
			crypto_wipe(t->s, t->cap);
		jtext_free(t);
		req->status = 500;
		return -1;
	}
	drop_resp(req);
	free(req->content_type_out);
	req->resp = t->s;
	req->resp_len = t->len;
	req->content_type_out = ct;
	req->status = 200;
	memset(t, 0, sizeof(*t));
	return 0;
}

static void
reply_one(struct req *req, int status, const char *key, struct json_object *extra,
    const char *text)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL || (extra != NULL && json_add(o, "success", extra) != 0) ||
	    json_add(o, key, json_object_new_string(text)) != 0 ||
	    req_reply_json(req, status, o) != 0)
		req->status = 500;
	json_object_put(o);
}

/*
 * Drops a UTF-8 sequence cut short at the end of s. A message snprintf truncated (here or in
 * a handler's buffer) can end inside a character taken from the request, and the reply
 * would then not be valid UTF-8, which strict JSON clients refuse.
 */
static void
trim_partial_utf8(char *s)
{
	size_t n = strlen(s), i = n, need;
	unsigned char lead;

	while (i > 0 && n - i < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
		i--;
	if (i == 0 || ((lead = (unsigned char)s[i - 1]) & 0xC0) != 0xC0)
		return;
	need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
	if (n - (i - 1) < need)
		s[i - 1] = '\0';
}

void
req_fail(struct req *req, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	trim_partial_utf8(msg);
	reply_one(req, status, "message", json_object_new_boolean(0), msg);
}

void
req_fail_err(struct req *req, enum err e)
{
	if (e == ERR_AUTH)
		req_deny(req, err_message(e));
	else
		req_fail(req, err_http_status(e), "%s", err_message(e));
	/* Nothing was done, and the next worker may well have the database again. */
	if (e == ERR_UNAVAILABLE)
		req_add_header(req, "Retry-After", "1");
}

void
req_deny(struct req *req, const char *detail)
{
	reply_one(req, 401, "detail", NULL, detail);
}

int
req_stream_begin(struct req *req, int status, const char *content_type)
{
	char *ct;

	if (req->sink.head == NULL || req->streamed || (ct = strdup(content_type)) == NULL)
		return -1;
	free(req->content_type_out);
	req->content_type_out = ct;
	req->status = status;
	req->streamed = true;
	return req->sink.head(req->sink.ctx, req);
}

int
req_stream_write(struct req *req, const char *buf, size_t len)
{
	return req->streamed ? req->sink.write(req->sink.ctx, buf, len) : -1;
}

void
req_stream_cut(struct req *req)
{
	if (req->streamed)
		req->cut = true;
}

int
req_add_header(struct req *req, const char *name, const char *value)
{
	struct req_header *h;

	if (req->nheaders == REQ_MAX_HEADERS)
		return -1;
	h = &req->headers[req->nheaders];
	h->name = strdup(name);
	h->value = strdup(value);
	if (h->name == NULL || h->value == NULL) {
		free(h->name);
		free(h->value);
		h->name = h->value = NULL;
		return -1;
	}
	req->nheaders++;
	return 0;
}

const char *
req_header_out(const struct req *req, const char *name)
{
	size_t i;

	for (i = 0; i < req->nheaders; i++)
		if (strcasecmp(req->headers[i].name, name) == 0)
			return req->headers[i].value;
	return NULL;
}
