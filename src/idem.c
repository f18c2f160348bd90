#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void
fail_db(struct app *app, struct req *req, enum err e)
{
	db_rollback(app->db);
	req_fail_err(req, e);
}

bool
idem_begin(struct app *app, struct req *req)
{
	char wait[24], ttl[24], hash[2 * CRYPTO_SHA256_LEN + 1];
	const char *p[3];
	PGresult *r = NULL;
	enum err e;

	if (req->idempotency_key == NULL)
		return true;
	if (!key_ok(req->idempotency_key)) {
		req_fail(req, 400, "Idempotency-Key must be 1 to %d visible ASCII characters",
		    IDEM_KEY_MAX);
		return false;
	}
	snprintf(wait, sizeof(wait), "%ld", app->cfg.idempotency_wait_ms);
	snprintf(ttl, sizeof(ttl), "%ld", app->cfg.idempotency_ttl);
	if ((e = db_begin(app->db)) != ERR_OK)
		goto fail;
	p[0] = wait;
	if ((r = db_run(app->db, DB_LOCK_TIMEOUT, 1, p, &e)) == NULL)
		goto fail;
	PQclear(r);
	p[0] = req->merchant;
	p[1] = req->idempotency_key;
	p[2] = ttl;
	/* Waits for a request in flight with this key: its reply is then replayed below. */
	if ((r = db_run(app->db, DB_IDEM_LOCK, 2, p, &e)) == NULL)
		goto fail;
	PQclear(r);
	if ((r = db_run(app->db, DB_IDEM_GET, 3, p, &e)) == NULL)
		goto fail;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return true;
	}
	if (request_hash(req, hash, false) != 0) {
		e = ERR_NOMEM;
		goto fail;
	}
	if (strcmp(hash, PQgetvalue(r, 0, IDEM_GET_HASH)) != 0)
		req_fail(req, 422, "Idempotency-Key was already used with a different request");
	else {
		req_reply(req, atoi(PQgetvalue(r, 0, IDEM_GET_STATUS)), "application/json",
		    PQgetvalue(r, 0, IDEM_GET_BODY), (size_t)PQgetlength(r, 0, IDEM_GET_BODY));
		req_add_header(req, "Idempotent-Replayed", "true");
	}
	db_rollback(app->db);
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
	char status[8], hash[2 + 2 * CRYPTO_SHA256_LEN + 1];
	const char *p[5];
	PGresult *r = NULL;
	enum err e = ERR_OK;

	if (req->idempotency_key == NULL)
		return true;
	if (req->status != 200) {
		/* A refusal that counted a PIN attempt keeps it; anything else leaves no trace. */
		if (!req->keep_on_refusal)
			db_rollback(app->db);
		else if ((e = db_commit(app->db)) != ERR_OK)
			goto fail;
		return true;
	}
	snprintf(status, sizeof(status), "%d", req->status);
	if (request_hash(req, hash, true) != 0) {
		e = ERR_NOMEM;
		goto fail;
	}
	p[0] = req->merchant;
	p[1] = req->idempotency_key;
	p[2] = hash;
	p[3] = status;
	p[4] = req->resp;
	if ((r = db_run(app->db, DB_IDEM_PUT, 5, p, &e)) == NULL)
		goto fail;
	PQclear(r);
	if ((e = db_commit(app->db)) != ERR_OK)
		goto fail;
	return true;
fail:
	fail_db(app, req, e);
	return false;
}
