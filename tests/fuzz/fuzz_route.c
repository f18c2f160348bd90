/*
 * libFuzzer target: the request line as route_dispatch sees it, with the database away
 * (as during an outage) and no secrets key. The input is newline-separated fields
 *
 *	METHOD \n PATH \n QUERY_STRING \n CONTENT_TYPE \n AUTHORIZATION \n BODY
 *
 * (each FastCGI parameter ends at its first NUL; without the fifth newline there is no
 * body and no Content-Length). It covers the route table, path parameters (one segment),
 * valid_uuid on /checkout/{id}, 404/405 with Allow, the 503 paths and the pages they
 * render. No module parses QUERY_STRING yet: it rides along so that one that does is
 * covered from the start. Every reply must be well formed (fuzz_check_reply).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "route.h"
#include "valid.h"
#include "fuzz.h"

/* valid_uuid must mean exactly "36 characters: 8-4-4-4-12 hex digits". */
static void
check_session_id(const char *s)
{
	size_t i;
	bool want = strlen(s) == 36;

	for (i = 0; want && i < 36; i++)
		want = (i == 8 || i == 13 || i == 18 || i == 23) ? s[i] == '-' :
		    isxdigit((unsigned char)s[i]) != 0;
	FUZZ_ASSERT(valid_uuid(s) == want);
}

/* Five newlines: the fields are complete and what follows is the body. */
static bool
has_body(const uint8_t *data, size_t size)
{
	size_t i, n = 0;

	for (i = 0; i < size && n < 5; i++)
		n += data[i] == '\n';
	return n == 5;
}

static void
replace(char **member, char *value)
{
	free(*member);
	*member = value;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct req *req = fuzz_req();
	const uint8_t *p = data;
	size_t left = size;

	replace(&req->method, fuzz_field(&p, &left));
	replace(&req->path, fuzz_field(&p, &left));
	replace(&req->query, fuzz_field(&p, &left));
	req->content_type = fuzz_field(&p, &left);
	req->authorization = fuzz_field(&p, &left);
	/* As fcgi.c: with a Content-Length a NUL-terminated body (NULs inside are kept). */
	if (has_body(data, size)) {
		if ((req->body = malloc(left + 1)) == NULL)
			abort();
		memcpy(req->body, p, left);
		req->body[left] = '\0';
		req->body_len = left;
		req->length = REQ_LENGTH_OK;
	}
	check_session_id(req->path);
	route_dispatch(&fuzz_app, req);
	fuzz_check_reply(req);
	if (req->status == 405)
		FUZZ_ASSERT(req_header_out(req, "Allow") != NULL);
	/* The parameter is one segment of the path, or empty. */
	FUZZ_ASSERT(strchr(req->param, '/') == NULL &&
	    (req->param[0] == '\0' || strstr(req->path, req->param) != NULL));
	check_session_id(req->param);
	req_free(req);
	return 0;
}
