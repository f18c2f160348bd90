/* The hosted checkout page's contents: the open session with its forms, or how it ended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkout_page.h"
#include "checkout_render.h"
#include "crypto.h"
#include "html.h"

void
checkout_render_csrf(const struct app *app, const char *session_id, char out[65])
{
	unsigned char md[CRYPTO_SHA256_LEN];
	char msg[64];

	snprintf(msg, sizeof(msg), "csrf:%s", session_id);
	if (crypto_hmac_sha256(app->secret, sizeof(app->secret), msg, strlen(msg), md) != 0)
		memset(md, 0, sizeof(md));
	crypto_hex(md, sizeof(md), out);
}

static int64_t
minor(PGresult *r, int row, int col)
{
	return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static void
render_items(struct html *h, const struct i18n_lang *l, PGresult *s)
{
	const char *currency = PQgetvalue(s, 0, CHECKOUT_GET_CURRENCY);
	char when[64], iso[32];
	struct html at = { 0 };
	int i;

	html_raw(h, "<table class=\"items\">\n<caption>");
	html_text(h, _("Order"));
	html_raw(h, "</caption>\n");
	for (i = 0; i < PQntuples(s); i++) {
		if (PQgetisnull(s, i, CHECKOUT_GET_ITEM_NAME))
			continue;
		html_raw(h, "<tr><td class=\"name\">");
		checkout_page_isolated(h, PQgetvalue(s, i, CHECKOUT_GET_ITEM_NAME));
		html_raw(h, "</td><td class=\"price\">");
		checkout_page_amount(h, l, minor(s, i, CHECKOUT_GET_ITEM_PRICE), NULL);
		html_raw(h, "</td></tr>\n");
	}
	html_raw(h, "<tr class=\"total\"><th>");
	html_text(h, _("Total"));
	html_raw(h, "</th><td>");
	checkout_page_amount(h, l, minor(s, 0, CHECKOUT_GET_AMOUNT), currency);
	html_raw(h, "</td></tr>\n</table>\n<p class=\"expiry\">");
	/* "YYYY-MM-DD HH:MI" (UTC) in l's digits, machine-readable in <time>, left to right. */
	snprintf(iso, sizeof(iso), "%.10sT%.5sZ", PQgetvalue(s, 0, CHECKOUT_GET_EXPIRES),
	    PQgetvalue(s, 0, CHECKOUT_GET_EXPIRES) + 11);
	html_raw(&at, "<bdi dir=\"ltr\"><time datetime=\"");
	html_text(&at, iso);
	html_raw(&at, "\">");
	html_text(&at, i18n_number(l, PQgetvalue(s, 0, CHECKOUT_GET_EXPIRES), when, sizeof(when)));
	html_raw(&at, "</time></bdi>");
	html_msg(h, _("This page expires at %s UTC."), at.failed ? "" : at.p);
	h->failed |= at.failed;
	html_free(&at);
	html_raw(h, "</p>\n");
}

static void
form_start(struct html *h, const struct i18n_lang *l, const char *id, const char *token,
    const char *cls)
{
	html_raw(h, "<form method=\"post\" action=\"/checkout/%s?lang=%s\" class=\"%s\">\n"
	    "<input type=\"hidden\" name=\"csrf\" value=\"%s\">\n", id, l->tag, cls, token);
}

/* A labelled input; digits and codes stay left to right in a right-to-left page. */
static void
input(struct html *h, const char *label, const char *attrs, const char *value)
{
	html_raw(h, "<label>");
	html_text(h, label);
	html_raw(h, " <input dir=\"ltr\" autocomplete=\"off\" required %s", attrs);
	if (value != NULL) {
		html_raw(h, " value=\"");
		html_text(h, value);
		html_raw(h, "\"");
	}
	html_raw(h, "></label>\n");
}

/* A submit button whose label is a catalog text with the session's amount in it. */
static void
pay_button(struct html *h, const struct i18n_lang *l, const char *label, PGresult *s)
{
	struct html amount = { 0 };

	checkout_page_amount(&amount, l, minor(s, 0, CHECKOUT_GET_AMOUNT),
	    PQgetvalue(s, 0, CHECKOUT_GET_CURRENCY));
	html_raw(h, "<button type=\"submit\" name=\"action\" value=\"pay\">");
	html_msg(h, label, amount.failed ? "" : amount.p);
	h->failed |= amount.failed;
	html_free(&amount);
	html_raw(h, "</button>\n");
}

static void
render_test_card(struct html *h, const struct i18n_lang *l, PGresult *s, const char *id,
    const char *token)
{
	form_start(h, l, id, token, "pay test-card");
	html_raw(h, "<h2>");
	html_text(h, _("Pay with a test card"));
	html_raw(h, "</h2>\n<input type=\"hidden\" name=\"method\" value=\"test_card\">\n");
	input(h, _("Card number"), "name=\"card_number\" inputmode=\"numeric\" maxlength=\"23\"",
	    NULL);
	input(h, _("Expiry (MM/YY)"), "name=\"card_expiry\" maxlength=\"5\" "
	    "placeholder=\"MM/YY\"", NULL);
	input(h, _("Security code"), "name=\"card_cvc\" inputmode=\"numeric\" maxlength=\"4\"",
	    NULL);
	pay_button(h, l, _("Pay %s by card"), s);
	html_raw(h, "<details><summary>");
	html_text(h, _("Sandbox test cards"));
	html_raw(h, "</summary>\n<ul><li><bdi dir=\"ltr\">4242 4242 4242 4242</bdi>: ");
	html_text(h, _("paid"));
	html_raw(h, "</li><li><bdi dir=\"ltr\">4000 0000 0000 0002</bdi>: ");
	html_text(h, _("declined"));
	html_raw(h, "</li><li><bdi dir=\"ltr\">4000 0000 0000 9995</bdi>: ");
	html_text(h, _("declined, insufficient funds"));
	html_raw(h, "</li></ul>\n<p>");
	html_text(h, _("Any future expiry, any three-digit code."));
	html_raw(h, "</p></details>\n</form>\n");
}

void
checkout_render_open(struct app *app, struct req *req, const struct i18n_lang *l,
    PGresult *s, const char *error, const char *account)
{
	const char *id = PQgetvalue(s, 0, CHECKOUT_GET_ID);
	const char *merchant = PQgetvalue(s, 0, CHECKOUT_GET_MERCHANT);
	/* A merchant name is at most 200 characters: 800 bytes of UTF-8, and the isolates. */
	char token[65], title[1024], name[808];
	struct html h = { 0 }, total = { 0 };

	checkout_render_csrf(app, id, token);
	/* The title is plain text: Unicode's isolates (FSI, PDI) do what <bdi> does. */
	snprintf(name, sizeof(name), "\xe2\x81\xa8%s\xe2\x81\xa9", merchant);
	/* TRANSLATORS: the page's title; %s is the merchant's name. */
	snprintf(title, sizeof(title), P_("title", "Pay %s"), name);
	checkout_page_start(&h, l, title);
	html_raw(&h, "<header>\n<p class=\"merchant\">");
	checkout_page_isolated(&h, merchant);
	html_raw(&h, "</p>\n<h1>");
	checkout_page_amount(&total, l, minor(s, 0, CHECKOUT_GET_AMOUNT),
	    PQgetvalue(s, 0, CHECKOUT_GET_CURRENCY));
	/* TRANSLATORS: the page's heading; %s is the amount and its currency. */
	html_msg(&h, _("Pay %s"), total.failed ? "" : total.p);
	h.failed |= total.failed;
	html_free(&total);
	html_raw(&h, "</h1>\n</header>\n");
	render_items(&h, l, s);
	if (error != NULL) {
		html_raw(&h, "<p class=\"error\" role=\"alert\">");
		html_text(&h, error);
		html_raw(&h, "</p>\n");
	}
	form_start(&h, l, id, token, "pay wallet");
	html_raw(&h, "<h2>");
	html_text(&h, _("Pay from your wallet"));
	html_raw(&h, "</h2>\n<input type=\"hidden\" name=\"method\" value=\"wallet\">\n");
	input(&h, _("Account number"), "name=\"account_number\" maxlength=\"32\"",
	    account != NULL ? account : "");
	input(&h, _("PIN"), "name=\"pin\" type=\"password\" inputmode=\"numeric\" "
	    "maxlength=\"12\"", NULL);
	pay_button(&h, l, _("Pay %s from wallet"), s);
	html_raw(&h, "</form>\n");
	if (app->cfg.environment == CONFIG_SANDBOX)
		render_test_card(&h, l, s, id, token);
	form_start(&h, l, id, token, "cancel");
	html_raw(&h, "<button type=\"submit\" name=\"action\" value=\"cancel\" "
	    "class=\"secondary\">");
	html_text(&h, _("Cancel and return to the shop"));
	html_raw(&h, "</button>\n</form>\n");
	checkout_page_send(req, 200, &h, s);
}

/* How a session that is no longer open is shown, by its status (the last row: any other). */
static const struct {
	const char *status;
	int http;
	const char *title, *text;
} closed[] = {
	{ "paid", 200, N_("Already paid"),
	  N_("This order is already paid. Nothing more to do here.") },
	{ "expired", 410, N_("Payment page expired"),
	  N_("This payment page has expired. Return to the shop to start again.") },
	{ "canceled", 200, N_("Payment not completed"), N_("This payment was canceled.") },
	{ "refunded", 200, N_("Payment refunded"),
	  N_("This order was paid and has since been refunded.") },
	{ NULL, 200, N_("Payment not completed"),
	  N_("This payment did not go through. Return to the shop to try again.") },
};

void
checkout_render_closed(struct req *req, const struct i18n_lang *l, PGresult *s,
    const char *status)
{
	size_t i;

	for (i = 0; closed[i].status != NULL && strcmp(closed[i].status, status) != 0; i++)
		;
	checkout_page_message(req, l, closed[i].http, _(closed[i].title), _(closed[i].text), s);
}
