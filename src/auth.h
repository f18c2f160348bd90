#ifndef MP_AUTH_H
#define MP_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "apikey.h"
#include "app.h"
#include "err.h"
#include "req.h"

/*
 * Parses an Authorization header of the form "API-KEY <key>" (scheme case-insensitive, one
 * space, a key of letters, digits and '_'). Returns ERR_OK with *key and *keylen pointing into
 * header, or ERR_AUTH.
 */
enum err auth_parse(const char *header, const char **key, size_t *keylen);

/*
 * Authenticates req by its API key: the key must parse, carry this environment's prefix and
 * match an active key of an active merchant. On success sets req->merchant_id and
 * req->merchant_currency and returns true; otherwise sets a 401 {detail} (or 500/503)
 * response and returns false. The reply never tells which check failed.
 */
bool auth_request(struct app *app, struct req *req, const char *detail);

/*
 * For a request whose first statement looks the key up itself (the handler's, or with an
 * Idempotency-Key idem_begin's: one round trip less): only the key's form and prefix are
 * checked here (else the 401, false); req->auth_deferred is set and the digest kept.
 */
bool auth_defer(struct app *app, struct req *req, const char *detail);

/*
 * The merchant of a key found by a statement whose first columns are DB_AUTH_KEY's (row 0)
 * into req: 0, or -1 on ENOMEM.
 */
int auth_take(struct req *req, const PGresult *r);

/*
 * A deferred key looked up now, before a refusal is answered, so that a bad key answers 401
 * as it would have first: true when the key is good (or was never deferred), else the 401
 * (or 500/503) replaces whatever req held. Clears req->auth_deferred.
 */
bool auth_settle(struct app *app, struct req *req);

/*
 * The deferred key, from r, the result of a statement that looked it up (its first columns
 * DB_AUTH_KEY's; no row: refused). True with req's merchant set; else false with r cleared
 * and *e ERR_OK when the 401 was answered, ERR_NOMEM otherwise. Clears req->auth_deferred.
 */
bool auth_found(struct req *req, PGresult *r, enum err *e);

/*
 * Notes the use of the request's (accepted) key on its own, as its lookup does when the last
 * note is 10 minutes old: after a transaction that held the note was rolled back.
 */
void auth_note_again(struct app *app, struct req *req);

#endif
