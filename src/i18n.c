/*
 * The page's languages. gettext picks a catalog by the locale of LC_MESSAGES, and a bare
 * machine has no fa_AF or ps locale (nor should a worker need one): the process instead runs
 * LC_MESSAGES under C.UTF-8, which every Debian system has, and names the language in
 * LANGUAGE, which glibc's gettext consults before the locale (for any locale but plain C).
 * The workers are one single-threaded process each, so the variable is per request.
 */
#include <ctype.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "i18n.h"
#include "log.h"

/*
 * glibc caches each translation by text domain, category and locale name, and LANGUAGE is
 * none of these: a change of LANGUAGE must bump this counter (exported by glibc's libintl,
 * documented in the gettext manual), or the previous language's texts come back.
 */
extern int _nl_msg_cat_cntr;

static const struct i18n_lang langs[] = {
	{ "en", "en", "English", false, I18N_DIGITS_LATIN },
	{ "fa_AF", "fa-AF", "دری", true, I18N_DIGITS_PERSIAN },
	{ "ps", "ps", "پښتو", true, I18N_DIGITS_PERSIAN },
};

#define NLANGS (sizeof(langs) / sizeof(langs[0]))

const struct i18n_lang *
i18n_langs(size_t *n)
{
	*n = NLANGS;
	return langs;
}

/* Whether the first n bytes of a and b are the same tag, case and - or _ aside. */
static bool
same_tag(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char x = a[i] == '_' ? '-' : (char)tolower((unsigned char)a[i]);
		char y = b[i] == '_' ? '-' : (char)tolower((unsigned char)b[i]);

		if (x != y)
			return false;
	}
	return true;
}

const struct i18n_lang *
i18n_find(const char *code)
{
	size_t i, n = code != NULL ? strlen(code) : 0;

	for (i = 0; n > 0 && i < NLANGS; i++)
		if (strlen(langs[i].tag) == n && same_tag(code, langs[i].tag, n))
			return &langs[i];
	return NULL;
}

/* Ours for one language range (len bytes at r): exact, else the first it is a prefix of. */
static const struct i18n_lang *
match_range(const char *r, size_t len)
{
	size_t i;

	for (i = 0; i < NLANGS; i++)
		if (strlen(langs[i].tag) == len && same_tag(r, langs[i].tag, len))
			return &langs[i];
	for (i = 0; i < NLANGS; i++) {
		size_t t = strlen(langs[i].tag);

		/* "fa" matches fa-AF; "ps-AF" matches ps: one is the other's prefix up to a '-'. */
		if ((len < t && langs[i].tag[len] == '-' && same_tag(r, langs[i].tag, len)) ||
		    (t < len && (r[t] == '-' || r[t] == '_') && same_tag(r, langs[i].tag, t)))
			return &langs[i];
	}
	return NULL;
}

/* The q-value of an entry's parameters (";q=0.5"), in thousandths; 1000 when absent. */
static int
qvalue(const char *p, size_t len)
{
	const char *end = p + len;
	int q = 1000, scale = 100;

	while (p < end && (p = memchr(p, ';', (size_t)(end - p))) != NULL) {
		for (p++; p < end && (*p == ' ' || *p == '\t'); p++)
			;
		if (end - p < 3 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=')
			continue;
		p += 2;
		if (*p != '0' && *p != '1')
			return 0;     /* malformed: not acceptable */
		q = (*p++ - '0') * 1000;
		if (p < end && *p == '.')
			for (p++; p < end && isdigit((unsigned char)*p) && scale > 0; p++, scale /= 10)
				q += (*p - '0') * scale;
		return q > 1000 ? 1000 : q;
	}
	return q;
}

const struct i18n_lang *
i18n_negotiate(const char *h)
{
	const struct i18n_lang *best = NULL, *l;
	int best_q = 0, q;

	while (h != NULL && *h != '\0') {
		size_t len, r;

		h += strspn(h, " \t");
		len = strcspn(h, ",");
		r = strcspn(h, ";, \t");
		if (r > len)
			r = len;
		q = qvalue(h + r, len - r);
		if (r > 0 && q > best_q && (l = match_range(h, r)) != NULL) {
			best = l;
			best_q = q;
		}
		h += len;
		if (*h == ',')
			h++;
	}
	return best;
}

/* The language in use in this (single-threaded) process: see i18n_use. */
static const struct i18n_lang *current = &langs[0];

const struct i18n_lang *
i18n_current(void)
{
	return current;
}

/* Which languages have their catalog (English always), found at the first page. */
static bool usable[NLANGS];

/*
 * Finds the catalogs once, at the first page, and says what leaves a language in English:
 * the sysadmin's fix. A language without its catalog is then served as English, lang="en".
 */
static void
find_catalogs(const char *locale_dir, bool have_locale)
{
	char path[4096];
	size_t i;

	usable[0] = true;
	if (!have_locale)
		log_msg(LOG_LVL_WARN, NULL, "no C.UTF-8 locale: the checkout page is shown in "
		    "English only");
	for (i = 1; have_locale && i < NLANGS; i++) {
		snprintf(path, sizeof(path), "%s/%s/LC_MESSAGES/%s.mo", locale_dir, langs[i].code,
		    I18N_DOMAIN);
		usable[i] = access(path, R_OK) == 0;
		if (!usable[i])
			log_msg(LOG_LVL_WARN, NULL, "no catalog %s: the checkout page is shown in "
			    "English instead of %s (locale_dir in marketpay.conf)", path, langs[i].tag);
	}
}

const struct i18n_lang *
i18n_use(const struct i18n_lang *l, const char *locale_dir)
{
	static locale_t messages;   /* kept for the process's life, as uselocale needs */
	static bool ready;

	if (!ready) {
		/* Only LC_MESSAGES changes, for this thread: numbers and logs stay as they were. */
		messages = newlocale(LC_MESSAGES_MASK, "C.UTF-8", (locale_t)0);
		if (messages != (locale_t)0)
			uselocale(messages);
		find_catalogs(locale_dir, messages != (locale_t)0);
		bindtextdomain(I18N_DOMAIN, locale_dir);
		/* Catalogs are UTF-8 and so is the page, whatever LC_CTYPE says. */
		bind_textdomain_codeset(I18N_DOMAIN, "UTF-8");
		ready = true;
		current = NULL;   /* LANGUAGE may be anything the environment gave: set it */
	}
	if (!usable[l - langs])
		l = &langs[0];
	if (l == current)
		return l;
	setenv("LANGUAGE", l->code, 1);
	++_nl_msg_cat_cntr;
	current = l;
	return l;
}

const char *
i18n_pgettext(const char *ctx_msgid, const char *msgid)
{
	const char *t = dgettext(I18N_DOMAIN, ctx_msgid);

	return t == ctx_msgid ? msgid : t;
}

/* Appends the n bytes at s to out if they fit (with the NUL); false when they do not. */
static bool
put(char *out, size_t outlen, size_t *o, const char *s, size_t n)
{
	if (*o + n + 1 > outlen)
		return false;
	memcpy(out + *o, s, n);
	*o += n;
	return true;
}

char *
i18n_number(const struct i18n_lang *l, const char *s, char *out, size_t outlen)
{
	/* UTF-8 of U+06F0 is DB B0; the nine after it follow in the second byte. */
	char digit[3] = "\xdb\xb0";
	size_t o = 0;
	bool fits = true;

	if (outlen == 0)
		return out;
	for (; fits && *s != '\0'; s++) {
		if (l->digits == I18N_DIGITS_LATIN)
			fits = put(out, outlen, &o, s, 1);
		else if (*s >= '0' && *s <= '9') {
			digit[1] = (char)(0xb0 + (*s - '0'));
			fits = put(out, outlen, &o, digit, 2);
		} else if (*s == '.')
			fits = put(out, outlen, &o, "\xd9\xab", 2);   /* U+066B decimal separator */
		else if (*s == ',')
			fits = put(out, outlen, &o, "\xd9\xac", 2);   /* U+066C thousands separator */
		else
			fits = put(out, outlen, &o, s, 1);
	}
	out[o] = '\0';
	return out;
}

void
i18n_ascii_digits(char *s)
{
	char *o = s;

	for (; *s != '\0'; s++) {
		unsigned char a = (unsigned char)s[0], b = (unsigned char)s[1];

		if (a == 0xdb && b >= 0xb0 && b <= 0xb9) {          /* U+06F0-U+06F9 */
			*o++ = (char)('0' + (b - 0xb0));
			s++;
		} else if (a == 0xd9 && b >= 0xa0 && b <= 0xa9) {   /* U+0660-U+0669 */
			*o++ = (char)('0' + (b - 0xa0));
			s++;
		} else
			*o++ = *s;
	}
	*o = '\0';
}
