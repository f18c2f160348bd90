#ifndef MP_REQ_H
#define MP_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

#include "err.h"
#include "jtext.h"

#define REQ_MAX_HEADERS 8

/* Content-Length as the request gave it. */
enum req_length {
	REQ_LENGTH_OK = 0,   /* given and read into body */
	REQ_LENGTH_NONE,     /* absent */
	REQ_LENGTH_BAD,      /* not a decimal number */
	REQ_LENGTH_TOOBIG,   /* over max_body_bytes: body not read */
	REQ_LENGTH_SHORT,    /* the body ended before Content-Length bytes */
	REQ_LENGTH__MAX
};

struct req_header {
	char *name;
	char *value;
};

/*
 * Where a streamed response goes (set by fcgi.c; all NULL where nothing can stream): its
 * head (status and headers, without Content-Length), then its body piece by piece. Both
 * return 0, or -1 when the client is gone.
 */
struct req;
struct req_sink {
	void *ctx;
	int (*head)(void *ctx, const struct req *req);
	int (*write)(void *ctx, const char *buf, size_t len);
};

/*
 * One request and its response. Everything here is owned by the struct and released by
 * req_free; the request side is a copy of the FastCGI environment, never pointers into it.
 */
struct req {
	/* request */
	char *method;
	char *path;            /* without the query string */
	char *query;
	char *content_type;    /* NULL when absent */
	char *authorization;   /* NULL when absent */
	char *idempotency_key; /* NULL when absent */
	char *accept;          /* NULL when absent */
	char *accept_language; /* NULL when absent */
	char *request_id;      /* from nginx's $request_id, or generated */
	enum req_length length;
	char *body;            /* NUL-terminated; body_len excludes the NUL */
	size_t body_len;
	struct timespec start;
	bool metrics_allowed;  /* nginx's metrics location sent MARKETPAY_METRICS=1 */

	/* set by routing and auth */
	char param[80];        /* the path's parameter; "" = none, or too long for any id */
	size_t route;          /* 1 + the route's index in the table; 0 = none matched */
	int64_t merchant_id;   /* 0 = not authenticated */
	char merchant[24];     /* merchant_id in decimal, for SQL parameters ("" = none) */
	bool keep_on_refusal;  /* a refusal's writes (PIN attempts) commit: see idem_end */
	bool secret_reply;     /* the reply shows a secret: kept for an Idempotency-Key only
	                        * sealed (idem_end), wiped by req_free */
	char *merchant_currency;
	/*
	 * The API key's digest ("\\x" and 64 hex digits; "" before auth). With auth_deferred
	 * the key has only been checked for its form: the handler's own statement looks it up
	 * (create-session, GET of a session), or with an Idempotency-Key the statements of the
	 * key's lock (idem_begin), and a refusal before that settles it first (auth_settle),
	 * so a bad key still answers 401 before anything else. deny: the 401's detail.
	 */
	char key_digest[68];
	bool auth_deferred;
	const char *deny;
	bool key_note_held;    /* the key's last-use note was written in the request's
	                        * transaction (idem_begin): a refusal's rollback takes it back,
	                        * so idem_end notes it again (auth_note_again) */

	/* response */
	int status;
	char *content_type_out;
	char *resp;
	size_t resp_len;
	struct req_header headers[REQ_MAX_HEADERS];
	size_t nheaders;
	struct req_sink sink;
	bool streamed;         /* the head is written: the body went to sink as it came */
	bool cut;              /* the streamed body failed: cut the connection, do not end it */
};

/* Releases everything req owns, and req itself (NULL is fine). */
void req_free(struct req *req);

/* Sets the response to a copy of len bytes; returns 0 or -1 on ENOMEM (then a bare 500). */
int req_reply(struct req *req, int status, const char *content_type, const char *body,
    size_t len);

/* Sets the response to obj serialized (obj stays the caller's). 0 or -1 on ENOMEM. */
int req_reply_json(struct req *req, int status, struct json_object *obj);

/*
 * A 200 of the JSON text in t, which becomes the response without a copy: t is left empty,
 * whatever the outcome. -1 when t failed (its text is then freed, wiped first when
 * req->secret_reply).
 */
int req_reply_text(struct req *req, struct jtext *t);

/* The error body of every refusal but 401: {"success": false, "message": ...}. */
void req_fail(struct req *req, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The error body for e: its status and default message (err.h). */
void req_fail_err(struct req *req, enum err e);

/* The 401 body: {"detail": ...}. */
void req_deny(struct req *req, const char *detail);

/*
 * Starts a streamed response: writes status, content_type and the headers added so far to
 * req's sink at once; the body follows with req_stream_write, and nothing is buffered here.
 * Returns 0, or -1 (no sink, ENOMEM, the client gone). After a failure past this point the
 * status cannot change: the body is cut (req_stream_cut).
 */
int req_stream_begin(struct req *req, int status, const char *content_type);

/* The next len bytes of a streamed body. 0, or -1 when the client is gone. */
int req_stream_write(struct req *req, const char *buf, size_t len);

/*
 * A streamed body that cannot be finished: instead of ending it, the request's connection
 * is cut after what was written, so that the client sees the transfer fail (over HTTP/1.1,
 * a chunked body without its last chunk) rather than a shorter body that looks whole.
 */
void req_stream_cut(struct req *req);

/* Adds a response header (copied); returns 0 or -1 when full or on ENOMEM. */
int req_add_header(struct req *req, const char *name, const char *value);

/* The value of a response header already added, or NULL. */
const char *req_header_out(const struct req *req, const char *name);

#endif
