#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "crypto.h"
#include "idem.h"

static bool
key_ok(const char *k)
{
	size_t n = strlen(k), i;

	if (n == 0 || n > IDEM_KEY_MAX)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)k[i] < 0x21 || (unsigned char)k[i] > 0x7e)
			return false;
	return true;
}

/* SHA-256 over method, path and body, as "\\x<hex>" (bytea input) or plain hex. */
static int
request_hash(const struct req *req, char *out, bool bytea)
{
	unsigned char md[CRYPTO_SHA256_LEN];
	size_t ml = strlen(req->method), pl = strlen(req->path);
	char *buf = malloc(ml + pl + req->body_len + 2);

	if (buf == NULL)
		return -1;
	memcpy(buf, req->method, ml);
	buf[ml] = ' ';
	memcpy(buf + ml + 1, req->path, pl);
	buf[ml + 1 + pl] = '\n';
	if (req->body_len > 0)
		memcpy(buf + ml + pl + 2, req->body, req->body_len);
	if (crypto_sha256(buf, ml + pl + 2 + req->body_len, md) != 0) {
		free(buf);
		return -1;
	}
	free(buf);
	if (bytea)
		crypto_bytea_hex(md, sizeof(md), out);
	else
		crypto_hex(md, sizeof(md), out);
	return 0;
}

/*
 * A reply that shows a secret, sealed under the secrets key for storing: base64 of nonce,
 * ciphertext and tag. Returns text the caller frees, or NULL (no key, ENOMEM, cipher).
 */
static char *
seal_reply(const struct app *app, const struct req *req)
{
	unsigned char *sealed;
	char *text = NULL;

	if (!app->have_secret || (sealed = malloc(req->resp_len + CRYPTO_SEAL_OVERHEAD)) == NULL)
		return NULL;
	if (crypto_seal(app->secret, (const unsigned char *)req->resp, req->resp_len, sealed) == 0)
		text = crypto_base64(sealed, req->resp_len + CRYPTO_SEAL_OVERHEAD);
	free(sealed);
	return text;
}

/*
 * Replays a stored reply that seal_reply made into req (status). Returns ERR_OK, or
 * ERR_UNAVAILABLE without the key, ERR_INTERNAL when it does not open (another key).
 */
static enum err
replay_sealed(const struct app *app, struct req *req, int status, const char *text)
{
	unsigned char *sealed = NULL, *plain = NULL;
	size_t len = 0;
	enum err e = ERR_INTERNAL;

	if (!app->have_secret)
		return ERR_UNAVAILABLE;
	if ((sealed = crypto_unbase64(text, &len)) == NULL || len <= CRYPTO_SEAL_OVERHEAD ||
	    (plain = malloc(len - CRYPTO_SEAL_OVERHEAD)) == NULL ||
	    crypto_open(app->secret, sealed, len, plain) != 0)
		goto out;
	req->secret_reply = true;
	e = req_reply(req, status, "application/json", (const char *)plain,
	    len - CRYPTO_SEAL_OVERHEAD) == 0 ? ERR_OK : ERR_NOMEM;
out:
	if (plain != NULL)
		crypto_wipe(plain, len - CRYPTO_SEAL_OVERHEAD);
	free(plain);
	free(sealed);
	return e;
}

static void
fail_db(struct app *app, struct req *req, enum err e)
{
	db_rollback(app->db);
	req_fail_err(req, e);
}

/*
 * The reply stored under the key, in r's row 0 from column col on (DB_IDEM_GET's columns):
 * replayed into req, or a 422 when it answered another request. Ends the transaction: with
 * the API key looked up in it (col > 0), a commit, which keeps the key's use noted (only that
 * was written); else a rollback.
 */
static void
replay(struct app *app, struct req *req, const PGresult *r, int col)
{
	char hash[2 * CRYPTO_SHA256_LEN + 1];
	enum err e = ERR_OK;
	int status;

	if (request_hash(req, hash, false) != 0)
		req_fail_err(req, ERR_NOMEM);
	else if (strcmp(hash, PQgetvalue(r, 0, col + IDEM_GET_HASH)) != 0)
		req_fail(req, 422, "Idempotency-Key was already used with a different request");
	else {
		status = atoi(PQgetvalue(r, 0, col + IDEM_GET_STATUS));
		if (strcmp(PQgetvalue(r, 0, col + IDEM_GET_SEALED), "t") == 0)
			e = replay_sealed(app, req, status, PQgetvalue(r, 0, col + IDEM_GET_BODY));
		else
			req_reply(req, status, "application/json",
			    PQgetvalue(r, 0, col + IDEM_GET_BODY),
			    (size_t)PQgetlength(r, 0, col + IDEM_GET_BODY));
		if (e == ERR_OK)
			req_add_header(req, "Idempotent-Replayed", "true");
		else
			req_fail_err(req, e);
	}
	/* The reply stands whatever the commit says: it only carried the note. */
	if (col == 0 || db_commit(app->db) != ERR_OK)
		db_rollback(app->db);
}

bool
idem_begin(struct app *app, struct req *req)
{
	char wait[24], ttl[24];
	const char *w[1] = { wait }, *p[3] = { req->merchant, req->idempotency_key, ttl },
	    *k[4] = { req->key_digest, config_env_name(&app->cfg), req->idempotency_key, ttl };
	/*
	 * The key's lock waits at most idempotency_wait_ms; its stored reply is read after.
	 * With the API key not looked up yet (auth_defer), both find the merchant by it, and
	 * the read returns the key's columns too.
	 */
	const struct db_step by_merchant[] = {
		{ .sql = "BEGIN" },
		{ .stmt = DB_LOCK_TIMEOUT, .n = 1, .params = w },
		{ .stmt = DB_IDEM_LOCK, .n = 2, .params = p },
		{ .stmt = DB_IDEM_GET, .n = 3, .params = p },
	}, by_key[] = {
		{ .sql = "BEGIN" },
		{ .stmt = DB_LOCK_TIMEOUT, .n = 1, .params = w },
		{ .stmt = DB_IDEM_LOCK_KEY, .n = 3, .params = k },
		{ .stmt = DB_IDEM_GET_KEY, .n = 4, .params = k },
	};
	PGresult *r = NULL;
	enum err e;
	int col = 0;

	if (req->idempotency_key == NULL)
		return true;
	if (!key_ok(req->idempotency_key)) {
		req_fail(req, 400, "Idempotency-Key must be 1 to %d visible ASCII characters",
		    IDEM_KEY_MAX);
		return false;
	}
	snprintf(wait, sizeof(wait), "%ld", app->cfg.idempotency_wait_ms);
	snprintf(ttl, sizeof(ttl), "%ld", app->cfg.idempotency_ttl);
	/*
	 * One round trip. The lock waits for a request in flight with this key, whose reply is
	 * then replayed below: the read is a statement of its own, so its snapshot is taken
	 * once the lock is held and sees what that request committed.
	 */
	if ((r = db_pipeline(app->db, req->auth_deferred ? by_key : by_merchant, 4, 3, &e)) == NULL)
		goto fail;
	if (req->auth_deferred) {
		/* A refused key (only now looked up) took no lock; auth_found answered it. */
		if (!auth_found(req, r, &e)) {
			if (e != ERR_OK)
				fail_db(app, req, e);
			else
				db_rollback(app->db);
			return false;
		}
		req->key_note_held = !PQgetisnull(r, 0, AUTH_KEY_NOTED);
		col = IDEM_GET_KEY_STORED;
	}
	if (PQntuples(r) == 0 || PQgetisnull(r, 0, col + IDEM_GET_HASH)) {
		PQclear(r);
		return true;
	}
	replay(app, req, r, col);
	PQclear(r);
	return false;
fail:
	PQclear(r);
	fail_db(app, req, e);
	return false;
}

bool
idem_end(struct app *app, struct req *req)
{
	char status[8], hash[2 + 2 * CRYPTO_SHA256_LEN + 1], *sealed = NULL;
	const char *p[6];
	const struct db_step steps[] = {
		{ .stmt = DB_IDEM_PUT, .n = 6, .params = p },
		{ .sql = "COMMIT" },
	};
	enum err e = ERR_OK;

	if (req->idempotency_key == NULL)
		return true;
	if (req->status != 200) {
		/*
		 * A refusal that counted a PIN attempt keeps it; anything else leaves no trace but
		 * the note of the key's use, which a lookup of its own would have kept.
		 */
		if (req->keep_on_refusal) {
			if ((e = db_commit(app->db)) != ERR_OK)
				goto fail;
		} else {
			db_rollback(app->db);
			if (req->key_note_held)
				auth_note_again(app, req);
		}
		return true;
	}
	snprintf(status, sizeof(status), "%d", req->status);
	if (request_hash(req, hash, true) != 0) {
		e = ERR_NOMEM;
		goto fail;
	}
	/* A reply that shows a secret is stored only sealed: no secret in the clear at rest. */
	if (req->secret_reply && (sealed = seal_reply(app, req)) == NULL) {
		e = ERR_INTERNAL;
		goto fail;
	}
	p[0] = req->merchant;
	p[1] = req->idempotency_key;
	p[2] = hash;
	p[3] = status;
	p[4] = sealed != NULL ? sealed : req->resp;
	p[5] = sealed != NULL ? "true" : "false";
	/* The reply stored and the transaction committed in one round trip. */
	db_pipeline(app->db, steps, 2, -1, &e);
	free(sealed);
	sealed = NULL;
	if (e != ERR_OK)
		goto fail;
	return true;
fail:
	free(sealed);
	fail_db(app, req, e);
	return false;
}
