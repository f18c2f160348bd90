/* Reading the stack's webhook receiver log, and checking signatures as a merchant would. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "crypto.h"
#include "receiver.h"

const char *
stack_file(const char *name)
{
	static char path[4][1024];
	static int next;

	next = (next + 1) % 4;
	snprintf(path[next], sizeof(path[next]), "%s/%s", getenv("MARKETPAY_STACK_DIR"), name);
	return path[next];
}

long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The receiver's log lines for event id, oldest first (NULL-terminated; caller frees). */
struct json_object **
receiver_requests(const char *id, int *count)
{
	struct json_object **out = calloc(1024, sizeof(*out)), *o, *v;
	FILE *f = fopen(stack_file("webhooks.log"), "r");
	char line[65536];

	*count = 0;
	ck_assert_ptr_nonnull(out);
	while (f != NULL && fgets(line, sizeof(line), f) != NULL && *count < 1023) {
		if (strchr(line, '\n') == NULL)
			break;   /* nginx is still writing it */
		o = json_tokener_parse(line);
		ck_assert_msg(o != NULL, "receiver log line is not JSON: %s", line);
		if (json_object_object_get_ex(o, "id", &v) &&
		    strcmp(json_object_get_string(v), id) == 0)
			out[(*count)++] = o;
		else
			json_object_put(o);
	}
	if (f != NULL)
		fclose(f);
	return out;
}

void
receiver_free(struct json_object **r)
{
	size_t i;

	for (i = 0; r[i] != NULL; i++)
		json_object_put(r[i]);
	free(r);
}

/* The number of requests the receiver logged for id, waiting up to ms for want of them. */
int
receiver_wait(const char *id, int want, long ms)
{
	long long end = now_ms() + ms;
	struct json_object **r;
	int n;

	for (;;) {
		r = receiver_requests(id, &n);
		receiver_free(r);
		if (n >= want || now_ms() >= end)
			return n;
		usleep(20000);
	}
}

const char *
receiver_field(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

int
receiver_signature_has(const char *header, const char *sig)
{
	size_t n = strlen(sig), len;

	/* The signatures are separated by single spaces. */
	for (;;) {
		len = strcspn(header, " ");
		if (len == n && strncmp(header, sig, n) == 0)
			return 1;
		if (header[len] == '\0')
			return 0;
		header += len + 1;
	}
}

/*
 * Verifies a webhook-signature the way a merchant does, from the secret alone:
 * base64(HMAC-SHA256(base64-decoded part after whsec_, id "." timestamp "." body)).
 */
int
receiver_signature_ok(const char *whsec, struct json_object *req)
{
	const char *id = receiver_field(req, "id"), *ts = receiver_field(req, "timestamp");
	const char *body = receiver_field(req, "body");
	unsigned char *key, mac[CRYPTO_SHA256_LEN];
	char *msg = NULL, *b64 = NULL, want[128];
	size_t keylen = 0;
	int ok = 0;

	if ((key = crypto_unbase64(whsec + strlen("whsec_"), &keylen)) == NULL ||
	    asprintf(&msg, "%s.%s.%s", id, ts, body) < 0)
		goto out;
	if (crypto_hmac_sha256(key, keylen, msg, strlen(msg), mac) != 0 ||
	    (b64 = crypto_base64(mac, sizeof(mac))) == NULL)
		goto out;
	snprintf(want, sizeof(want), "v1,%s", b64);
	ok = receiver_signature_has(receiver_field(req, "signature"), want);
out:
	free(key);
	free(msg);
	free(b64);
	return ok;
}


struct json_object *
receiver_event(const char *id, const char *whsec, const char *type, struct json_object **data)
{
	struct json_object **reqs, *payload, *v;
	int n;

	ck_assert_int_eq(receiver_wait(id, 1, 15000), 1);
	reqs = receiver_requests(id, &n);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(receiver_field(reqs[0], "status"), "204");
	ck_assert_str_eq(receiver_field(reqs[0], "content_type"), "application/json");
	ck_assert_msg(receiver_signature_ok(whsec, reqs[0]), "bad signature");
	payload = json_tokener_parse(receiver_field(reqs[0], "body"));
	receiver_free(reqs);
	ck_assert_ptr_nonnull(payload);
	ck_assert(json_object_object_get_ex(payload, "type", &v));
	ck_assert_str_eq(json_object_get_string(v), type);
	ck_assert(json_object_object_get_ex(payload, "id", &v));
	ck_assert_str_eq(json_object_get_string(v), id);
	ck_assert(json_object_object_get_ex(payload, "livemode", &v) &&
	    json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v));
	ck_assert(json_object_object_get_ex(payload, "data", data));
	return payload;
}
