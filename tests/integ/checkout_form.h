#ifndef MP_TEST_CHECKOUT_FORM_H
#define MP_TEST_CHECKOUT_FORM_H

#include "http.h"

/* What the checkout page's forms post, as a browser would (Check assertions inside). */

#define FORM_CT "Content-Type: application/x-www-form-urlencoded"

/* The form's CSRF token for session id, made as the worker makes it (static buffer). */
const char *csrf_of(const char *id);

/* GETs the session's checkout page, as a browser opens it; the reply into r. */
void get_page(const char *id, struct http_resp *r);

/* A post of the page's form of session id: its path and "csrf=<token>&<fields>", and req. */
struct form_post {
	char path[128];
	char body[2048];
	struct http_req req;    /* POST path, form content type, body: for http_parallel_reqs */
};

/* Makes f the post of fields to session id's checkout page (f must outlive f->req's use). */
void form_post(const char *id, const char *fields, struct form_post *f);

/* POSTs "csrf=<token>&<fields>" to the session's checkout page; the reply into r. */
void post_form(const char *id, const char *fields, struct http_resp *r);

/* The fields of the page's wallet form paying from acct with pin, into out. */
const char *wallet_fields(const char *acct, const char *pin, char out[256]);

/* Pays session id from wallet acct with pin, as the page's wallet form does; reply into r. */
void pay_wallet(const char *id, const char *acct, const char *pin, struct http_resp *r);

/* Pays session id with test card number (expiry 12/99, CVC 123), as the card form does. */
void pay_card(const char *id, const char *number, struct http_resp *r);

/* The sandbox test card that pays. */
#define TEST_CARD "4242424242424242"

/* The fields of the page's card form paying with test card number, into out. */
const char *card_fields(const char *number, char out[256]);

/* The fields that pay from wallet acct with PIN 1234, or (acct NULL) with TEST_CARD. */
const char *pay_fields(const char *acct, char out[256]);

/*
 * An open session of the merchant behind auth: one item at price, user_id user, no redirect
 * URLs (a payment then answers the page's 200 "Payment received"). Its id into id[37].
 */
void open_session(const char *auth, const char *price, const char *user, char id[37]);

/* The reply r of a form post paid session id: the page says so, and the session is paid. */
void assert_paid(const struct http_resp *r, const char *id);

/*
 * Session id reads expired on its page (410, saying so, no form), and a wallet payment from
 * acct (holding 50.00, PIN 1234) posted from a page left open is refused (410), moving
 * nothing.
 */
void assert_page_expired(const char *id, const char *acct);

/* open_session, paid through the page with pay_fields(acct) (the case checks it). */
void paid_session(const char *auth, const char *price, const char *user, const char *acct,
    char id[37]);

#endif
