#ifndef MP_TEST_CHECKOUT_FORM_H
#define MP_TEST_CHECKOUT_FORM_H

#include "http.h"

/* What the checkout page's forms post, as a browser would (Check assertions inside). */

#define FORM_CT "Content-Type: application/x-www-form-urlencoded"

/* The form's CSRF token for session id, made as the worker makes it (static buffer). */
const char *csrf_of(const char *id);

/* GETs the session's checkout page, as a browser opens it; the reply into r. */
void get_page(const char *id, struct http_resp *r);

/* POSTs "csrf=<token>&<fields>" to the session's checkout page; the reply into r. */
void post_form(const char *id, const char *fields, struct http_resp *r);

/* Pays session id from wallet acct with pin, as the page's wallet form does; reply into r. */
void pay_wallet(const char *id, const char *acct, const char *pin, struct http_resp *r);

/* Pays session id with test card number (expiry 12/99, CVC 123), as the card form does. */
void pay_card(const char *id, const char *number, struct http_resp *r);

/*
 * A paid session of the merchant behind auth: one item at price, user_id user, no redirect
 * URLs, paid from wallet acct with PIN 1234, or with test card 4242 4242 4242 4242 when acct
 * is NULL. Its id into id[37].
 */
void paid_session(const char *auth, const char *price, const char *user, const char *acct,
    char id[37]);

#endif
