#ifndef MP_INTENT_H
#define MP_INTENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "app.h"
#include "err.h"
#include "jtext.h"
#include "req.h"
#include "valid.h"

/* The body fields of every endpoint after the sale: how much (absent = all left) and why. */
struct intent_in {
	int64_t amount;          /* minor units, when has_amount */
	bool has_amount;
	const char *reason;      /* NULL = none; points into the JSON */
};

#define INTENT_REASON_MAX 500

/* The two field table rows for a struct intent_in at m in a struct t (m: "name." or empty). */
#define INTENT_FIELDS(t, m) \
	{ "amount", VALID_MONEY, false, false, 0, NULL, NULL, offsetof(t, m amount), \
	  offsetof(t, m has_amount) }, \
	{ "reason", VALID_STRING, false, false, INTENT_REASON_MAX, NULL, NULL, \
	  offsetof(t, m reason), VALID_NO_PRESENT }

/*
 * Appends members the database does not know to an object in t's text from offset from,
 * its members at depth (see jtext_member): a session's url (session_url).
 */
typedef void intent_finish(const struct app *app, struct jtext *t, size_t from, int depth);

/*
 * Appends PostgreSQL's JSON object (len bytes of text) as jtext_pg does, then finish's
 * members (finish NULL: none) after its own.
 */
void intent_object_text(const struct app *app, struct jtext *t, const char *text, size_t len,
    bool members, intent_finish *finish);

/*
 * What the endpoints after the sale share: a statement that returns one API object as JSON
 * (a refund, a reversal) or raises one of the service's SQLSTATEs.
 */
struct intent_reply {
	const char *id;        /* the path parameter's form: "re_" and 32 hex digits; NULL = UUID */
	const char *message;   /* the 200's "message"; NULL: none */
	const char *key;       /* the object's key in the 200 body ("refund"); NULL: its members
	                          are the body's, after the message */
	const char *notfound;  /* the 404's message: no row, or SQLSTATE_NOT_FOUND */
	/* Appends members the database does not know after the object's own; NULL: none */
	intent_finish *finish;
};

/*
 * Checks req->param has the form out->id (else 404 without asking the database), runs stmt
 * with n params and answers req: 200 with {status_code, success, message, key:
 * the object}; 404 with out->notfound; 400 with the database's own message for the other
 * refusals of src/sqlstate.h (they name the field and the rule), 409 for an event being
 * delivered, 429 with Retry-After for too many redeliveries. Returns ERR_OK when it
 * answered, else the error for the pipeline to answer (nothing was answered).
 */
enum err intent_run(struct app *app, struct req *req, int stmt, int n, const char *const *params,
    const struct intent_reply *out);

/*
 * Answers req 200 with {status_code, success, message, key: column col of row 0 of r} (see
 * struct intent_reply), the object's JSON as PostgreSQL wrote it. 0, or -1 (nothing
 * answered) on ENOMEM or a column that is not a JSON object.
 */
int intent_reply_object(const struct app *app, struct req *req, const struct intent_reply *out,
    PGresult *r, int col);

/*
 * GET of one object (its id in req->param): as intent_run with stmt ($1 the id, $2 the
 * merchant), or, with the key not looked up yet (the route's own_auth), with stmt_key ($1
 * the key's digest, $2 the environment, $3 the id; enum intent_key_col), which looks it up:
 * no row answers the 401.
 */
enum err intent_get(struct app *app, struct req *req, int stmt, int stmt_key,
    const struct intent_reply *out);

/*
 * Runs stmt with n params: ERR_OK with the result in *res (caller PQclears); or a refusal
 * of the service's SQLSTATEs answered as intent_run answers it (404 notfound, 400 the
 * database's message), ERR_OK with *res NULL; or another error for the pipeline to answer.
 */
enum err intent_call(struct app *app, struct req *req, int stmt, int n,
    const char *const *params, const char *notfound, PGresult **res);

/* True when s is prefix followed by 32 lowercase hex digits: the form of our object ids. */
bool intent_id_ok(const char *s, const char *prefix);

/* The amount as a SQL parameter: its minor units in buf, or NULL when none was given. */
const char *intent_amount(const struct intent_in *in, char buf[24]);

#endif
