/*
 * API keys against the real stack (tests/integration.sh): stored as their SHA-256 digest
 * only, and looked up by that digest alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "auth.h"
#include "fixture.h"
#include "http.h"

START_TEST(test_key_stored_as_digest)
{
	char digest[67];

	/* The row holds SHA-256 of the whole key, and no column holds its secret part. */
	ck_assert_int_eq(apikey_digest(fx.key_a, strlen(fx.key_a), digest), 0);
	ck_assert_str_eq(db_value("SELECT count(*) FROM api_keys WHERE digest = $1::bytea", digest),
	    "1");
	ck_assert_str_eq(db_value("SELECT count(*) FROM api_keys WHERE digest ="
	    " sha256(convert_to($1, 'UTF8'))", fx.key_a), "1");
	ck_assert_str_eq(db_value("SELECT count(*) FROM api_keys k WHERE"
	    " strpos(row_to_json(k)::text, substr($1, 17)) > 0", fx.key_a), "0");
}
END_TEST

/*
 * What the worker sends to look a key up, as PostgreSQL saw it: one equality on the digest
 * column (plus environment and status), nothing that compares key text. So how long the
 * lookup takes depends on SHA-256 of the presented key, which an attacker cannot steer
 * towards a real key's digest. bench/key-timing measures it.
 */
START_TEST(test_key_lookup_by_digest)
{
	char auth[200], sql[4096];
	const char *h[] = { auth, NULL }, *q;
	struct http_resp r;
	int i;

	for (i = 0; i < 8; i++) {   /* enough to meet every worker of the pool at least once */
		snprintf(auth, sizeof(auth), "Authorization: API-KEY %.40s%024d", fx.key_a, i);
		ck_assert_int_eq(http_do("GET", "/api/v1/payment/sessions/00000000-0000-4000-8000-"
		    "000000000000", h, NULL, 0, &r), 0);
		ck_assert_int_eq(r.status, 401);
		http_free(&r);
	}
	q = db_value("SELECT min(query) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND"
	    " query LIKE '%FROM api_keys%'", NULL);
	ck_assert_msg(q != NULL && strcmp(q, "(null)") != 0, "no worker ran a key lookup");
	snprintf(sql, sizeof(sql), "%s", q);
	ck_assert_msg(strstr(sql, "k.digest = $1::bytea") != NULL, "%s", sql);
	ck_assert_msg(strstr(sql, "prefix") == NULL, "%s", sql);
	ck_assert_msg(strstr(sql, "LIKE") == NULL && strstr(sql, "$3") == NULL, "%s", sql);
	/* The digest column is unique: the comparison is an index probe, not a scan of text. */
	ck_assert_str_eq(db_value("SELECT count(*) FROM pg_index i JOIN pg_attribute a ON"
	    " a.attrelid = i.indrelid AND a.attnum = i.indkey[0] WHERE i.indrelid ="
	    " 'api_keys'::regclass AND i.indisunique AND i.indnatts = 1 AND a.attname = 'digest'",
	    NULL), "1");
}
END_TEST

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("keys", "keys", 60, &t);

	tcase_add_test(t, test_key_stored_as_digest);
	tcase_add_test(t, test_key_lookup_by_digest);
	return fixture_main(s, NULL, NULL);
}
