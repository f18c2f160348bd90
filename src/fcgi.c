/* The only file that includes fcgiapp.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "crypto.h"
#include "err.h"
#include "fcgi.h"

struct fcgi {
	FCGX_Request r;
	int accepted;
	int ep;			/* epoll on the listening socket: the wait for a connection */
};

struct fcgi *
fcgi_new(void)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE };
	struct fcgi *f;
	int fl;

	/* Started from a shell rather than by spawn-fcgi, stdin is no listening socket. */
	if (FCGX_Init() != 0 || FCGX_IsCGI())
		return NULL;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	/*
	 * The worker never blocks in libfcgi's accept: the listening socket is made
	 * non-blocking (for every worker sharing it: they all run this), and the wait for a
	 * connection is epoll_pwait, where fcgi_accept lets signals in. EPOLLEXCLUSIVE wakes one
	 * idle worker per connection, as a blocking accept does, not all of them.
	 */
	f->ep = -1;
	if (FCGX_InitRequest(&f->r, 0, 0) != 0 || (fl = fcntl(0, F_GETFL)) < 0 ||
	    fcntl(0, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    (f->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(f->ep, EPOLL_CTL_ADD, 0, &ev) != 0) {
		fcgi_free(f);
		return NULL;
	}
	return f;
}

void
fcgi_free(struct fcgi *f)
{
	if (f == NULL)
		return;
	FCGX_Free(&f->r, 1);
	if (f->ep >= 0)
		close(f->ep);
	free(f);
}

/*
 * Signals stay blocked in libfcgi: a signal there can cut the wait for a new connection's
 * first bytes (it then drops the connection, and nginx answers 502), and once its shutdown
 * flag is set, it loops for ever on the connection it closed. So nothing here asks libfcgi
 * to shut down: the caller's handler sets its own flag, which a signal in epoll_pwait lets
 * it see.
 */
int
fcgi_accept(struct fcgi *f, const sigset_t *waitmask)
{
	struct epoll_event ev;
	int rc;

	for (;;) {
		/* A connection already queued is taken without waiting: a busy worker's case. */
		if ((rc = FCGX_Accept_r(&f->r)) == 0) {
			f->accepted = 1;
			return 1;
		}
		if (rc != -EAGAIN && rc != -EWOULDBLOCK)
			return -1;
		if (epoll_pwait(f->ep, &ev, 1, -1, waitmask) < 0)
			return errno == EINTR ? 0 : -1;
	}
}

/* The parameters a request is read from, found in one pass over what the server sent. */
enum param {
	P_METHOD, P_DOCUMENT_URI, P_SCRIPT_NAME, P_QUERY, P_CONTENT_TYPE, P_CONTENT_LENGTH,
	P_AUTHORIZATION, P_IDEMPOTENCY_KEY, P_ACCEPT, P_ACCEPT_LANGUAGE, P_METRICS,
	P_REQUEST_ID, P__MAX
};

static const struct {
	const char *name;
	size_t len;
} param_names[P__MAX] = {
#define NAME(s) { s, sizeof(s) - 1 }
	[P_METHOD] = NAME("REQUEST_METHOD"),
	[P_DOCUMENT_URI] = NAME("DOCUMENT_URI"),
	[P_SCRIPT_NAME] = NAME("SCRIPT_NAME"),
	[P_QUERY] = NAME("QUERY_STRING"),
	[P_CONTENT_TYPE] = NAME("CONTENT_TYPE"),
	[P_CONTENT_LENGTH] = NAME("CONTENT_LENGTH"),
	[P_AUTHORIZATION] = NAME("HTTP_AUTHORIZATION"),
	[P_IDEMPOTENCY_KEY] = NAME("HTTP_IDEMPOTENCY_KEY"),
	[P_ACCEPT] = NAME("HTTP_ACCEPT"),
	[P_ACCEPT_LANGUAGE] = NAME("HTTP_ACCEPT_LANGUAGE"),
	/* Set by the server's configuration only: a client's headers arrive as HTTP_*. */
	[P_METRICS] = NAME("MARKETPAY_METRICS"),
	[P_REQUEST_ID] = NAME("REQUEST_ID"),
#undef NAME
};

/* v[i]: the value of param_names[i], the first one sent (as FCGX_GetParam finds), or NULL. */
static void
params(char **envp, const char *v[P__MAX])
{
	size_t i, n;
	const char *eq;

	memset(v, 0, P__MAX * sizeof(*v));
	for (; envp != NULL && *envp != NULL; envp++) {
		if ((eq = strchr(*envp, '=')) == NULL)
			continue;
		n = (size_t)(eq - *envp);
		for (i = 0; i < P__MAX; i++)
			if (v[i] == NULL && param_names[i].len == n &&
			    memcmp(*envp, param_names[i].name, n) == 0) {
				v[i] = eq + 1;
				break;
			}
	}
}

static char *
dup_or_null(const char *v)
{
	return v == NULL ? NULL : strdup(v);
}

static int
read_body(struct fcgi *f, struct req *req, const char *cl, long max_body)
{
	char *end = NULL;
	long n;
	int got;

	if (cl == NULL || cl[0] == '\0') {
		req->length = REQ_LENGTH_NONE;
		return 0;
	}
	errno = 0;
	n = strtol(cl, &end, 10);
	if (errno != 0 || *end != '\0' || n < 0 || cl[0] < '0' || cl[0] > '9') {
		req->length = REQ_LENGTH_BAD;
		return 0;
	}
	if (n > max_body) {
		req->length = REQ_LENGTH_TOOBIG;
		return 0;
	}
	if ((req->body = malloc((size_t)n + 1)) == NULL)
		return -1;
	got = n > 0 ? FCGX_GetStr(req->body, (int)n, f->r.in) : 0;
	req->body[got < 0 ? 0 : got] = '\0';
	req->body_len = got < 0 ? 0 : (size_t)got;
	req->length = (long)req->body_len == n ? REQ_LENGTH_OK : REQ_LENGTH_SHORT;
	return 0;
}

static char *
new_request_id(void)
{
	unsigned char raw[16];
	char *hex = malloc(33);

	if (hex == NULL || crypto_random(raw, sizeof(raw)) != 0) {
		free(hex);
		return NULL;
	}
	crypto_hex(raw, sizeof(raw), hex);
	return hex;
}

static int stream_head(void *ctx, const struct req *req);
static int stream_write(void *ctx, const char *buf, size_t len);

struct req *
fcgi_read(struct fcgi *f, long max_body)
{
	struct req *req = calloc(1, sizeof(*req));
	const char *v[P__MAX], *uri, *rid;

	if (req == NULL)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &req->start);
	params(f->r.envp, v);
	req->method = dup_or_null(v[P_METHOD]);
	/* DOCUMENT_URI is nginx's normalised path; REQUEST_URI is the raw one with the query. */
	uri = v[P_DOCUMENT_URI] != NULL ? v[P_DOCUMENT_URI] : v[P_SCRIPT_NAME];
	req->path = strdup(uri != NULL ? uri : "/");
	req->query = strdup(v[P_QUERY] != NULL ? v[P_QUERY] : "");
	req->content_type = dup_or_null(v[P_CONTENT_TYPE]);
	req->authorization = dup_or_null(v[P_AUTHORIZATION]);
	req->idempotency_key = dup_or_null(v[P_IDEMPOTENCY_KEY]);
	req->accept = dup_or_null(v[P_ACCEPT]);
	req->accept_language = dup_or_null(v[P_ACCEPT_LANGUAGE]);
	req->metrics_allowed = v[P_METRICS] != NULL && strcmp(v[P_METRICS], "1") == 0;
	rid = v[P_REQUEST_ID];
	req->request_id = rid != NULL && rid[0] != '\0' && strlen(rid) <= 64 &&
	    strspn(rid, "0123456789abcdefABCDEF-") == strlen(rid) ? strdup(rid) : new_request_id();
	if (req->method == NULL)
		req->method = strdup("GET");
	if (req->method == NULL || req->path == NULL || req->query == NULL ||
	    req->request_id == NULL || read_body(f, req, v[P_CONTENT_LENGTH], max_body) != 0) {
		req_free(req);
		return NULL;
	}
	req->sink.ctx = f;
	req->sink.head = stream_head;
	req->sink.write = stream_write;
	return req;
}

/*
 * The status line and headers are gathered here and handed to libfcgi at once: one copy per
 * header, not a formatted string and a call into libfcgi for each.
 */
struct head {
	struct fcgi *f;
	size_t len;
	char buf[8192];
};

#define HEAD_LINE_MAX 4096	/* a header line this long or longer is left out */

/* 0, or -1 when libfcgi could not take what was gathered. */
static int
head_flush(struct head *h)
{
	int n = (int)h->len;

	h->len = 0;
	return n == 0 || FCGX_PutStr(h->buf, n, h->f->r.out) == n ? 0 : -1;
}

/* True when n more bytes fit, after handing libfcgi what was gathered if need be. */
static bool
room_for(struct head *h, size_t n)
{
	return h->len + n <= sizeof(h->buf) || head_flush(h) == 0;
}

static void
put_bytes(struct head *h, const char *p, size_t n)
{
	memcpy(h->buf + h->len, p, n);
	h->len += n;
}

static void
put(struct head *h, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);

	if (nl + 2 + vl + 2 >= HEAD_LINE_MAX)
		return;
	if (!room_for(h, nl + 2 + vl + 2))
		return;
	put_bytes(h, name, nl);
	put_bytes(h, ": ", 2);
	put_bytes(h, value, vl);
	put_bytes(h, "\r\n", 2);
}

/* Status and headers; Content-Length only when the body is known (not streamed). */
static int
put_head(struct fcgi *f, const struct req *req)
{
	struct head h;	/* not initialised as a whole: its buffer is only written */
	char num[64];
	int status = req->status ? req->status : 500;
	size_t i;

	h.f = f;
	h.len = 0;
	snprintf(num, sizeof(num), "%d %s", status, err_reason(status));
	put(&h, "Status", num);
	put(&h, "Request-Id", req->request_id ? req->request_id : "-");
	for (i = 0; i < req->nheaders; i++)
		put(&h, req->headers[i].name, req->headers[i].value);
	/*
	 * Every reply, API and page alike, unless its handler said otherwise: not kept by any
	 * cache (replies carry sessions and balances), not read as another type than it says.
	 */
	if (req_header_out(req, "Cache-Control") == NULL)
		put(&h, "Cache-Control", "no-store");
	if (req_header_out(req, "X-Content-Type-Options") == NULL)
		put(&h, "X-Content-Type-Options", "nosniff");
	if (req->content_type_out != NULL && (req->resp != NULL || req->streamed))
		put(&h, "Content-Type", req->content_type_out);
	if (!req->streamed) {
		snprintf(num, sizeof(num), "%zu", req->resp != NULL ? req->resp_len : 0);
		put(&h, "Content-Length", num);
	}
	if (!room_for(&h, 2))
		return -1;
	put_bytes(&h, "\r\n", 2);
	return head_flush(&h);
}

static int
stream_head(void *ctx, const struct req *req)
{
	struct fcgi *f = ctx;

	return f->accepted ? put_head(f, req) : -1;
}

static int
stream_write(void *ctx, const char *buf, size_t len)
{
	struct fcgi *f = ctx;

	while (len > 0) {
		int n = len > 65536 ? 65536 : (int)len;

		if (FCGX_PutStr(buf, n, f->r.out) != n)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* How long the end of a request may take to come once the response is written. */
#define END_WAIT_S 2

static int
read_timeout(int fd, int seconds)
{
	struct timeval tv = { .tv_sec = seconds };

	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

void
fcgi_finish(struct fcgi *f, const struct req *req)
{
	if (!f->accepted)
		return;
	if (!req->streamed) {
		put_head(f, req);
		if (req->resp != NULL)
			FCGX_PutStr(req->resp, (int)req->resp_len, f->r.out);
	}
	if (req->streamed && req->cut) {
		/* A header of FastCGI version 0: a record no server takes. */
		static const char bad[8] = { 0 };

		/*
		 * Cut, not ended. With fastcgi_keep_conn off nginx takes the connection's end for
		 * the response's end, so closing it would still end the client's body properly:
		 * what it cannot read makes it give up instead ("upstream sent unsupported
		 * FastCGI protocol version: 0") and close the client's connection without the
		 * chunked body's last chunk. What was written goes first. The shut socket then
		 * fails FCGX_Finish_r's END_REQUEST (EPIPE; SIGPIPE is ignored), so it closes the
		 * connection, and the next accept takes a new one.
		 */
		if (FCGX_FFlush(f->r.out) != 0 || write(f->r.ipcFd, bad, sizeof(bad)) !=
		    (ssize_t)sizeof(bad)) {
			/* nginx is gone already, and the client's connection with it. */
		}
		shutdown(f->r.ipcFd, SHUT_RDWR);
	}
	/*
	 * Once the request was read to its end (its body, then the server's empty FCGI_STDIN
	 * record), nothing more comes on the connection, and it is closed at once. Otherwise
	 * libfcgi shuts down its side and waits for the server to close first (up to 2 s),
	 * reading what is still sent, so a server never finds the connection gone while it
	 * writes a request: under load that wait put the worker to sleep, once per request,
	 * until nginx had run. A body left unread (too big, or cut short) keeps the wait.
	 * The end is almost always read already; a server that has not sent it within 2 s
	 * (nginx sends it with the request) gets the wait too, not a worker stuck for ever.
	 */
	if (!req->cut && (req->length == REQ_LENGTH_OK || req->length == REQ_LENGTH_NONE) &&
	    read_timeout(f->r.ipcFd, END_WAIT_S) == 0 && FCGX_GetChar(f->r.in) == EOF &&
	    FCGX_GetError(f->r.in) == 0)
		FCGX_Detach(&f->r);
	FCGX_Finish_r(&f->r);
	f->accepted = 0;
}
