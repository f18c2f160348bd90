/* Unit tests for route.c: 404, 405 with Allow, and 503 when the database is unreachable. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "app.h"
#include "db.h"
#include "metrics.h"
#include "metrics_worker.h"
#include "req.h"
#include "route.h"
#include "runner.h"

/* A database that is never there: no socket directory, so libpq fails at once. */
#define NO_DB "host=/nonexistent dbname=x connect_timeout=1"
#define UNAVAILABLE "service temporarily unavailable; retry later"

static struct app app;

static void
setup(void)
{
	char path[] = "/tmp/check_route.XXXXXX", err[512] = "";
	int fd = mkstemp(path);

	ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
	close(fd);
	ck_assert_msg(config_load(&app.cfg, path, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	app.db = db_new(NO_DB);
	ck_assert_ptr_nonnull(app.db);
}

static void
teardown(void)
{
	db_free(app.db);
	config_free(&app.cfg);
}

static char *
dup_or_null(const char *s)
{
	char *p;

	if (s == NULL)
		return NULL;
	p = strdup(s);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* A request as fcgi.c would build it; body NULL means no body (Content-Length absent). */
static struct req *
new_req(const char *method, const char *path, const char *content_type, const char *body)
{
	struct req *r = calloc(1, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	r->method = dup_or_null(method);
	r->path = dup_or_null(path);
	r->query = dup_or_null("");
	r->content_type = dup_or_null(content_type);
	r->authorization = dup_or_null("API-KEY mp_test_0123456789abcdef");
	r->request_id = dup_or_null("test-request");
	r->length = body != NULL ? REQ_LENGTH_OK : REQ_LENGTH_NONE;
	r->body = dup_or_null(body != NULL ? body : "");
	r->body_len = strlen(r->body);
	return r;
}

/* Parses the response body and checks it is {"success": false, "message": msg}. */
static void
assert_fail_body(const struct req *r, const char *msg)
{
	struct json_object *o, *v;

	ck_assert_ptr_nonnull(r->resp);
	ck_assert_uint_eq(strlen(r->resp), r->resp_len);
	ck_assert_str_eq(r->content_type_out, "application/json");
	o = json_tokener_parse(r->resp);
	ck_assert_msg(o != NULL && json_object_is_type(o, json_type_object), "body %s", r->resp);
	ck_assert_int_eq(json_object_object_length(o), 2);
	ck_assert(json_object_object_get_ex(o, "success", &v));
	ck_assert(json_object_is_type(v, json_type_boolean));
	ck_assert(!json_object_get_boolean(v));
	ck_assert(json_object_object_get_ex(o, "message", &v));
	ck_assert(json_object_is_type(v, json_type_string));
	ck_assert_str_eq(json_object_get_string(v), msg);
	json_object_put(o);
}

static const struct {
	const char *method, *path;
	int status;
	const char *allow;    /* the Allow header; NULL: none */
	const char *message;
} cases[] = {
	{ "GET",    "/",                                    404, NULL, "no such endpoint" },
	{ "GET",    "/nope",                                404, NULL, "no such endpoint" },
	{ "POST",   "/api/v1/payment/create-session/",      404, NULL, "no such endpoint" },
	{ "GET",    "/api/v1/payment/sessions/",            404, NULL, "no such endpoint" },
	{ "GET",    "/api/v1/payment/sessions/a/b",         404, NULL, "no such endpoint" },
	{ "GET",    "/api/v1/payment/sessions/x/",          404, NULL, "no such endpoint" },
	{ "GET",    "/api/v1/payment/transfers/",           404, NULL, "no such endpoint" },
	{ "GET",    "/api/v1/payment/balance/",             404, NULL, "no such endpoint" },
	{ "GET",    "/API/V1/HEALTH",                       404, NULL, "no such endpoint" },
	{ "GET",    "/api/v1/health/",                      404, NULL, "no such endpoint" },
	{ "GET",    "/api/v1/payment/create-session",       405, "POST",
	  "method not allowed here; use POST" },
	{ "PUT",    "/api/v1/payment/create-session",       405, "POST",
	  "method not allowed here; use POST" },
	{ "post",   "/api/v1/payment/create-session",       405, "POST",
	  "method not allowed here; use POST" },
	{ "POST",   "/api/v1/payment/sessions/x",           405, "GET",
	  "method not allowed here; use GET" },
	{ "DELETE", "/api/v1/payment/sessions/x",           405, "GET",
	  "method not allowed here; use GET" },
	{ "POST",   "/api/v1/health",                       405, "GET",
	  "method not allowed here; use GET" },
	/* A parameter in the middle of the path: one non-empty segment, then the suffix. */
	{ "POST",   "/api/v1/payment/sessions//refunds",    404, NULL, "no such endpoint" },
	{ "POST",   "/api/v1/payment/sessions/a/b/refunds", 404, NULL, "no such endpoint" },
	{ "POST",   "/api/v1/payment/sessions/x/refunds/",  404, NULL, "no such endpoint" },
	{ "POST",   "/api/v1/payment/sessions/x/refund",    404, NULL, "no such endpoint" },
	{ "POST",   "/api/v1/payment/sessions",             405, "GET",
	  "method not allowed here; use GET" },
	{ "POST",   "/api/v1/payment/transfers/x",          405, "GET",
	  "method not allowed here; use GET" },
	{ "DELETE", "/api/v1/payment/transfers",            405, "GET",
	  "method not allowed here; use GET" },
	{ "GET",    "/api/v1/payment/sessions/x/refunds",   405, "POST",
	  "method not allowed here; use POST" },
	{ "GET",    "/api/v1/payment/transfers/x/reversals", 405, "POST",
	  "method not allowed here; use POST" },
	{ "POST",   "/api/v1/payment/refunds/x",            405, "GET",
	  "method not allowed here; use GET" },
	{ "GET",    "/api/v1/payment/webhook-endpoint/rotate-secret", 405, "POST",
	  "method not allowed here; use POST" },
	{ "POST",   "/api/v1/payment/webhook-endpoint",     404, NULL, "no such endpoint" },
	{ "POST",   "/api/v1/payment/webhook-endpoint/rotate-secret/", 404, NULL,
	  "no such endpoint" },
	/* The database is checked before the API key, so these never reach auth. */
	{ "POST",   "/api/v1/payment/create-session",       503, NULL, UNAVAILABLE },
	{ "GET",    "/api/v1/payment/sessions/x",           503, NULL, UNAVAILABLE },
	{ "POST",   "/api/v1/payment/sessions/x/refunds",   503, NULL, UNAVAILABLE },
	{ "GET",    "/api/v1/payment/refunds/x",            503, NULL, UNAVAILABLE },
	{ "POST",   "/api/v1/payment/transfers/x/reversals", 503, NULL, UNAVAILABLE },
	/* The lists and their one-object siblings on the same prefix. */
	{ "GET",    "/api/v1/payment/sessions",             503, NULL, UNAVAILABLE },
	{ "GET",    "/api/v1/payment/refunds",              503, NULL, UNAVAILABLE },
	{ "GET",    "/api/v1/payment/transfers",            503, NULL, UNAVAILABLE },
	{ "GET",    "/api/v1/payment/transfers/x",          503, NULL, UNAVAILABLE },
	{ "GET",    "/api/v1/payment/balance",              503, NULL, UNAVAILABLE },
	{ "GET",    "/api/v1/payment/balance-transactions", 503, NULL, UNAVAILABLE },
	{ "POST",   "/api/v1/payment/webhook-endpoint/rotate-secret", 503, NULL, UNAVAILABLE },
	{ "POST",   "/api/v1/payment/sessions/"
	  "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234"
	  "/refunds",                                       503, NULL, UNAVAILABLE },
};

START_TEST(test_dispatch_table)
{
	struct req *r = new_req(cases[_i].method, cases[_i].path, "application/json",
	    "{\"amount\":12.50}");
	const char *allow, *retry;

	route_dispatch(&app, r);
	ck_assert_msg(r->status == cases[_i].status, "%s %s: %d, want %d", cases[_i].method,
	    cases[_i].path, r->status, cases[_i].status);
	allow = req_header_out(r, "Allow");
	/* A 503 says when to retry; no other answer here does. */
	retry = req_header_out(r, "Retry-After");
	ck_assert_pstr_eq(retry, cases[_i].status == 503 ? "1" : NULL);
	if (cases[_i].allow == NULL) {
		ck_assert_msg(allow == NULL, "%s %s: Allow: %s", cases[_i].method, cases[_i].path,
		    allow);
		ck_assert_uint_eq(r->nheaders, retry != NULL);
	} else {
		ck_assert_pstr_eq(allow, cases[_i].allow);
		ck_assert_pstr_eq(req_header_out(r, "allow"), cases[_i].allow);
		ck_assert_uint_eq(r->nheaders, 1);
	}
	assert_fail_body(r, cases[_i].message);
	ck_assert_int_eq(r->merchant_id, 0);
	req_free(r);
}
END_TEST

/* Without a database the 503 comes first, whatever the request's own faults. */
START_TEST(test_create_without_db)
{
	static const struct {
		const char *content_type, *body;
	} variants[] = {
		{ NULL, NULL },
		{ "text/plain", "x" },
		{ "application/json", "not json" },
	};
	struct req *r;
	size_t i;

	for (i = 0; i < NELEM(variants); i++) {
		r = new_req("POST", "/api/v1/payment/create-session", variants[i].content_type,
		    variants[i].body);
		free(r->authorization);
		r->authorization = NULL;
		route_dispatch(&app, r);
		ck_assert_int_eq(r->status, 503);
		assert_fail_body(r, UNAVAILABLE);
		req_free(r);
	}
}
END_TEST

START_TEST(test_health_without_db)
{
	struct json_object *o, *v;
	struct req *r;
	int round;

	/* Twice: the second call falls in the reconnect back-off and must still answer. */
	for (round = 0; round < 2; round++) {
		r = new_req("GET", "/api/v1/health", NULL, NULL);
		route_dispatch(&app, r);
		ck_assert_int_eq(r->status, 503);
		ck_assert_str_eq(r->content_type_out, "application/json");
		ck_assert_uint_eq(r->nheaders, 0);
		o = json_tokener_parse(r->resp);
		ck_assert_msg(o != NULL, "body %s", r->resp);
		ck_assert(json_object_object_get_ex(o, "status", &v));
		ck_assert_str_eq(json_object_get_string(v), "unavailable");
		ck_assert(json_object_object_get_ex(o, "database", &v));
		ck_assert_str_eq(json_object_get_string(v), "unreachable");
		ck_assert(!json_object_object_get_ex(o, "success", NULL));
		json_object_put(o);
		req_free(r);
	}
}
END_TEST

/* The whole of a file under the source tree, NUL-terminated (the caller frees). */
static char *
source_file(const char *name)
{
	const char *top = getenv("top_srcdir");
	char path[4096], *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", top != NULL && top[0] != '\0' ? top : ".", name);
	ck_assert_msg((f = fopen(path, "r")) != NULL, "%s: %s", path, strerror(errno));
	ck_assert(fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0);
	ck_assert_ptr_nonnull(buf = malloc((size_t)n + 1));
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/*
 * GET /metrics answers only a request nginx's metrics location sent (MARKETPAY_METRICS):
 * to any other it is no endpoint at all. Sent, it shows the requests this worker counted,
 * by route and status, in Prometheus's text format, without a database too.
 */
START_TEST(test_metrics_only_where_allowed)
{
	char dir[] = "/tmp/check_route.XXXXXX", file[96];
	struct req *r;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	free(app.cfg.metrics_dir);
	app.cfg.metrics_dir = strdup(dir);
	metrics_worker_attach(&app);
	r = new_req("GET", "/metrics", NULL, NULL);
	metrics_worker_begin();
	route_dispatch(&app, r);
	metrics_worker_end(r);
	ck_assert_int_eq(r->status, 404);
	assert_fail_body(r, "no such endpoint");
	req_free(r);
	r = new_req("GET", "/metrics", NULL, NULL);
	r->metrics_allowed = true;
	route_dispatch(&app, r);
	ck_assert_int_eq(r->status, 200);
	ck_assert_str_eq(r->content_type_out, "text/plain; version=0.0.4; charset=utf-8");
	ck_assert_msg(strstr(r->resp, "\nmarketpay_http_requests_total{method=\"GET\","
	    "route=\"/metrics\",code=\"404\"} 1\n") != NULL, "%s", r->resp);
	ck_assert_ptr_nonnull(strstr(r->resp, "\nmarketpay_database_up 0\n"));
	ck_assert_ptr_nonnull(strstr(r->resp, "\nmarketpay_webhookd_senders 0\n"));
	ck_assert_ptr_null(strstr(r->resp, "marketpay_webhook_backlog_events"));
	req_free(r);
	metrics_detach();
	snprintf(file, sizeof(file), "%s/sandbox-fcgi.metrics", dir);
	unlink(file);
	rmdir(dir);
}
END_TEST

/*
 * The docs follow the route table: each route has a row of the README's API table (its
 * method and path, "{id}" for a parameter, on one line), each API path is in
 * marketpay-api(7), and so is each 401 text.
 */
START_TEST(test_docs_follow_routes)
{
	char *readme = source_file("README.md"), *page = source_file("man/marketpay-api.7");
	const char *method, *path, *suffix, *deny, *line, *end;
	char shown[256];
	size_t i;
	bool param, found;

	for (i = 0; route_at(i, &method, &path, &param, &suffix, &deny); i++) {
		snprintf(shown, sizeof(shown), "%s%s%s`", path, param ? "{id}" : "", suffix);
		found = false;
		for (line = readme; !found && line != NULL && *line != '\0'; line = end ? end + 1 : NULL) {
			end = strchr(line, '\n');
			found = strncmp(line, "| `", 3) == 0 && strstr(line, shown) != NULL &&
			    strstr(line, method) != NULL && (end == NULL ||
			    strstr(line, shown) < end);
		}
		ck_assert_msg(found, "README's API table has no row for %s %s", method, shown);
		if (strncmp(path, "/api/", 5) == 0)
			ck_assert_msg(strstr(page, path) != NULL && strstr(page, suffix) != NULL,
			    "marketpay-api(7) lacks %s…%s", path, suffix);
		if (deny != NULL)
			ck_assert_msg(strstr(page, deny) != NULL && strstr(readme, deny) != NULL,
			    "the 401 text '%s' is not in marketpay-api(7) and the README", deny);
	}
	ck_assert_uint_ge(i, 5);
	free(readme);
	free(page);
}
END_TEST

static Suite *
route_suite(void)
{
	Suite *s = suite_create("route");
	TCase *tc = tcase_create("dispatch");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(tc, test_dispatch_table, 0, (int)NELEM(cases));
	tcase_add_test(tc, test_create_without_db);
	tcase_add_test(tc, test_health_without_db);
	tcase_add_test(tc, test_metrics_only_where_allowed);
	tcase_add_test(tc, test_docs_follow_routes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(route_suite());
}
