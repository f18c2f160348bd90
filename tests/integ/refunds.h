#ifndef MP_TEST_REFUNDS_H
#define MP_TEST_REFUNDS_H

#include <json-c/json.h>

#include "http.h"

/*
 * What the refund and reversal suites share: the endpoints of refunds and transfer reversals,
 * the objects they answer with (R, a refund; V, a reversal), and the ledger behind them
 * (Check assertions inside).
 */

#define REFUND_DENY "Invalid or missing API key."
#define TRANSFER_DENY "Authentication credentials were not provided or are invalid."
/* A timestamp as the API writes it (mp_iso). */
#define ISO_UTC "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\+00:00$"

/*
 * Sends method to the path fmt makes, as auth (an Authorization line, or NULL), with extra
 * (another header line, or NULL) and body (NULL: none) as JSON; the reply into r.
 */
void api(const char *method, const char *auth, const char *extra, const char *body,
    struct http_resp *r, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* The paths of a session's refunds and a transfer's reversals (static buffers). */
const char *refunds_path(const char *sid);
const char *reversals_path(const char *tr);

/* POSTs body to sessions/{sid}/refunds (transfers/{tr}/reversals) as auth; reply into r. */
void refund_post(const char *auth, const char *sid, const char *body, struct http_resp *r);
void reversal_post(const char *auth, const char *tr, const char *body, struct http_resp *r);

/*
 * Sends body to path (a POST) as auth, which must be refused with status and a message
 * holding needle, and leave the database exactly as it was (db_footprint).
 */
void assert_refused(const char *auth, const char *path, const char *body, long status,
    const char *needle);

/*
 * Idempotency-Key as merchant (its id) with auth: body POSTed to path twice under a new key
 * (tag and the pid make it) must be answered once and replayed once (Idempotent-Replayed:
 * true, the same body); other under the key, 422; the key held as by a request in flight,
 * 409. The first reply into r.
 */
void assert_idempotent(const char *merchant, const char *auth, const char *path,
    const char *tag, const char *body, const char *other, struct http_resp *r);

/* A string member of o, or NULL when it is absent or JSON null. */
const char *jstr(struct json_object *o, const char *key);

/*
 * A 200 answering a refund (message "Refund succeeded." to a POST, "Refund found." to a GET):
 * its R (owned by r). A 200 answering a reversal ("Transfer reversed."): its V.
 */
struct json_object *refund_of(const struct http_resp *r, const char *message);
struct json_object *reversal_of(const struct http_resp *r);

/*
 * Every field of refund R: an id re_<32 hex>, session sid, amount, currency AFN, status
 * succeeded, reason (NULL: JSON null), created_at in UTC, nrev reversals (each checked with
 * check_reversal against R's id and reason).
 */
void check_refund(struct json_object *R, const char *sid, const char *amount,
    const char *reason, int nrev);

/*
 * Every field of reversal V: an id trr_<32 hex>, transfer tr (NULL: any), amount (NULL: any),
 * currency AFN, reason (NULL: JSON null), refund_id (NULL: JSON null), created_at in UTC.
 */
void check_reversal(struct json_object *V, const char *tr, const char *amount,
    const char *reason, const char *refund_id);

/* R's reversal of transfer tr (checked with check_reversal for amount), or a failed case. */
struct json_object *reversal_in(struct json_object *R, const char *tr, const char *amount);

/*
 * The ledger transaction of refund (re_) or reversal (trr_) id as "kind merchant_id
 * account:amount,..." (entries by amount, then account number; static buffer).
 */
const char *ledger_of(const char *id);

/* The webhook event of type (refund.succeeded, transfer.reversed) about refund or reversal
 * id: its evt_ id (static buffer). */
const char *event_of(const char *type, const char *id);

/* The number of the sandbox funding account of AFN, which test cards draw on (static). */
const char *funding_account(void);

#endif
