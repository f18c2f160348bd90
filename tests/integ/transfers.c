/* What the transfer suites share (see transfers.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "../load/seal.h"
#include "fixture.h"
#include "transfers.h"

EVP_PKEY *service_key;

EVP_PKEY *
pin_key_fetch(const char *auth)
{
	const char *h[] = { auth, NULL };
	struct http_resp r;
	EVP_PKEY *k;

	need(http_do("GET", PUBKEY, h, NULL, 0, &r) == 0 && r.status == 200 &&
	    http_json_str(&r, "public_key") != NULL, "GET " PUBKEY);
	k = seal_load(http_json_str(&r, "public_key"));
	http_free(&r);
	need(k != NULL, "reading the published PIN key");
	return k;
}

void
service_key_load(const char *auth)
{
	service_key = pin_key_fetch(auth);
}

void
service_key_setup(void)
{
	struct merchant m;

	new_merchant(&m, "1234", "1.00", true);
	service_key_load(m.auth);
}

void
service_key_free(void)
{
	EVP_PKEY_free(service_key);
	service_key = NULL;
}

const char *
sealed(const char *pin, char out[1024])
{
	need(seal_pin(service_key, pin, out, 1024) == 0, "encrypting a PIN");
	return out;
}

const char *
pin_ok(void)
{
	static char out[1024];

	return sealed("1234", out);
}

void
new_account(char out[16], const char *args)
{
	const char *a = ctl("account create %s", args);

	need(a != NULL && strlen(a) == 12, args);
	snprintf(out, 16, "%s", a);
}

void
new_merchant(struct merchant *m, const char *pin, const char *deposit, bool settle)
{
	char args[64];
	const char *s;

	need((s = ctl("merchant create --name 'Market %d'", (int)getpid())) != NULL, "merchant create");
	snprintf(m->id, sizeof(m->id), "%s", s);
	need((s = ctl("key create %s", m->id)) != NULL, "key create");
	snprintf(m->auth, sizeof(m->auth), "Authorization: API-KEY %s", s);
	need(sh("printf %%s '%s' | " CTL "merchant pin %s >/dev/null", pin, m->id) == 0,
	    "merchant pin");
	need(sh(CTL "merchant settlement %s %s >/dev/null", m->id, settle ? "on" : "off") == 0,
	    "merchant settlement");
	snprintf(args, sizeof(args), "--kind merchant --merchant %s", m->id);
	new_account(m->acct, args);
	need(strncmp(m->acct, "ME", 2) == 0, "merchant account number");
	need(ctl("account deposit %s %s", m->acct, deposit) != NULL, "account deposit");
}

void
merchant_webhook(const struct merchant *m, char secret[128])
{
	const char *s = ctl("merchant webhook %s --url %s", m->id,
	    getenv("MARKETPAY_WEBHOOK_RECEIVER"));

	need(s != NULL && strncmp(s, "whsec_", 6) == 0, "merchant webhook");
	snprintf(secret, 128, "%s", s);
}

const char *
pin_failures(const struct merchant *m)
{
	return db_value("SELECT pin_failures FROM merchants WHERE id = $1::bigint", m->id);
}

void
send_as(const char *auth, const char *body, const char *extra, struct http_resp *r)
{
	const char *h[] = { JSON_CT, auth, extra, NULL };

	ck_assert_int_eq(http_do("POST", SEND, h, body, -1, r), 0);
}

const char *
transfer_accepted(const struct http_resp *r, int n)
{
	struct json_object *v, *d;
	const char *id;

	if (r->status != 200 || !json_object_object_get_ex(r->json, "success", &v) ||
	    !json_object_get_boolean(v) || !json_object_object_get_ex(r->json, "transaction_detail",
	    &d) || json_object_array_length(d) != (size_t)n ||
	    !json_object_object_get_ex(json_object_array_get_idx(d, 0), "transaction_id", &v))
		return NULL;
	id = json_object_get_string(v);
	return matches(id, "^tr_[0-9a-f]{32}$") ? id : NULL;
}

const char *
transfer_body(const char *pin, int n, char accts[][16], const char *const *amounts)
{
	static char b[8192];
	size_t len;
	int i;

	len = (size_t)snprintf(b, sizeof(b), "{\"pin\":\"%s\",\"vendors\":[", pin);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(b + len, sizeof(b) - len, "%s{\"account_number\":\"%s\","
		    "\"amount\":%s}", i ? "," : "", accts[i], amounts[i]);
	snprintf(b + len, sizeof(b) - len, "]}");
	return b;
}

void
transfer_ok(const struct merchant *m, int n, char accts[][16], const char *const *amounts,
    char ids[][40])
{
	struct json_object *detail, *v;
	struct http_resp r;
	int i;

	send_as(m->auth, transfer_body(pin_ok(), n, accts, amounts), NULL, &r);
	ck_assert_msg(r.status == 200, "transfer: %ld %s", r.status, r.body);
	ck_assert(json_object_object_get_ex(r.json, "transaction_detail", &detail));
	ck_assert_int_eq(json_object_array_length(detail), n);
	for (i = 0; i < n; i++) {
		ck_assert(json_object_object_get_ex(json_object_array_get_idx(detail, i),
		    "transaction_id", &v));
		snprintf(ids[i], 40, "%s", json_object_get_string(v));
	}
	http_free(&r);
}

void
new_transfer(const struct merchant *m, const char *vendor, const char *amount, char id[40])
{
	char to[1][16], ids[1][40];

	snprintf(to[0], sizeof(to[0]), "%s", vendor);
	transfer_ok(m, 1, to, &amount, ids);
	snprintf(id, 40, "%s", ids[0]);
}
