/*
 * The page's languages. gettext picks a catalog by the locale of LC_MESSAGES, and a bare
 * machine has no fa_AF or ps locale (nor should a worker need one): the process instead runs
 * LC_MESSAGES under C.UTF-8, which every Debian system has, and names the language in
 * LANGUAGE, which glibc's gettext consults before the locale (for any locale but plain C).
 * The workers are one single-threaded process each, so the variable is per request.
 *
 * The languages are the catalogs installed: a worker finds them at start (i18n_init), and
 * each one says its own name, direction and digits as translations of three fixed texts,
 * so that adding a language is adding its catalog (README.md, Languages).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
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

/*
 * The languages: English (built in, the source text) and then the catalogs found by
 * i18n_init, sorted by name. Each one's code, tag and name live in its row of names[].
 */
static struct i18n_lang langs[I18N_MAX + 1] = {
	{ "en", "en", "English", false, I18N_DIGITS_LATIN },
};
static struct {
	char code[8];   /* the longest valid name, "abc_DE", and its NUL */
	char tag[8];
	char name[64];
} names[I18N_MAX + 1];
static size_t nlangs = 1;

const struct i18n_lang *
i18n_langs(size_t *n)
{
	*n = nlangs;
	return langs;
}

size_t
i18n_tags(char *out, size_t outlen)
{
	size_t i, o = 0;
	int w;

	if (outlen == 0)
		return 0;
	out[0] = '\0';
	for (i = 0; i < nlangs && o < outlen; i++, o += (size_t)w)
		if ((w = snprintf(out + o, outlen - o, "%s%s", i == 0 ? "" :
		    i + 1 == nlangs ? " or " : ", ", langs[i].tag)) < 0)
			break;
	return o < outlen ? o : outlen - 1;
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

	for (i = 0; n > 0 && i < nlangs; i++)
		if (strlen(langs[i].tag) == n && same_tag(code, langs[i].tag, n))
			return &langs[i];
	return NULL;
}

/* Ours for one language range (len bytes at r): exact, else the first it is a prefix of. */
static const struct i18n_lang *
match_range(const char *r, size_t len)
{
	size_t i;

	for (i = 0; i < nlangs; i++)
		if (strlen(langs[i].tag) == len && same_tag(r, langs[i].tag, len))
			return &langs[i];
	for (i = 0; i < nlangs; i++) {
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

const struct i18n_lang *
i18n_use(const struct i18n_lang *l)
{
	if (l == current)
		return l;
	setenv("LANGUAGE", l->code, 1);
	++_nl_msg_cat_cntr;
	current = l;
	return l;
}

/* A catalog's name as GNU gettext spells a language: ll, lll, ll_CC or lll_CC. */
static bool
valid_name(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz");

	if (n < 2 || n > 3)
		return false;
	if (s[n] == '\0')
		return true;
	return s[n] == '_' && isupper((unsigned char)s[n + 1]) &&
	    isupper((unsigned char)s[n + 2]) && s[n + 3] == '\0';
}

/* A metadata text of the current language's catalog, or NULL when the catalog lacks it. */
static const char *
meta(const char *ctx_msgid)
{
	const char *t = dgettext(I18N_DOMAIN, ctx_msgid);

	return t == ctx_msgid ? NULL : t;
}
/* Marks a metadata text for xgettext (-kM_:1c,2), as P_ does, and looks it up. */
#define M_(ctx, s) meta(ctx "\004" s)

/*
 * Fills in row i (code set) from its own catalog: its name, direction and digits, as the
 * translations of three fixed texts. What a catalog lacks is the default (the tag, ltr,
 * Latin digits) and a warning: the translator's fix.
 */
static void
read_meta(size_t i)
{
	struct i18n_lang *l = &langs[i];
	const char *name, *dir, *digits;

	i18n_use(l);
	/* TRANSLATORS: this language's own name, shown in the page's language links. */
	name = M_("language name", "English");
	/* TRANSLATORS: "rtl" when this language is written right to left, else "ltr". */
	dir = M_("text direction", "ltr");
	/* TRANSLATORS: the digits that show numbers: "latin" (0-9) or "persian" (U+06F0-U+06F9). */
	digits = M_("digits", "latin");
	if (name != NULL && *name != '\0' && strlen(name) < sizeof(names[i].name))
		snprintf(names[i].name, sizeof(names[i].name), "%s", name);
	else {
		snprintf(names[i].name, sizeof(names[i].name), "%s", l->tag);
		log_msg(LOG_LVL_WARN, NULL, "catalog %s: no msgctxt \"language name\" (or longer "
		    "than %zu bytes): its links say %s", l->code, sizeof(names[i].name) - 1, l->tag);
	}
	l->rtl = dir != NULL && strcmp(dir, "rtl") == 0;
	if (dir == NULL || (!l->rtl && strcmp(dir, "ltr") != 0))
		log_msg(LOG_LVL_WARN, NULL, "catalog %s: msgctxt \"text direction\" is missing or "
		    "neither ltr nor rtl: shown left to right", l->code);
	l->digits = digits != NULL && strcmp(digits, "persian") == 0 ? I18N_DIGITS_PERSIAN :
	    I18N_DIGITS_LATIN;
	if (digits == NULL || (l->digits == I18N_DIGITS_LATIN && strcmp(digits, "latin") != 0))
		log_msg(LOG_LVL_WARN, NULL, "catalog %s: msgctxt \"digits\" is missing or neither "
		    "latin nor persian: numbers shown in Latin digits", l->code);
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Sets found (up to I18N_MAX of them, sorted) to the catalogs in locale_dir; returns how many. */
static size_t
scan(const char *locale_dir, char found[][8])
{
	char path[4096];
	struct dirent *e;
	DIR *d;
	size_t n = 0;

	if ((d = opendir(locale_dir)) == NULL) {
		log_msg(LOG_LVL_WARN, NULL, "cannot read locale_dir %s: %s: the checkout page is "
		    "shown in English only", locale_dir, strerror(errno));
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		if (!valid_name(e->d_name) || strcmp(e->d_name, "en") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/LC_MESSAGES/%s.mo", locale_dir, e->d_name,
		    I18N_DOMAIN);
		if (access(path, R_OK) != 0)
			continue;
		if (n == I18N_MAX) {
			log_msg(LOG_LVL_WARN, NULL, "more than %d catalogs in %s: %s and the others "
			    "after the first %d are not offered", I18N_MAX, locale_dir, e->d_name,
			    I18N_MAX);
			continue;
		}
		memcpy(found[n++], e->d_name, strlen(e->d_name) + 1);   /* valid: 6 bytes at most */
	}
	closedir(d);
	qsort(found, n, sizeof(found[0]), cmp_names);
	return n;
}

size_t
i18n_init(const char *locale_dir)
{
	static locale_t messages;   /* kept for the process's life, as uselocale needs */
	char found[I18N_MAX][8];
	size_t i, n = 0;

	if (messages == (locale_t)0) {
		/* Only LC_MESSAGES changes, for this thread: numbers and logs stay as they were. */
		messages = newlocale(LC_MESSAGES_MASK, "C.UTF-8", (locale_t)0);
		if (messages != (locale_t)0)
			uselocale(messages);
		/* Catalogs are UTF-8 and so is the page, whatever LC_CTYPE says. */
		bind_textdomain_codeset(I18N_DOMAIN, "UTF-8");
	}
	bindtextdomain(I18N_DOMAIN, locale_dir);
	if (messages == (locale_t)0)
		log_msg(LOG_LVL_WARN, NULL, "no C.UTF-8 locale: the checkout page is shown in "
		    "English only");
	else
		n = scan(locale_dir, found);
	nlangs = 1;
	current = NULL;   /* LANGUAGE may be anything the environment gave: set it */
	for (i = 0; i < n; i++, nlangs++) {
		snprintf(names[nlangs].code, sizeof(names[nlangs].code), "%s", found[i]);
		snprintf(names[nlangs].tag, sizeof(names[nlangs].tag), "%s", found[i]);
		if (strchr(names[nlangs].tag, '_') != NULL)
			*strchr(names[nlangs].tag, '_') = '-';
		langs[nlangs].code = names[nlangs].code;
		langs[nlangs].tag = names[nlangs].tag;
		read_meta(nlangs);
		langs[nlangs].name = names[nlangs].name;
	}
	i18n_use(&langs[0]);
	{
		char tags[(I18N_MAX + 1) * 12];

		i18n_tags(tags, sizeof(tags));
		log_msg(LOG_LVL_INFO, NULL, "checkout page languages (catalogs in %s): %s",
		    locale_dir, tags);
	}
	return nlangs;
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
