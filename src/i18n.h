#ifndef MP_I18N_H
#define MP_I18N_H

#include <libintl.h>
#include <stdbool.h>

/*
 * The hosted page's languages: GNU gettext catalogs (po/LANG.po, installed as
 * LOCALE_DIR/LANG/LC_MESSAGES/marketpay.mo), found at start. English is the source text
 * and needs none.
 */
#define I18N_DOMAIN "marketpay"
#define _(s) dgettext(I18N_DOMAIN, s)
#define N_(s) (s)   /* marks text for xgettext that is translated where it is shown */
/* A text in a context, where one English text needs two translations (gettext's pgettext). */
#define P_(ctx, s) i18n_pgettext(ctx "\004" s, s)

/* P_'s lookup: ctx_msgid's translation, or msgid when there is none. */
const char *i18n_pgettext(const char *ctx_msgid, const char *msgid)
    __attribute__((format_arg(2)));

/* How a language writes numbers for display (what a customer types is read in either). */
enum i18n_digits {
	I18N_DIGITS_LATIN,     /* 0-9 . , */
	I18N_DIGITS_PERSIAN,   /* U+06F0-U+06F9, decimal U+066B, group U+066C */
	I18N_DIGITS__MAX
};

struct i18n_lang {
	const char *code;      /* the catalog's name and the session's locale: "fa_AF" */
	const char *tag;       /* BCP 47 for lang="" and hreflang: "fa-AF" */
	const char *name;      /* its own name, for the switch links (catalog text: escape it) */
	bool rtl;
	enum i18n_digits digits;
};

/* The most catalogs a worker offers, English aside; the rest are logged and left out. */
#define I18N_MAX 32

/*
 * Finds the languages: English, then every LOCALE_DIR/LANG/LC_MESSAGES/marketpay.mo whose
 * LANG is a catalog name (ll, lll, ll_CC, lll_CC), sorted, at most I18N_MAX, each with the
 * name, direction and digits its catalog gives (msgctxt "language name", "text direction",
 * "digits"; a missing one is the tag, ltr, Latin and a warning). Called once at a worker's
 * start; a later call replaces the table (tests), and English is then current. Returns how
 * many languages there are (1: English only, when locale_dir has no catalog or is unreadable).
 */
size_t i18n_init(const char *locale_dir);

/* The languages i18n_init found, English first (the default and the fallback); n set. */
const struct i18n_lang *i18n_langs(size_t *n);

/*
 * Writes the languages' tags as a sentence ("en, fa-AF or ps") to out (outlen bytes, always
 * terminated, cut when short). Returns the length written.
 */
size_t i18n_tags(char *out, size_t outlen);

/*
 * The language a code or tag names ("fa_AF", "fa-af", "ps"; case and - or _ do not matter),
 * or NULL when none of ours is.
 */
const struct i18n_lang *i18n_find(const char *code);

/*
 * The best of ours for an Accept-Language header (RFC 9110 12.5.4: q-values honoured, q=0
 * refuses, ties go to the earlier entry; a range matches a language it is a prefix of, so
 * "fa" and "ps-AF" match), or NULL when the header is absent or matches none.
 */
const struct i18n_lang *i18n_negotiate(const char *accept_language);

/*
 * Makes l (one of i18n_langs()) the language of dgettext() in this process until the next
 * call. Returns l. Cheap when l is the language already in use. A text a catalog lacks
 * stays English.
 */
const struct i18n_lang *i18n_use(const struct i18n_lang *l);

/* The language i18n_use() made current (English before any call). */
const struct i18n_lang *i18n_current(void);

/*
 * Copies s to out (outlen bytes, always terminated) with its digits and . and , written as
 * l writes them; s is ASCII (an amount, a date); the copy is cut at a whole character if
 * out is short. Returns out.
 */
char *i18n_number(const struct i18n_lang *l, const char *s, char *out, size_t outlen);

/*
 * Rewrites, in place, the Eastern Arabic-Indic digits of s (Persian U+06F0-U+06F9 and Arabic
 * U+0660-U+0669) as ASCII 0-9, so a customer may type either. Everything else stays.
 */
void i18n_ascii_digits(char *s);

#endif
