#ifndef MP_I18N_H
#define MP_I18N_H

#include <libintl.h>
#include <stdbool.h>

/*
 * The hosted page's languages: GNU gettext catalogs (po/LANG.po, installed as
 * LOCALE_DIR/LANG/LC_MESSAGES/marketpay.mo). English is the source text and needs none.
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
	const char *name;      /* its own name, for the switch links */
	bool rtl;
	enum i18n_digits digits;
};

/* The shipped languages, English first (the default and the fallback); n set to how many. */
const struct i18n_lang *i18n_langs(size_t *n);

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
 * call, with catalogs from locale_dir (read at the first call; later calls ignore it).
 * Returns l, or English when l's catalog is missing (logged once). Cheap when l is the
 * language already in use. A text a catalog lacks stays English.
 */
const struct i18n_lang *i18n_use(const struct i18n_lang *l, const char *locale_dir);

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
