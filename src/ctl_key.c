/* marketpayctl key ...: API keys, shown once and stored as SHA-256 digests. */
#include <stdio.h>
#include <string.h>

#include "apikey.h"
#include "ctl.h"

/* Characters of a key kept in the clear, for listing and revoking: "mp_test_" + 8 hex. */
#define KEY_PREFIX_LEN 16

int
ctl_key_create(struct ctl *c, int argc, char **argv)
{
	char key[APIKEY_MAX + 1], digest[APIKEY_DIGEST_LEN + 1], prefix[KEY_PREFIX_LEN + 1];
	const char *p[4];
	PGresult *r;

	if (argc != 1 || !ctl_is_id(argv[0]))
		return ctl_fail("usage: marketpayctl key create MERCHANT_ID");
	if (apikey_new(config_key_prefix(&c->cfg), key, digest) != 0)
		return ctl_fail("no random bytes available");
	memcpy(prefix, key, KEY_PREFIX_LEN);
	prefix[KEY_PREFIX_LEN] = '\0';
	p[0] = argv[0];
	p[1] = prefix;
	p[2] = digest;
	p[3] = config_env_name(&c->cfg);
	if ((r = ctl_exec(c, "key create",
	    "INSERT INTO api_keys (merchant_id, prefix, digest, environment)"
	    " SELECT id, $2, $3::bytea, $4 FROM merchants WHERE id = $1 RETURNING id", 4,
	    p)) == NULL)
		return 1;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return ctl_fail("no merchant %s", argv[0]);
	}
	PQclear(r);
	printf("%s\n", key);
	return 0;
}

int
ctl_key_revoke(struct ctl *c, int argc, char **argv)
{
	const char *p[1];
	PGresult *r;
	int n;

	if (argc != 1 || argv[0][0] == '\0')
		return ctl_fail("usage: marketpayctl key revoke KEY_PREFIX_OR_ID");
	p[0] = argv[0];
	/*
	 * By id when the argument is a number, else by the key's visible prefix (the first 16
	 * characters of the key, or any longer start of it). A prefix that fits several keys
	 * revokes none.
	 */
	if (ctl_is_id(argv[0]))
		r = ctl_exec(c, "key revoke",
		    "UPDATE api_keys SET revoked_at = now() WHERE id = $1::bigint"
		    " AND revoked_at IS NULL RETURNING id", 1, p);
	else
		r = ctl_exec(c, "key revoke",
		    "WITH m AS (SELECT id FROM api_keys WHERE revoked_at IS NULL AND"
		    "  (prefix = $1 OR prefix = left($1, 16)) AND length($1) >= 16)"
		    " UPDATE api_keys SET revoked_at = now() WHERE id IN (SELECT id FROM m)"
		    " AND (SELECT count(*) FROM m) = 1 RETURNING id", 1, p);
	if (r == NULL)
		return 1;
	n = PQntuples(r);
	if (n == 1)
		printf("%s\n", PQgetvalue(r, 0, DB_FIRST_COLUMN));
	PQclear(r);
	return n == 1 ? 0 : ctl_fail("no single active key matches %s", argv[0]);
}

/* Columns of key list's query. */
enum { KEY_LIST_ID, KEY_LIST_PREFIX, KEY_LIST_ENVIRONMENT, KEY_LIST_STATUS, KEY_LIST_CREATED,
	KEY_LIST_LAST_USED };

int
ctl_key_list(struct ctl *c, int argc, char **argv)
{
	const char *p[1];
	PGresult *r;
	int i;

	if (argc != 1 || !ctl_is_id(argv[0]))
		return ctl_fail("usage: marketpayctl key list MERCHANT_ID");
	p[0] = argv[0];
	if ((r = ctl_exec(c, "key list",
	    "SELECT id, prefix, environment, CASE WHEN revoked_at IS NULL THEN 'active'"
	    " ELSE 'revoked' END, mp_iso(created_at), coalesce(mp_iso(last_used_at), 'never')"
	    " FROM api_keys WHERE merchant_id = $1::bigint ORDER BY id", 1, p)) == NULL)
		return 1;
	/* Last used: to within 10 minutes (sql/023_key_last_use.sql), or never. */
	for (i = 0; i < PQntuples(r); i++)
		printf("%s\t%s\t%s\t%s\t%s\t%s\n", PQgetvalue(r, i, KEY_LIST_ID),
		    PQgetvalue(r, i, KEY_LIST_PREFIX), PQgetvalue(r, i, KEY_LIST_ENVIRONMENT),
		    PQgetvalue(r, i, KEY_LIST_STATUS), PQgetvalue(r, i, KEY_LIST_CREATED),
		    PQgetvalue(r, i, KEY_LIST_LAST_USED));
	PQclear(r);
	return 0;
}
