/* Helpers shared by the libFuzzer targets; see fuzz.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "json.h"
#include "log.h"
#include "fuzz.h"

/* No socket directory: libpq fails at once, without a timeout. */
#define NO_DB "host=/nonexistent dbname=x connect_timeout=1"

struct app fuzz_app;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_app_init(&fuzz_app, CONFIG_SANDBOX);
	return 0;
}

void
fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: property failed: %s\n", file, line, what);
	abort();
}

void
fuzz_app_init(struct app *app, enum config_env env)
{
	char err[512] = "";

	memset(app, 0, sizeof(*app));
	/* An empty file: every key keeps its default, as in a fresh install. */
	if (config_load(&app->cfg, "/dev/null", err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz: config defaults: %s\n", err);
		abort();
	}
	app->cfg.environment = env;
	/* The refused connections log errors; the fuzzer's output should show only findings. */
	if (log_open("marketpay-fuzz", "/dev/null", "error") != 0 ||
	    (app->db = db_new(NO_DB)) == NULL) {
		fprintf(stderr, "fuzz: cannot set up the app\n");
		abort();
	}
}

char *
fuzz_str(const uint8_t *data, size_t len)
{
	const uint8_t *nul = memchr(data, '\0', len);
	size_t n = nul != NULL ? (size_t)(nul - data) : len;
	char *s = malloc(n + 1);

	/* Not strndup: under strict_string_checks ASan makes it read up to a NUL past len. */
	if (s == NULL)
		abort();
	memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

char *
fuzz_field(const uint8_t **data, size_t *left)
{
	const uint8_t *nl = memchr(*data, '\n', *left);
	size_t n = nl != NULL ? (size_t)(nl - *data) : *left;
	char *s = fuzz_str(*data, n);

	*data += nl != NULL ? n + 1 : n;
	*left -= nl != NULL ? n + 1 : n;
	return s;
}

static char *
copy(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		abort();
	return p;
}

struct req *
fuzz_req(void)
{
	struct req *req = calloc(1, sizeof(*req));

	if (req == NULL)
		abort();
	req->method = copy("GET");
	req->path = copy("/");
	req->query = copy("");
	req->request_id = copy("fuzz");
	req->length = REQ_LENGTH_NONE;
	return req;
}

void
fuzz_check_reply(const struct req *req)
{
	struct json_object *o;
	char msg[512];
	size_t i;

	FUZZ_ASSERT(req->status >= 200 && req->status <= 599);
	FUZZ_ASSERT(req->resp != NULL && req->content_type_out != NULL);
	FUZZ_ASSERT(strlen(req->resp) == req->resp_len);
	for (i = 0; i < req->nheaders; i++)
		FUZZ_ASSERT(strpbrk(req->headers[i].value, "\r\n") == NULL);
	if (strcmp(req->content_type_out, "application/json") != 0)
		return;
	o = json_parse_strict(req->resp, req->resp_len, msg, sizeof(msg));
	if (o == NULL)
		fprintf(stderr, "reply is not strict JSON (%s): %s\n", msg, req->resp);
	FUZZ_ASSERT(o != NULL && json_object_is_type(o, json_type_object));
	json_object_put(o);
}

struct json_object *
fuzz_parse(const uint8_t *data, size_t size)
{
	struct json_object *root;
	char msg[512]; /* as the handlers' */

	msg[0] = '\0';
	if ((root = json_parse_strict((const char *)data, size, msg, sizeof(msg))) == NULL)
		fuzz_check_fail(msg);
	return root;
}

void
fuzz_check_fail(const char *msg)
{
	struct req *req = fuzz_req();
	struct json_object *o, *v;
	char why[512];

	FUZZ_ASSERT(msg[0] != '\0');
	req_fail(req, 400, "%s", msg);
	FUZZ_ASSERT(req->status == 400);
	fuzz_check_reply(req);
	o = json_parse_strict(req->resp, req->resp_len, why, sizeof(why));
	FUZZ_ASSERT(json_object_object_get_ex(o, "success", &v) &&
	    json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v));
	FUZZ_ASSERT(json_object_object_get_ex(o, "message", &v) &&
	    json_object_is_type(v, json_type_string) && json_object_get_string_len(v) > 0);
	json_object_put(o);
	req_free(req);
}
