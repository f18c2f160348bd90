/* The frame of the hosted pages: language, direction, headers, the language links. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkout_page.h"
#include "form.h"
#include "money.h"

const struct i18n_lang *
checkout_page_lang(const struct req *req, const char *session_locale)
{
	const struct i18n_lang *l = NULL;
	char want[16];

	if (req->query != NULL && form_get(req->query, strlen(req->query), "lang", want,
	    sizeof(want)) > 0)
		l = i18n_find(want);
	if (l == NULL && session_locale != NULL)
		l = i18n_find(session_locale);
	if (l == NULL)
		l = i18n_negotiate(req->accept_language);
	if (l == NULL)
		l = i18n_find("en");
	return i18n_use(l);
}

void
checkout_page_headers(struct req *req, PGresult *s)
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
	req_add_header(req, "Vary", "Accept-Language");
}

/* Plain links to the page in each other language (no script): ?lang= on the same path. */
static void
language_links(struct html *h, const struct i18n_lang *cur)
{
	const struct i18n_lang *all;
	size_t i, n;

	all = i18n_langs(&n);
	html_raw(h, "<nav class=\"languages\" aria-label=\"");
	html_text(h, _("Language"));
	html_raw(h, "\"><ul>");
	for (i = 0; i < n; i++) {
		if (&all[i] == cur)
			html_raw(h, "<li><span lang=\"%s\" aria-current=\"true\">", all[i].tag);
		else
			html_raw(h, "<li><a href=\"?lang=%s\" lang=\"%s\" hreflang=\"%s\">",
			    all[i].tag, all[i].tag, all[i].tag);
		/* A name is a catalog's text: escaped like any other. */
		html_text(h, all[i].name);
		html_raw(h, &all[i] == cur ? "</span></li>" : "</a></li>");
	}
	html_raw(h, "</ul></nav>\n");
}

void
checkout_page_start(struct html *h, const struct i18n_lang *l, const char *title)
{
	html_raw(h, "<!DOCTYPE html>\n<html lang=\"%s\" dir=\"%s\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, "
	    "initial-scale=1\">\n<title>", l->tag, l->rtl ? "rtl" : "ltr");
	html_text(h, title);
	html_raw(h, "</title>\n<link rel=\"stylesheet\" href=\"/static/checkout.css\">\n"
	    "</head>\n<body>\n");
	language_links(h, l);
	html_raw(h, "<main class=\"checkout\">\n");
}

void
checkout_page_send(struct req *req, int status, struct html *h, PGresult *s)
{
	html_raw(h, "</main>\n</body>\n</html>\n");
	checkout_page_headers(req, s);
	if (h->failed)
		req_reply(req, 500, "text/plain; charset=utf-8", "internal error\n", 15);
	else
		req_reply(req, status, "text/html; charset=utf-8", h->p, h->len);
	html_free(h);
}

void
checkout_page_message(struct req *req, const struct i18n_lang *l, int status,
    const char *title, const char *text, PGresult *s)
{
	struct html h = { 0 };

	checkout_page_start(&h, l, title);
	html_raw(&h, "<h1>");
	html_text(&h, title);
	html_raw(&h, "</h1>\n<p class=\"message\">");
	html_text(&h, text);
	html_raw(&h, "</p>\n");
	checkout_page_send(req, status, &h, s);
}

void
checkout_page_amount(struct html *h, const struct i18n_lang *l, int64_t minor,
    const char *currency)
{
	char amount[MONEY_BUFLEN], shown[MONEY_BUFLEN * 3];

	money_format(minor, amount);
	html_raw(h, "<bdi dir=\"ltr\" class=\"amount\">%s",
	    i18n_number(l, amount, shown, sizeof(shown)));
	if (currency != NULL) {
		html_raw(h, " ");
		html_text(h, currency);
	}
	html_raw(h, "</bdi>");
}

void
checkout_page_isolated(struct html *h, const char *text)
{
	html_raw(h, "<bdi>");
	html_text(h, text);
	html_raw(h, "</bdi>");
}
