#ifndef MP_TEST_CHECKOUT_FORM_H
#define MP_TEST_CHECKOUT_FORM_H

#include "http.h"

/* What the checkout page's forms post, as a browser would (Check assertions inside). */

#define FORM_CT "Content-Type: application/x-www-form-urlencoded"

/* The form's CSRF token for session id, made as the worker makes it (static buffer). */
const char *csrf_of(const char *id);

/* GETs the session's checkout page, as a browser opens it; the reply into r. */
void get_page(const char *id, struct http_resp *r);

/* What the page's test card form posts for the sandbox card that pays (Visa 4242). */
#define TEST_CARD_FIELDS "method=test_card&action=pay&card_number=4242424242424242" \
    "&card_expiry=12%2F99&card_cvc=123"

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

/*
 * An open session of the merchant behind auth: one item of price (JSON number text) and a
 * success URL, which a paying form post answers 303 to; its id into id[37].
 */
void open_session(const char *auth, const char *price, char id[37]);

/* The fields that pay from wallet (PIN 1234), or with wallet NULL by the sandbox test card. */
const char *pay_fields(const char *wallet, char out[256]);

/* open_session, then paid through the page with pay_fields(wallet) (the case checks it). */
void paid_session(const char *auth, const char *price, const char *wallet, char id[37]);

#endif
