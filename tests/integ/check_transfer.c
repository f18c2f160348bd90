/*
 * Integration tests of POST /api/v1/payment/send-money-MultiVendor against the real stack
 * (tests/integration.sh): the request and reply contract, validation, settlement rules and
 * what the ledger holds afterwards. PIN attempts, repeats and races: check_transfer_race.c.
 */
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "fixture.h"
#include "http.h"
#include "transfers.h"

#define DENY "Authentication credentials were not provided or are invalid."
#define NVENDORS 16

/* Set up once in the parent before the cases run (they run forked and inherit it). */
static struct merchant shop;    /* settlement on, PIN 1234, well funded */
static char shop_revoked[200], shop_live[200];  /* Authorization lines of dead keys */
static char vendor[NVENDORS][16];
static char frozen[16], closed[16], usd[16], customer[16], other_me[16];

/*
 * A transfer's 200 (marketpay-api(7)) for n vendors: amounts[i] ("12.00") in request order, unique
 * tr_<32 hex> ids (copied to ids), the total as a JSON number with two decimals.
 */
static void
assert_success(const struct http_resp *r, int n, const char *const *amounts, const char *total,
    char ids[][40])
{
	struct json_object *v, *detail, *e;
	const char *at;
	char raw[64], want[8192];
	size_t len;
	int i, j;

	ck_assert_msg(r->status == 200, "status %ld: %s", r->status, r->body);
	ck_assert(json_object_object_get_ex(r->json, "success", &v) &&
	    json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v));
	ck_assert(json_object_object_get_ex(r->json, "status_code", &v) &&
	    json_object_is_type(v, json_type_int) && json_object_get_int(v) == 10);
	ck_assert(http_json_str(r, "message") != NULL && http_json_str(r, "message")[0] != '\0');
	ck_assert(json_object_object_get_ex(r->json, "transaction_detail", &detail));
	ck_assert_int_eq(json_object_array_length(detail), n);
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(detail, i);
		ck_assert(json_object_object_get_ex(e, "transaction_id", &v));
		snprintf(ids[i], 40, "%s", json_object_get_string(v));
		ck_assert_msg(matches(ids[i], "^tr_[0-9a-f]{32}$"), "transaction_id %s", ids[i]);
		for (j = 0; j < i; j++)
			ck_assert_str_ne(ids[i], ids[j]);
		ck_assert(json_object_object_get_ex(e, "amount", &v) &&
		    json_object_is_type(v, json_type_string));
		ck_assert_str_eq(json_object_get_string(v), amounts[i]);
	}
	ck_assert(matches(http_json_str(r, "transaction_date"),
	    "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$"));
	/* The date is now, in UTC (the stack's configured time zone). */
	ck_assert_str_eq(db_value("SELECT abs(extract(epoch FROM (now() AT TIME ZONE 'UTC') -"
	    " $1::timestamp)) < 60", http_json_str(r, "transaction_date")), "t");
	ck_assert(json_object_object_get_ex(r->json, "amount", &v) &&
	    json_object_is_type(v, json_type_double));
	snprintf(raw, sizeof(raw), "\"amount\":%s", total);
	at = strstr(r->body, raw);
	ck_assert_msg(at != NULL && (at[strlen(raw)] == ',' || at[strlen(raw)] == '}'), "no %s in %s",
	    raw, r->body);
	/* The bytes, member for member, as marketpay-api(7) shows them. */
	len = (size_t)snprintf(want, sizeof(want), "{\"status_code\":10,\"success\":true,"
	    "\"message\":\"Transfer completed.\",\"transaction_detail\":[");
	for (i = 0; i < n && len < sizeof(want); i++)
		len += (size_t)snprintf(want + len, sizeof(want) - len, "%s{\"transaction_id\":\"%s\","
		    "\"amount\":\"%s\"}", i > 0 ? "," : "", ids[i], amounts[i]);
	ck_assert(matches(http_json_str(r, "group_id"), "^trg_[0-9a-f]{32}$"));
	if (len < sizeof(want))
		snprintf(want + len, sizeof(want) - len, "],\"transaction_date\":\"%s\","
		    "\"amount\":%s,\"group_id\":\"%s\"}", http_json_str(r, "transaction_date"),
		    total, http_json_str(r, "group_id"));
	ck_assert_str_eq(r->body, want);
}

/* The pin-public-key reply's bytes: the message, then the PEM with its newlines escaped. */
static void
assert_public_key_bytes(const struct http_resp *r, const char *pem)
{
	char want[8192];
	size_t len;

	len = (size_t)snprintf(want, sizeof(want), "{\"status_code\":10,\"success\":true,"
	    "\"message\":\"Encrypt \\\"PIN:UNIX_TIME:NONCE\\\" to this key with RSA-OAEP (SHA-256)"
	    " and send it base64-encoded.\",\"public_key\":\"");
	for (; *pem != '\0' && len + 4 < sizeof(want); pem++)
		len += (size_t)snprintf(want + len, sizeof(want) - len, *pem == '\n' ? "\\n" : "%c",
		    *pem);
	snprintf(want + len, sizeof(want) - len, "\"}");
	ck_assert_str_eq(r->body, want);
}

START_TEST(test_public_key)
{
	const char *h[] = { shop.auth, NULL };
	struct http_resp r;
	struct json_object *v;
	EVP_PKEY *pub = NULL, *priv = NULL;
	const char *pem;
	char path[1024];
	BIO *b;
	FILE *f;

	ck_assert_int_eq(http_do("GET", PUBKEY, h, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert(json_object_object_get_ex(r.json, "status_code", &v) && json_object_get_int(v) == 10);
	ck_assert(json_object_object_get_ex(r.json, "success", &v) && json_object_get_boolean(v));
	ck_assert_ptr_nonnull(http_json_str(&r, "message"));
	pem = http_json_str(&r, "public_key");
	ck_assert_msg(pem != NULL && strncmp(pem, "-----BEGIN PUBLIC KEY-----\n", 27) == 0, "%s",
	    r.body);
	assert_public_key_bytes(&r, pem);
	b = BIO_new_mem_buf(pem, -1);
	pub = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
	BIO_free(b);
	ck_assert_ptr_nonnull(pub);
	ck_assert_int_eq(EVP_PKEY_base_id(pub), EVP_PKEY_RSA);
	ck_assert_int_ge(EVP_PKEY_get_bits(pub), 2048);
	/* It is the public half of the key the service decrypts with. */
	snprintf(path, sizeof(path), "%s/pin-key.pem", getenv("MARKETPAY_STACK_DIR"));
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	priv = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	ck_assert_ptr_nonnull(priv);
	ck_assert_int_eq(EVP_PKEY_eq(pub, priv), 1);
	EVP_PKEY_free(pub);
	EVP_PKEY_free(priv);
	http_free(&r);
	ck_assert_int_eq(http_do("GET", PUBKEY, NULL, NULL, 0, &r), 0);
	ck_assert_int_eq(r.status, 401);
	ck_assert_ptr_nonnull(http_json_str(&r, "detail"));
	ck_assert_ptr_null(http_json_str(&r, "public_key"));
	http_free(&r);
}
END_TEST

START_TEST(test_transfer_ok)
{
	/* Request order is not account order: the reply and the rows keep the request's. */
	char to[3][16], ids[3][40], row[128];
	static const char *const amounts[] = { "12", "0.5", "23.50" };
	static const char *const shown[] = { "12.00", "0.50", "23.50" };
	static const long long minor[] = { 1200, 50, 2350 };
	long long before[3], shop_before = balance_of(shop.acct);
	int txs = atoi(db_value("SELECT count(*) FROM ledger_transactions", NULL)), i;
	struct http_resp r;

	strcpy(to[0], vendor[2]);
	strcpy(to[1], vendor[0]);
	strcpy(to[2], vendor[1]);
	for (i = 0; i < 3; i++)
		before[i] = balance_of(to[i]);
	send_as(shop.auth, transfer_body(pin_ok(), 3, to, amounts), NULL, &r);
	assert_success(&r, 3, shown, "36.00", ids);
	http_free(&r);
	ck_assert_int_eq(balance_of(shop.acct), shop_before - 3600);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(balance_of(to[i]), before[i] + minor[i]);
		snprintf(row, sizeof(row), "%s %lld %d %s", to[i], minor[i], i, shop.id);
		ck_assert_str_eq(db_value("SELECT a.account_number || ' ' || t.amount || ' ' ||"
		    " t.position || ' ' || t.merchant_id FROM transfers t JOIN accounts a ON"
		    " a.id = t.vendor_account_id WHERE t.id = $1", ids[i]), row);
	}
	/* One ledger transaction: the merchant's account debited, each vendor credited. */
	ck_assert_int_eq(atoi(db_value("SELECT count(*) FROM ledger_transactions", NULL)), txs + 1);
	snprintf(row, sizeof(row), "transfer %s 4 0 -3600 %s", shop.id, shop.acct);
	ck_assert_str_eq(db_valuev("SELECT t.kind || ' ' || t.merchant_id || ' ' || count(*) ||"
	    " ' ' || sum(e.amount) || ' ' || min(e.amount) || ' ' || (SELECT account_number FROM"
	    " accounts WHERE id = (array_agg(e.account_id ORDER BY e.amount))[1]) FROM"
	    " ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id WHERE t.id ="
	    " (SELECT ledger_transaction_id FROM transfers WHERE id = $1) AND (SELECT count(DISTINCT"
	    " ledger_transaction_id) FROM transfers WHERE id IN ($1, $2, $3)) = 1 GROUP BY t.id",
	    3, (const char *const[]){ ids[0], ids[1], ids[2] }), row);
	assert_ledger_ok();
}
END_TEST

START_TEST(test_sixteen_vendors)
{
	const char *amounts[NVENDORS], *shown[NVENDORS];
	char ids[NVENDORS][40];
	long long before[NVENDORS], shop_before = balance_of(shop.acct);
	struct http_resp r;
	int i;

	for (i = 0; i < NVENDORS; i++) {
		amounts[i] = i % 2 ? "0.01" : "1";
		shown[i] = i % 2 ? "0.01" : "1.00";
		before[i] = balance_of(vendor[i]);
	}
	send_as(shop.auth, transfer_body(pin_ok(), NVENDORS, vendor, amounts), NULL, &r);
	assert_success(&r, NVENDORS, shown, "8.08", ids);
	http_free(&r);
	for (i = 0; i < NVENDORS; i++)
		ck_assert_int_eq(balance_of(vendor[i]), before[i] + (i % 2 ? 1 : 100));
	ck_assert_int_eq(balance_of(shop.acct), shop_before - 808);
	ck_assert_str_eq(db_value("SELECT count(*) FROM transfers WHERE ledger_transaction_id ="
	    " (SELECT ledger_transaction_id FROM transfers WHERE id = $1)", ids[0]), "16");
}
END_TEST

START_TEST(test_openssl_command)
{
	const char *h[] = { shop.auth, NULL };
	char name[64], path[1024], cmd[1024], pin[1024] = "", ids[1][40];
	static const char *const amounts[] = { "1.25" };
	struct http_resp r;
	FILE *p;

	/* The merchant's documented recipe, byte for byte, with the published key. */
	ck_assert_int_eq(http_do("GET", PUBKEY, h, NULL, 0, &r), 0);
	snprintf(name, sizeof(name), "pin-public-%d.pem", (int)getpid());
	snprintf(path, sizeof(path), "%s/%s", getenv("MARKETPAY_STACK_DIR"), name);
	ck_assert_ptr_nonnull(p = fopen(path, "w"));
	fputs(http_json_str(&r, "public_key"), p);
	fclose(p);
	http_free(&r);
	snprintf(cmd, sizeof(cmd), "cd \"$MARKETPAY_STACK_DIR\" && printf %%s:%%s:%%s 1234"
	    " \"$(date +%%s)\" \"$(openssl rand -hex 16)\" | openssl pkeyutl"
	    " -encrypt -pubin -inkey %s -pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256"
	    " -pkeyopt rsa_mgf1_md:sha256 | base64 -w0", name);
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	ck_assert_ptr_nonnull(fgets(pin, sizeof(pin), p));
	ck_assert_int_eq(pclose(p), 0);
	send_as(shop.auth, transfer_body(pin, 1, &vendor[5], amounts), NULL, &r);
	assert_success(&r, 1, (const char *const[]){ "1.25" }, "1.25", ids);
	http_free(&r);
}
END_TEST

/* Bodies refused by validation; {pin} {v0} {v1} {17} are filled in by expand(). */
static const struct bad {
	const char *body, *needle;
} bad_bodies[] = {
	{ "{\"pin\":\"{pin}\"}", "vendors is required" },
	{ "{\"pin\":\"{pin}\",\"vendors\":null}", "vendors is required" },
	{ "{\"pin\":\"{pin}\",\"vendors\":{}}", "vendors must be an array" },
	{ "{\"pin\":\"{pin}\",\"vendors\":\"{v0}\"}", "vendors must be an array" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[]}", "vendors must not be empty" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{17}]}", "vendors must have at most 16 entries" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[\"{v0}\"]}", "vendors[0] must be an object" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"amount\":1}]}", "vendors[0].account_number is required" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":12,\"amount\":1}]}",
	  "vendors[0].account_number must be a string" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"\",\"amount\":1}]}",
	  "vendors[0].account_number must not be empty" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\"}]}",
	  "vendors[0].amount is required" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":\"12.00\"}]}",
	  "vendors[0].amount must be a number" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":0}]}",
	  "vendors[0].amount must be greater than 0" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":0.00}]}",
	  "vendors[0].amount must be greater than 0" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":-5}]}",
	  "vendors[0].amount must not be negative" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":1},"
	  "{\"account_number\":\"{v1}\",\"amount\":1.234}]}",
	  "vendors[1].amount must have at most two decimal places" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":1e3}]}",
	  "vendors[0].amount must be a plain decimal number such as 12.50" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":99999999999999999999}]}",
	  "vendors[0].amount is above the maximum amount" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":1000000000.00}]}",
	  "vendors[0].amount is above the maximum amount" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":999999999.99},"
	  "{\"account_number\":\"{v1}\",\"amount\":0.01}]}", "above the maximum" },
	{ "{\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":1}]}", "pin is required" },
	{ "{\"pin\":\"\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":1}]}",
	  "pin must not be empty" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":1}],"
	  "\"amount\":1}", "amount is not a known field" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":1,"
	  "\"currency\":\"AFN\"}]}", "vendors[0].currency is not a known field" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":1},"
	  "{\"account_number\":\"{v1}\",\"amount\":2},{\"account_number\":\"{v0}\",\"amount\":3}]}",
	  "vendors[2].account_number repeats vendors[0].account_number" },
	{ "[{\"account_number\":\"{v0}\",\"amount\":1}]", "request body must be a JSON object" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":1}]", "not valid JSON" },
	{ "{\"pin\":\"{pin}\",\"vendors\":[{\"account_number\":\"{v0}\",\"amount\":NaN}]}",
	  "NaN or Infinity" },
};

/* The template with {pin}, {v0}, {v1} and {17} (17 distinct vendor entries) filled in. */
static const char *
expand(const char *t)
{
	static char out[8192];
	size_t n = 0;
	int i;

	while (*t != '\0' && n < sizeof(out) - 1024) {
		if (strncmp(t, "{pin}", 5) == 0) {
			n += (size_t)snprintf(out + n, sizeof(out) - n, "%s", pin_ok());
			t += 5;
		} else if (strncmp(t, "{v0}", 4) == 0 || strncmp(t, "{v1}", 4) == 0) {
			n += (size_t)snprintf(out + n, sizeof(out) - n, "%s", vendor[t[2] - '0']);
			t += 4;
		} else if (strncmp(t, "{17}", 4) == 0) {
			for (i = 0; i <= NVENDORS; i++)
				n += (size_t)snprintf(out + n, sizeof(out) - n, "%s{\"account_number\":"
				    "\"%s\",\"amount\":1}", i ? "," : "", i < NVENDORS ? vendor[i] : usd);
			t += 4;
		} else
			out[n++] = *t++;
	}
	out[n] = '\0';
	return out;
}

START_TEST(test_invalid)
{
	struct http_resp r;
	char before[FOOTPRINT_LEN];

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	send_as(shop.auth, expand(bad_bodies[_i].body), NULL, &r);
	assert_fail(&r, 400, bad_bodies[_i].needle);
	http_free(&r);
	/* Nothing moved or stored, and no PIN attempt was counted against the merchant. */
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	ck_assert_str_eq(pin_failures(&shop), "0");
}
END_TEST

/* Vendors refused after the PIN: the second entry is the culprit. */
static const struct bad_vendor {
	const char *acct;   /* NULL: the merchant's own account */
	const char *needle;
} bad_vendors[] = {
	{ "VE0000000000", "vendors[1].account_number: no such account" },
	{ frozen, "vendors[1].account_number is not active" },
	{ closed, "vendors[1].account_number is not active" },
	{ customer, "vendors[1].account_number is not a vendor account" },
	{ other_me, "vendors[1].account_number is not a vendor account" },
	{ NULL, "vendors[1].account_number is the merchant's own account" },
	{ usd, "vendors[1].account_number holds USD, not AFN" },
};

START_TEST(test_vendor_refused)
{
	char to[2][16], before[FOOTPRINT_LEN];
	struct http_resp r;

	strcpy(to[0], vendor[0]);
	strcpy(to[1], bad_vendors[_i].acct ? bad_vendors[_i].acct : shop.acct);
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	send_as(shop.auth, transfer_body(pin_ok(), 2, to, (const char *const[]){ "1.00", "1.00" }), NULL, &r);
	assert_fail(&r, 400, bad_vendors[_i].needle);
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
}
END_TEST

START_TEST(test_balance)
{
	struct merchant m;
	char before[FOOTPRINT_LEN], ids[2][40];
	struct http_resp r;

	new_merchant(&m, "1234", "100.00", true);
	/* Each amount fits the balance, their total does not. */
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	send_as(m.auth, transfer_body(pin_ok(), 2, vendor, (const char *const[]){ "60", "40.01" }), NULL, &r);
	assert_fail(&r, 400, "exceeds the available balance");
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	/* Exactly the balance goes through and leaves zero; then not a cent more. */
	send_as(m.auth, transfer_body(pin_ok(), 2, vendor, (const char *const[]){ "60", "40" }), NULL, &r);
	assert_success(&r, 2, (const char *const[]){ "60.00", "40.00" }, "100.00", ids);
	http_free(&r);
	ck_assert_int_eq(balance_of(m.acct), 0);
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	send_as(m.auth, transfer_body(pin_ok(), 1, vendor, (const char *const[]){ "0.01" }), NULL, &r);
	assert_fail(&r, 400, "exceeds the available balance");
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	assert_ledger_ok();
}
END_TEST

START_TEST(test_settlement_off)
{
	struct merchant m;
	char before[FOOTPRINT_LEN], ids[1][40];
	const char *body;
	struct http_resp r;

	new_merchant(&m, "1234", "50.00", false);
	body = transfer_body(pin_ok(), 1, vendor, (const char *const[]){ "5" });
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	send_as(m.auth, body, NULL, &r);
	assert_fail(&r, 400, "marketplace settlement is not enabled for this merchant");
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	ck_assert_int_eq(sh(CTL "merchant settlement %s on >/dev/null", m.id), 0);
	send_as(m.auth, body, NULL, &r);
	assert_success(&r, 1, (const char *const[]){ "5.00" }, "5.00", ids);
	http_free(&r);
	ck_assert_int_eq(sh(CTL "merchant settlement %s off >/dev/null", m.id), 0);
	send_as(m.auth, body, NULL, &r);
	assert_fail(&r, 400, "marketplace settlement is not enabled for this merchant");
	http_free(&r);
	ck_assert_int_eq(balance_of(m.acct), 4500);
}
END_TEST

/* Authorization lines that must all get the same 401, before the body is looked at. */
static const char *
bad_auth(int i)
{
	static char buf[512];
	const char *key = strchr(shop.auth, 'Y') + 2;   /* after "API-KEY " */

	switch (i) {
	case 0: return NULL;
	case 1: return "Authorization: Bearer x";
	case 2: return "Authorization: API-KEY";
	case 3: snprintf(buf, sizeof(buf), "Authorization: API-KEY  %s", key); return buf;
	case 4: snprintf(buf, sizeof(buf), "Authorization: API-KEY %s x", key); return buf;
	case 5: snprintf(buf, sizeof(buf), "Authorization: API-KEY %.*sffff", (int)strlen(key) - 4,
		    key); return buf;
	case 6: return shop_revoked;
	case 7: return shop_live;
	case 8: snprintf(buf, sizeof(buf), "Authorization: Bearer %s", key); return buf;
	default: snprintf(buf, sizeof(buf), "Authorization: %s", key); return buf;
	}
}
#define NBAD_AUTH 10

START_TEST(test_auth_denied)
{
	struct http_resp r;
	struct json_object *v;
	char before[FOOTPRINT_LEN];

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	/* A good body with the right PIN: only the key is wrong. */
	send_as(bad_auth(_i), transfer_body(pin_ok(), 1, vendor, (const char *const[]){ "1" }), NULL, &r);
	ck_assert_int_eq(r.status, 401);
	ck_assert_str_eq(http_json_str(&r, "detail"), DENY);
	ck_assert(!json_object_object_get_ex(r.json, "success", &v));
	http_free(&r);
	/* An invalid body too: auth comes first. */
	send_as(bad_auth(_i), "{\"vendors\":[]}", NULL, &r);
	ck_assert_int_eq(r.status, 401);
	ck_assert_str_eq(http_json_str(&r, "detail"), DENY);
	http_free(&r);
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
}
END_TEST

static void
setup(void)
{
	const char *s;
	char conf[1024], key[160];
	int i;

	new_merchant(&shop, "1234", "1000000.00", true);
	need((s = ctl("key create %s", shop.id)) != NULL, "second key");
	snprintf(shop_revoked, sizeof(shop_revoked), "Authorization: API-KEY %s", s);
	need(ctl("key revoke %.16s", s) != NULL, "key revoke");
	need(fixture_live_key(shop.id, key) == 0, "production key");
	snprintf(shop_live, sizeof(shop_live), "Authorization: API-KEY %s", key);
	for (i = 0; i < NVENDORS; i++)
		new_account(vendor[i], "--kind vendor");
	new_account(frozen, "--kind vendor");
	new_account(closed, "--kind vendor");
	new_account(usd, "--kind vendor --currency USD");
	new_account(customer, "--kind customer");
	snprintf(conf, sizeof(conf), "--kind merchant --merchant %s", fx.merchant_b);
	new_account(other_me, conf);
	need(strncmp(vendor[0], "VE", 2) == 0 && strncmp(customer, "CU", 2) == 0, "account kinds");
	need(db_value("UPDATE accounts SET status = 'frozen' WHERE account_number = $1 RETURNING 1",
	    frozen) != NULL, "freezing");
	need(db_value("UPDATE accounts SET status = 'closed' WHERE account_number = $1 RETURNING 1",
	    closed) != NULL, "closing");
	service_key_load(shop.auth);
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("transfer", "send-money-MultiVendor", 60, &t);

	tcase_add_test(t, test_public_key);
	tcase_add_test(t, test_transfer_ok);
	tcase_add_test(t, test_sixteen_vendors);
	tcase_add_test(t, test_openssl_command);
	tcase_add_loop_test(t, test_invalid, 0, sizeof(bad_bodies) / sizeof(bad_bodies[0]));
	tcase_add_loop_test(t, test_vendor_refused, 0, sizeof(bad_vendors) / sizeof(bad_vendors[0]));
	tcase_add_test(t, test_balance);
	tcase_add_test(t, test_settlement_off);
	tcase_add_loop_test(t, test_auth_denied, 0, NBAD_AUTH);
	return fixture_main(s, setup, service_key_free);
}
