/* The hosted checkout page: one session, its items, the payment forms, the outcome. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkout.h"
#include "checkout_page.h"
#include "checkout_render.h"
#include "crypto.h"
#include "form.h"
#include "html.h"
#include "i18n.h"
#include "log.h"
#include "money.h"
#include "pay.h"
#include "valid.h"

#define FIELD_MAX 128

/*
 * The merchant's URL with session_id and user_id added to its query (existing query kept,
 * values percent-encoded, before any fragment). NULL on ENOMEM.
 */
static char *
return_url(const char *url, const char *session_id, const char *user_id)
{
	char *sid = html_url_encode(session_id), *uid = html_url_encode(user_id ? user_id : "");
	size_t base = strcspn(url, "#"), n;
	char *out = NULL;

	if (sid == NULL || uid == NULL)
		goto out;
	n = strlen(url) + strlen(sid) + strlen(uid) + 32;
	if ((out = malloc(n)) == NULL)
		goto out;
	snprintf(out, n, "%.*s%ssession_id=%s%s%s%s", (int)base, url,
	    memchr(url, '?', base) == NULL ? "?" : url[base - 1] == '?' || url[base - 1] == '&' ?
	    "" : "&", sid, user_id ? "&user_id=" : "", user_id ? uid : "", url + base);
out:
	free(sid);
	free(uid);
	return out;
}

static void
finish(struct req *req, const struct i18n_lang *l, PGresult *s, bool ok, const char *message)
{
	int col = ok ? CHECKOUT_GET_SUCCESS_URL : CHECKOUT_GET_FAILURE_URL;
	const char *user;
	char *url;

	if (PQgetisnull(s, 0, col)) {
		checkout_page_message(req, l, 200, ok ? _("Payment received") :
		    _("Payment not completed"), ok ? _("Thank you: your payment went through. "
		    "You can close this page.") : message, s);
		return;
	}
	user = PQgetisnull(s, 0, CHECKOUT_GET_USER) ? NULL : PQgetvalue(s, 0, CHECKOUT_GET_USER);
	if ((url = return_url(PQgetvalue(s, 0, col), PQgetvalue(s, 0, CHECKOUT_GET_ID), user)) ==
	    NULL) {
		req_fail(req, 500, "internal error");
		return;
	}
	checkout_page_headers(req, s);
	req_add_header(req, "Location", url);
	req_reply(req, 303, "text/plain; charset=utf-8", "", 0);
	free(url);
}

/*
 * A page answered 503 because of the database says when to try again, as the API does
 * (req_fail_err): the next request may well find it back.
 */
static void
retry_after(struct req *req, int status)
{
	if (status == 503)
		req_add_header(req, "Retry-After", "1");
}

/*
 * Loads the session with its items (one row each) and sets *l, the page's language (the
 * session's locale counts once it is loaded); on failure leaves a response in req and returns
 * false.
 */
static bool
load(struct app *app, struct req *req, PGresult **s, const struct i18n_lang **l)
{
	const char *p[1] = { req->param };
	enum err e;

	*s = NULL;
	*l = checkout_page_lang(req, NULL);
	if (!valid_uuid(req->param)) {
		checkout_page_message(req, *l, 404, _("Page not found"),
		    _("There is no payment page here."), NULL);
		return false;
	}
	if (!app->have_secret || !db_ready(app->db)) {
		checkout_page_message(req, *l, 503, _("Temporarily unavailable"),
		    _("Payments are unavailable for a moment. Please try again shortly."), NULL);
		/* Without the key (the operator's to fix) no retry helps. */
		if (app->have_secret)
			retry_after(req, 503);
		return false;
	}
	if ((*s = db_run(app->db, DB_CHECKOUT_GET, 1, p, &e)) == NULL) {
		checkout_page_message(req, *l, err_http_status(e), _("Something went wrong"),
		    _("Please try again shortly."), NULL);
		retry_after(req, err_http_status(e));
		return false;
	}
	if (PQntuples(*s) == 0) {
		checkout_page_message(req, *l, 404, _("Page not found"),
		    _("There is no payment page here."), NULL);
		return false;
	}
	*l = checkout_page_lang(req, PQgetisnull(*s, 0, CHECKOUT_GET_LOCALE) ? NULL :
	    PQgetvalue(*s, 0, CHECKOUT_GET_LOCALE));
	return true;
}

enum err
checkout_get(struct app *app, struct req *req, void *in)
{
	PGresult *s = NULL;
	const struct i18n_lang *l;

	if (load(app, req, &s, &l)) {
		if (strcmp(PQgetvalue(s, 0, CHECKOUT_GET_STATUS), "open") == 0)
			checkout_render_open(app, req, l, s, NULL, NULL);
		else
			checkout_render_closed(req, l, s, PQgetvalue(s, 0, CHECKOUT_GET_STATUS));
	}
	PQclear(s);
	(void)in;
	return ERR_OK;
}

/*
 * Reads field name into out ("" when absent, malformed or too long), its Eastern Arabic-Indic
 * digits made ASCII (a customer types either), and checks it before it goes anywhere near a
 * query: NULL when it is fine, else the message for the customer (untranslated).
 */
static const char *
field(const struct req *req, const char *name, char out[FIELD_MAX])
{
	if (form_get(req->body, req->body_len, name, out, FIELD_MAX) < 0)
		out[0] = '\0';
	i18n_ascii_digits(out);
	return form_check(name, out);
}

enum err
checkout_post(struct app *app, struct req *req, void *in)
{
	char csrf[FIELD_MAX], want[65], action[FIELD_MAX] = "", method[FIELD_MAX] = "";
	char a[FIELD_MAX] = "", b[FIELD_MAX] = "", c[FIELD_MAX] = "";
	struct pay_outcome out = { 0 };
	PGresult *s = NULL;
	const struct i18n_lang *l;
	const char *bad;

	if (!load(app, req, &s, &l))
		goto out;
	field(req, "csrf", csrf);
	checkout_render_csrf(app, req->param, want);
	if (strlen(csrf) != 64 || !crypto_equal(csrf, want, 64)) {
		checkout_page_message(req, l, 403, _("Form expired"),
		    _("Reload the payment page and try again."), s);
		goto out;
	}
	if ((bad = field(req, "action", action)) == NULL)
		bad = field(req, "method", method);
	if (bad == NULL && strcmp(action, "cancel") == 0)
		pay_cancel(app, req->param, &out);
	else if (bad == NULL && strcmp(action, "pay") == 0 && strcmp(method, "wallet") == 0) {
		if ((bad = field(req, "account_number", a)) == NULL &&
		    (bad = field(req, "pin", b)) == NULL)
			pay_wallet(app, req->param, a, b, &out);
	} else if (bad == NULL && strcmp(action, "pay") == 0 && strcmp(method, "test_card") == 0) {
		if ((bad = field(req, "card_number", a)) == NULL &&
		    (bad = field(req, "card_expiry", b)) == NULL &&
		    (bad = field(req, "card_cvc", c)) == NULL)
			pay_test_card(app, req->param, a, b, c, &out);
	} else if (bad == NULL)
		bad = N_("Choose a way to pay.");
	crypto_wipe(b, sizeof(b));
	crypto_wipe(c, sizeof(c));
	if (strcmp(method, "wallet") != 0 || !valid_utf8(a, strlen(a)))
		crypto_wipe(a, sizeof(a));  /* only an account number goes back into its field */
	if (bad != NULL) {
		out.result = PAY_RETRY;
		snprintf(out.message, sizeof(out.message), "%s", _(bad));
	}
	switch (out.result) {
	case PAY_PAID:
		finish(req, l, s, true, NULL);
		break;
	case PAY_FAILED:
		finish(req, l, s, false, out.message);
		break;
	case PAY_RETRY:
		/* The session may have expired meanwhile: the page says so rather than retry. */
		if (strcmp(PQgetvalue(s, 0, CHECKOUT_GET_STATUS), "open") == 0)
			checkout_render_open(app, req, l, s, out.message, a);
		else
			checkout_render_closed(req, l, s, PQgetvalue(s, 0, CHECKOUT_GET_STATUS));
		break;
	case PAY_CLOSED:
		/*
		 * A pay that finds the session paid is, in practice, the customer's retry (a double
		 * click, a reload after a lost answer): it lands where the payment did.
		 */
		if (strcmp(out.status, "paid") == 0 && strcmp(action, "pay") == 0)
			finish(req, l, s, true, NULL);
		else if (strcmp(out.status, "canceled") == 0 && strcmp(action, "cancel") == 0)
			finish(req, l, s, false, _("The payment was canceled."));
		else
			checkout_render_closed(req, l, s, out.status);
		break;
	default:
		checkout_page_message(req, l, out.http_status ? out.http_status : 500,
		    _("Something went wrong"),
		    _("Your payment was not taken. Please try again shortly."), s);
		retry_after(req, out.http_status);
	}
out:
	PQclear(s);
	(void)in;
	return ERR_OK;
}
