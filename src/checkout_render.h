#ifndef MP_CHECKOUT_RENDER_H
#define MP_CHECKOUT_RENDER_H

#include <libpq-fe.h>

#include "app.h"
#include "i18n.h"
#include "req.h"

/*
 * The open session's page in language l: merchant, items, total, the payment forms (their
 * action keeps l). s: DB_CHECKOUT_GET's rows (the session, one row per item); error: a
 * message for the customer above the forms, or NULL; account: the account number to keep in
 * its field.
 */
void checkout_render_open(struct app *app, struct req *req, const struct i18n_lang *l,
    PGresult *s, const char *error, const char *account);

/* The page of a session that is no longer open (paid, expired: 410, canceled, ...). */
void checkout_render_closed(struct req *req, const struct i18n_lang *l, PGresult *s,
    const char *status);

/* The session's CSRF token (HMAC of its id under the service's secret), 64 hex digits. */
void checkout_render_csrf(const struct app *app, const char *session_id, char out[65]);

#endif
