#ifndef MP_CHECKOUT_PAGE_H
#define MP_CHECKOUT_PAGE_H

#include <stdint.h>

#include <libpq-fe.h>

#include "app.h"
#include "html.h"
#include "i18n.h"
#include "req.h"

/*
 * The language of a hosted page, made current for gettext: the customer's own choice (the
 * page's ?lang= links), else the session's locale (the merchant's, NULL or "" for none),
 * else the browser's Accept-Language, else English; each one of the languages i18n_init
 * found.
 */
const struct i18n_lang *checkout_page_lang(const struct req *req, const char *session_locale);

/* Opens a page: <html lang dir>, the head with title (text), the language links. */
void checkout_page_start(struct html *h, const struct i18n_lang *l, const char *title);

/*
 * Closes h and sends it with status and the page's headers (s: the session, for the CSP's
 * form-action; may be NULL); frees h. A page whose allocation failed is a 500.
 */
void checkout_page_send(struct req *req, int status, struct html *h, PGresult *s);

/* The headers of every page and redirect: CSP (form-action allows s's URLs), caching. */
void checkout_page_headers(struct req *req, PGresult *s);

/* A page with a heading and one paragraph (both catalog texts): 404s, outcomes. */
void checkout_page_message(struct req *req, const struct i18n_lang *l, int status,
    const char *title, const char *text, PGresult *s);

/*
 * Appends an amount and its currency (NULL: none shown) as l writes numbers, isolated left to right
 * (<bdi dir="ltr">) so that no right-to-left text around it reorders it.
 */
void checkout_page_amount(struct html *h, const struct i18n_lang *l, int64_t minor,
    const char *currency);

/* Appends merchant-supplied text escaped and isolated (<bdi>: its own direction). */
void checkout_page_isolated(struct html *h, const char *text);

#endif
