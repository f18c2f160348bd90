/* The hosted checkout page: one session, its items, the payment forms, the outcome. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkout.h"
#include "crypto.h"
#include "form.h"
#include "html.h"
#include "log.h"
#include "money.h"
#include "pay.h"
#include "valid.h"

#define FIELD_MAX 128

static void
security_headers(struct req *req, PGresult *s)
{
	char csp[1024] = "default-src 'none'; style-src 'self'; img-src 'self'; "
	    "base-uri 'none'; frame-ancestors 'none'; form-action 'self'";
	int c, cols[2] = { CHECKOUT_GET_SUCCESS_URL, CHECKOUT_GET_FAILURE_URL };
	size_t i, n;

	/* Browsers apply form-action to the redirect after the form too: allow the merchant's. */
	for (i = 0; s != NULL && i < 2; i++) {
		c = cols[i];
		if (PQgetisnull(s, 0, c))
			continue;
		const char *u = PQgetvalue(s, 0, c), *host = strstr(u, "://");
		n = host ? (size_t)(host + 3 - u) + strcspn(host + 3, "/?#") : 0;
		if (n > 0 && n < 256 && strspn(u + (host + 3 - u),
		    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") >=
		    n - (size_t)(host + 3 - u))
			snprintf(csp + strlen(csp), sizeof(csp) - strlen(csp), " %.*s", (int)n, u);
	}
	req_add_header(req, "Content-Security-Policy", csp);
	req_add_header(req, "X-Frame-Options", "DENY");
	req_add_header(req, "Referrer-Policy", "no-referrer");
	req_add_header(req, "Cache-Control", "no-store");
	req_add_header(req, "X-Content-Type-Options", "nosniff");
}

static void
page_start(struct html *h, const char *title)
{
	html_raw(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	html_text(h, title);
	html_raw(h, "</title>\n<link rel=\"stylesheet\" href=\"/static/checkout.css\">\n"
	    "</head>\n<body>\n<main class=\"checkout\">\n");
}

static void
send_page(struct req *req, int status, struct html *h, PGresult *s)
{
	html_raw(h, "</main>\n</body>\n</html>\n");
	security_headers(req, s);
	if (h->failed)
		req_reply(req, 500, "text/plain; charset=utf-8", "internal error\n", 15);
	else
		req_reply(req, status, "text/html; charset=utf-8", h->p, h->len);
	html_free(h);
}

/* A page with a heading and one paragraph: 404s, outcomes, closed sessions. */
static void
message_page(struct req *req, int status, const char *title, const char *text, PGresult *s)
{
	struct html h = { 0 };

	page_start(&h, title);
	html_raw(&h, "<h1>");
	html_text(&h, title);
	html_raw(&h, "</h1>\n<p class=\"message\">");
	html_text(&h, text);
	html_raw(&h, "</p>\n");
	send_page(req, status, &h, s);
}

static void
csrf_token(const struct app *app, const char *session_id, char out[65])
{
	unsigned char md[CRYPTO_SHA256_LEN];
	char msg[64];

	snprintf(msg, sizeof(msg), "csrf:%s", session_id);
	if (crypto_hmac_sha256(app->secret, sizeof(app->secret), msg, strlen(msg), md) != 0)
		memset(md, 0, sizeof(md));
	crypto_hex(md, sizeof(md), out);
}

static void
render_items(struct html *h, PGresult *s, PGresult *items)
{
	char amount[MONEY_BUFLEN];
	int i;

	html_raw(h, "<table class=\"items\">\n<caption>Order</caption>\n");
	for (i = 0; i < PQntuples(items); i++) {
		html_raw(h, "<tr><td class=\"name\">");
		html_text(h, PQgetvalue(items, i, SESSION_ITEMS_NAME));
		html_raw(h, "</td><td class=\"price\">%s</td></tr>\n", money_format(
		    strtoll(PQgetvalue(items, i, SESSION_ITEMS_PRICE), NULL, 10), amount));
	}
	html_raw(h, "<tr class=\"total\"><th>Total</th><td>%s ",
	    money_format(strtoll(PQgetvalue(s, 0, CHECKOUT_GET_AMOUNT), NULL, 10), amount));
	html_text(h, PQgetvalue(s, 0, CHECKOUT_GET_CURRENCY));
	html_raw(h, "</td></tr>\n</table>\n<p class=\"expiry\">This page expires at ");
	html_text(h, PQgetvalue(s, 0, CHECKOUT_GET_EXPIRES));
	html_raw(h, " UTC.</p>\n");
}

static void
form_start(struct html *h, const char *id, const char *token, const char *cls)
{
	html_raw(h, "<form method=\"post\" action=\"/checkout/%s\" class=\"%s\">\n"
	    "<input type=\"hidden\" name=\"csrf\" value=\"%s\">\n", id, cls, token);
}

/* error: shown above the forms; account: the account number to keep in its field. */
static void
render_open(struct app *app, struct req *req, PGresult *s, PGresult *items, const char *error,
    const char *account)
{
	const char *id = PQgetvalue(s, 0, CHECKOUT_GET_ID);
	char token[65], amount[MONEY_BUFLEN], title[300];
	struct html h = { 0 };

	csrf_token(app, id, token);
	money_format(strtoll(PQgetvalue(s, 0, CHECKOUT_GET_AMOUNT), NULL, 10), amount);
	snprintf(title, sizeof(title), "Pay %s", PQgetvalue(s, 0, CHECKOUT_GET_MERCHANT));
	page_start(&h, title);
	html_raw(&h, "<header>\n<p class=\"merchant\">");
	html_text(&h, PQgetvalue(s, 0, CHECKOUT_GET_MERCHANT));
	html_raw(&h, "</p>\n<h1>Pay %s ", amount);
	html_text(&h, PQgetvalue(s, 0, CHECKOUT_GET_CURRENCY));
	html_raw(&h, "</h1>\n</header>\n");
	render_items(&h, s, items);
	if (error != NULL) {
		html_raw(&h, "<p class=\"error\" role=\"alert\">");
		html_text(&h, error);
		html_raw(&h, "</p>\n");
	}
	form_start(&h, id, token, "pay wallet");
	html_raw(&h, "<h2>Pay from your wallet</h2>\n<input type=\"hidden\" name=\"method\" "
	    "value=\"wallet\">\n<label>Account number <input name=\"account_number\" "
	    "autocomplete=\"off\" required maxlength=\"32\" value=\"");
	html_text(&h, account != NULL ? account : "");
	html_raw(&h, "\"></label>\n<label>PIN <input "
	    "name=\"pin\" type=\"password\" inputmode=\"numeric\" autocomplete=\"off\" required "
	    "maxlength=\"12\"></label>\n<button type=\"submit\" name=\"action\" value=\"pay\">"
	    "Pay %s ", amount);
	html_text(&h, PQgetvalue(s, 0, CHECKOUT_GET_CURRENCY));
	html_raw(&h, " from wallet</button>\n</form>\n");
	if (app->cfg.environment == CONFIG_SANDBOX) {
		form_start(&h, id, token, "pay test-card");
		html_raw(&h, "<h2>Pay with a test card</h2>\n<input type=\"hidden\" name=\"method\""
		    " value=\"test_card\">\n<label>Card number <input name=\"card_number\" "
		    "inputmode=\"numeric\" autocomplete=\"off\" required maxlength=\"23\"></label>\n"
		    "<label>Expiry (MM/YY) <input name=\"card_expiry\" autocomplete=\"off\" required "
		    "maxlength=\"5\" placeholder=\"MM/YY\"></label>\n<label>Security code <input "
		    "name=\"card_cvc\" inputmode=\"numeric\" autocomplete=\"off\" required "
		    "maxlength=\"4\"></label>\n<button type=\"submit\" name=\"action\" "
		    "value=\"pay\">Pay %s by card</button>\n<details><summary>Sandbox test cards</summary>\n"
		    "<ul><li>4242 4242 4242 4242: paid</li><li>4000 0000 0000 0002: declined</li>"
		    "<li>4000 0000 0000 9995: declined, insufficient funds</li></ul>\n"
		    "<p>Any future expiry, any three-digit code.</p></details>\n</form>\n", amount);
	}
	form_start(&h, id, token, "cancel");
	html_raw(&h, "<button type=\"submit\" name=\"action\" value=\"cancel\" class=\"secondary\">"
	    "Cancel and return to the shop</button>\n</form>\n");
	send_page(req, 200, &h, s);
}

static const char *
closed_text(const char *status)
{
	if (strcmp(status, "paid") == 0)
		return "This order is already paid. Nothing more to do here.";
	if (strcmp(status, "expired") == 0)
		return "This payment page has expired. Return to the shop to start again.";
	if (strcmp(status, "canceled") == 0)
		return "This payment was canceled.";
	if (strcmp(status, "refunded") == 0)
		return "This order was paid and has since been refunded.";
	return "This payment did not go through. Return to the shop to try again.";
}

static void
render_closed(struct req *req, PGresult *s, const char *status)
{
	message_page(req, strcmp(status, "expired") == 0 ? 410 : 200,
	    strcmp(status, "paid") == 0 ? "Already paid" : strcmp(status, "expired") == 0 ?
	    "Payment page expired" : strcmp(status, "refunded") == 0 ? "Payment refunded" :
	    "Payment not completed", closed_text(status), s);
}

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
finish(struct req *req, PGresult *s, bool ok, const char *message)
{
	int col = ok ? CHECKOUT_GET_SUCCESS_URL : CHECKOUT_GET_FAILURE_URL;
	const char *user;
	char *url;

	if (PQgetisnull(s, 0, col)) {
		message_page(req, 200, ok ? "Payment received" : "Payment not completed",
		    ok ? "Thank you: your payment went through. You can close this page." :
		    message, s);
		return;
	}
	user = PQgetisnull(s, 0, CHECKOUT_GET_USER) ? NULL : PQgetvalue(s, 0, CHECKOUT_GET_USER);
	if ((url = return_url(PQgetvalue(s, 0, col), PQgetvalue(s, 0, CHECKOUT_GET_ID), user)) ==
	    NULL) {
		req_fail(req, 500, "internal error");
		return;
	}
	security_headers(req, s);
	req_add_header(req, "Location", url);
	req_reply(req, 303, "text/plain; charset=utf-8", "", 0);
	free(url);
}

/* Loads the session and its items; on failure leaves a response in req and returns false. */
static bool
load(struct app *app, struct req *req, PGresult **s, PGresult **items)
{
	const char *p[1] = { req->param };
	enum err e;

	*s = *items = NULL;
	if (!valid_uuid(req->param)) {
		message_page(req, 404, "Page not found", "There is no payment page here.", NULL);
		return false;
	}
	if (!app->have_secret || !db_ready(app->db)) {
		message_page(req, 503, "Temporarily unavailable",
		    "Payments are unavailable for a moment. Please try again shortly.", NULL);
		return false;
	}
	if ((*s = db_run(app->db, DB_CHECKOUT_GET, 1, p, &e)) == NULL ||
	    (PQntuples(*s) == 1 && (*items = db_run(app->db, DB_SESSION_ITEMS, 1, p, &e)) == NULL)) {
		message_page(req, err_http_status(e), "Something went wrong",
		    "Please try again shortly.", NULL);
		return false;
	}
	if (PQntuples(*s) != 1) {
		message_page(req, 404, "Page not found", "There is no payment page here.", NULL);
		return false;
	}
	return true;
}

enum err
checkout_get(struct app *app, struct req *req, void *in)
{
	PGresult *s = NULL, *items = NULL;

	if (load(app, req, &s, &items)) {
		if (strcmp(PQgetvalue(s, 0, CHECKOUT_GET_STATUS), "open") == 0)
			render_open(app, req, s, items, NULL, NULL);
		else
			render_closed(req, s, PQgetvalue(s, 0, CHECKOUT_GET_STATUS));
	}
	PQclear(items);
	PQclear(s);
	(void)in;
	return ERR_OK;
}

/*
 * Reads field name into out ("" when absent, malformed or too long) and checks it before it
 * goes anywhere near a query: NULL when it is fine, else the message for the customer.
 */
static const char *
field(const struct req *req, const char *name, char out[FIELD_MAX])
{
	if (form_get(req->body, req->body_len, name, out, FIELD_MAX) < 0)
		out[0] = '\0';
	return form_check(name, out);
}

enum err
checkout_post(struct app *app, struct req *req, void *in)
{
	char csrf[FIELD_MAX], want[65], action[FIELD_MAX] = "", method[FIELD_MAX] = "";
	char a[FIELD_MAX] = "", b[FIELD_MAX] = "", c[FIELD_MAX] = "";
	struct pay_outcome out = { 0 };
	PGresult *s = NULL, *items = NULL;
	const char *bad;

	if (!load(app, req, &s, &items))
		goto out;
	field(req, "csrf", csrf);
	csrf_token(app, req->param, want);
	if (strlen(csrf) != 64 || !crypto_equal(csrf, want, 64)) {
		message_page(req, 403, "Form expired", "Reload the payment page and try again.", s);
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
		bad = "Choose a way to pay.";
	crypto_wipe(b, sizeof(b));
	crypto_wipe(c, sizeof(c));
	if (strcmp(method, "wallet") != 0 || !valid_utf8(a, strlen(a)))
		crypto_wipe(a, sizeof(a));  /* only an account number goes back into its field */
	if (bad != NULL) {
		out.result = PAY_RETRY;
		snprintf(out.message, sizeof(out.message), "%s", bad);
	}
	switch (out.result) {
	case PAY_PAID:
		finish(req, s, true, NULL);
		break;
	case PAY_FAILED:
		finish(req, s, false, out.message);
		break;
	case PAY_RETRY:
		/* The session may have expired meanwhile: the page says so rather than retry. */
		if (strcmp(PQgetvalue(s, 0, CHECKOUT_GET_STATUS), "open") == 0)
			render_open(app, req, s, items, out.message, a);
		else
			render_closed(req, s, PQgetvalue(s, 0, CHECKOUT_GET_STATUS));
		break;
	case PAY_CLOSED:
		/*
		 * A pay that finds the session paid is, in practice, the customer's retry (a double
		 * click, a reload after a lost answer): it lands where the payment did.
		 */
		if (strcmp(out.status, "paid") == 0 && strcmp(action, "pay") == 0)
			finish(req, s, true, NULL);
		else if (strcmp(out.status, "canceled") == 0 && strcmp(action, "cancel") == 0)
			finish(req, s, false, "The payment was canceled.");
		else
			render_closed(req, s, out.status);
		break;
	default:
		message_page(req, out.http_status ? out.http_status : 500, "Something went wrong",
		    "Your payment was not taken. Please try again shortly.", s);
	}
out:
	PQclear(items);
	PQclear(s);
	(void)in;
	return ERR_OK;
}
