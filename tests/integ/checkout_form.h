#ifndef MP_TEST_CHECKOUT_FORM_H
#define MP_TEST_CHECKOUT_FORM_H

#include "http.h"

/* What the checkout page's forms post, as a browser would (Check assertions inside). */

#define FORM_CT "Content-Type: application/x-www-form-urlencoded"

/* The form's CSRF token for session id, made as the worker makes it (static buffer). */
const char *csrf_of(const char *id);

/* POSTs "csrf=<token>&<fields>" to the session's checkout page; the reply into r. */
void post_form(const char *id, const char *fields, struct http_resp *r);

#endif
