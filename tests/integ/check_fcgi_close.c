/*
 * How a worker ends a FastCGI connection, seen from the server's side of the socket: the
 * tests speak FastCGI to the pool's socket (MARKETPAY_STACK_DIR/fcgi.sock) as nginx does,
 * with fastcgi_keep_conn off.
 *
 * - A request read to its end (its body and the empty FCGI_STDIN record) is closed at once:
 *   when the server reads the end of the response, the worker's socket is gone, and a
 *   write to it fails with EPIPE. (The worker used to shut down its side and then wait for
 *   the server to close first: a sleep per request under load.)
 * - A request whose body the worker left unread (over max_body_bytes) keeps that wait: the
 *   server may go on writing the body after the response ended, and the worker reads it.
 * - A server that never sends the request's end gets the response, and then the same wait,
 *   after 2 s: the worker does not wait for that end for ever.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>

#include "fixture.h"

enum { FCGI_BEGIN = 1, FCGI_END = 3, FCGI_PARAMS = 4, FCGI_STDIN = 5, FCGI_STDOUT = 6 };

static int
connect_pool(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *dir = getenv("MARKETPAY_STACK_DIR");
	int fd;

	ck_assert_ptr_nonnull(dir);
	ck_assert_int_lt(snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/fcgi.sock", dir),
	    (int)sizeof(sa.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* One record of type with len bytes of content (len < 65536), request id 1, no padding. */
static void
record(int fd, int type, const void *content, size_t len)
{
	unsigned char h[8] = { 1, (unsigned char)type, 0, 1, (unsigned char)(len >> 8),
		(unsigned char)len, 0, 0 };

	ck_assert_int_eq(write(fd, h, sizeof(h)), (ssize_t)sizeof(h));
	if (len > 0)
		ck_assert_int_eq(write(fd, content, len), (ssize_t)len);
}

/* BEGIN_REQUEST (responder, connection not kept), then the params, then their end. */
static void
begin(int fd, const char *const *params)
{
	static const unsigned char responder[8] = { 0, 1, 0 };
	unsigned char buf[4096];
	size_t n = 0;

	record(fd, FCGI_BEGIN, responder, sizeof(responder));
	for (; *params != NULL; params += 2) {
		size_t kl = strlen(params[0]), vl = strlen(params[1]);

		ck_assert(kl < 128 && vl < 65536 && n + 5 + kl + vl <= sizeof(buf));
		buf[n++] = (unsigned char)kl;
		if (vl < 128) {
			buf[n++] = (unsigned char)vl;
		} else { /* four bytes, the high bit set */
			buf[n++] = 0x80;
			buf[n++] = 0;
			buf[n++] = (unsigned char)(vl >> 8);
			buf[n++] = (unsigned char)vl;
		}
		memcpy(buf + n, params[0], kl);
		memcpy(buf + n + kl, params[1], vl);
		n += kl + vl;
	}
	record(fd, FCGI_PARAMS, buf, n);
	record(fd, FCGI_PARAMS, NULL, 0);
}

/* Reads the response to the end of the connection: its stdout into out, END_REQUEST seen. */
static void
response(int fd, char *out, size_t size)
{
	static unsigned char buf[1 << 16];
	size_t have = 0, used = 0, o = 0;
	int ended = 0;
	ssize_t r;

	while ((r = read(fd, buf + have, sizeof(buf) - have)) > 0)
		have += (size_t)r;
	ck_assert_int_eq(r, 0);
	while (used + 8 <= have) {
		size_t len = (size_t)buf[used + 4] << 8 | buf[used + 5], pad = buf[used + 6];

		ck_assert_uint_le(used + 8 + len + pad, have);
		if (buf[used + 1] == FCGI_STDOUT && o + len < size) {
			memcpy(out + o, buf + used + 8, len);
			o += len;
		}
		ended |= buf[used + 1] == FCGI_END;
		used += 8 + len + pad;
	}
	out[o] = '\0';
	ck_assert_msg(ended, "no FCGI_END_REQUEST before the connection's end");
}

START_TEST(test_read_to_end_closed_at_once)
{
	static const char *const get[] = { "REQUEST_METHOD", "GET", "DOCUMENT_URI",
		"/api/v1/no-such-endpoint", "QUERY_STRING", "", NULL };
	static const char body[] = "{}";
	static const char *const post[] = { "REQUEST_METHOD", "POST", "DOCUMENT_URI", CREATE,
		"QUERY_STRING", "", "CONTENT_TYPE", "application/json", "CONTENT_LENGTH", "2",
		NULL };
	char out[8192];
	int fd = connect_pool();

	/* _i 0: no body at all; 1: a body, read whole (the request is refused: no key). */
	begin(fd, _i == 0 ? get : post);
	if (_i == 1)
		record(fd, FCGI_STDIN, body, 2);
	record(fd, FCGI_STDIN, NULL, 0);
	response(fd, out, sizeof(out));
	ck_assert_msg(strstr(out, _i == 0 ? "Status: 404" : "Status: 401") != NULL, "%s", out);
	errno = 0;
	ck_assert_int_eq(send(fd, "x", 1, MSG_NOSIGNAL), -1);
	ck_assert_int_eq(errno, EPIPE);
	close(fd);
}
END_TEST

START_TEST(test_unread_body_waited_for)
{
	static char chunk[4096];
	char auth[200], out[8192];
	const char *const post[] = { "REQUEST_METHOD", "POST", "DOCUMENT_URI", CREATE,
		"QUERY_STRING", "", "CONTENT_TYPE", "application/json", "CONTENT_LENGTH",
		"100000000", "HTTP_AUTHORIZATION", auth, NULL };
	int fd = connect_pool();

	snprintf(auth, sizeof(auth), "API-KEY %s", fx.key_a);
	memset(chunk, ' ', sizeof(chunk));
	begin(fd, post);
	record(fd, FCGI_STDIN, chunk, sizeof(chunk));
	response(fd, out, sizeof(out));
	ck_assert_msg(strstr(out, "Status: 413") != NULL, "%s", out);
	/* The worker still reads: the rest of the body goes in after the response's end. */
	for (int i = 0; i < 8; i++) {
		unsigned char h[8] = { 1, FCGI_STDIN, 0, 1, sizeof(chunk) >> 8, 0, 0, 0 };

		ck_assert_int_eq(send(fd, h, sizeof(h), MSG_NOSIGNAL), (ssize_t)sizeof(h));
		ck_assert_int_eq(send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL),
		    (ssize_t)sizeof(chunk));
	}
	close(fd);
}
END_TEST

/* A server that never sends the request's end does not hold the worker for ever. */
START_TEST(test_end_never_sent)
{
	static const char *const get[] = { "REQUEST_METHOD", "GET", "DOCUMENT_URI",
		"/api/v1/no-such-endpoint", "QUERY_STRING", "", NULL };
	char out[8192];
	int fd = connect_pool();

	begin(fd, get);
	response(fd, out, sizeof(out));
	ck_assert_msg(strstr(out, "Status: 404") != NULL, "%s", out);
	close(fd);
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("fcgi close", "fcgi close", 30, &t);

	tcase_add_loop_test(t, test_read_to_end_closed_at_once, 0, 2);
	tcase_add_test(t, test_unread_body_waited_for);
	tcase_add_test(t, test_end_never_sent);
	return fixture_main(s, NULL, NULL);
}
