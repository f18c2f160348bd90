#!/usr/bin/env bash
# The hosted page's message catalogs (po/): the template holds every text the sources mark
# (_(), N_(), P_()), and every catalog translates every one of them, keeps its printf
# placeholders (msgfmt -c), says its language's name, direction and digits (the three
# metadata texts the worker reads at start) and is named in po/LINGUAS. A catalog that lacks
# a message the page uses fails here (shown first on a copy with one message taken out). One
# result per check, then "N passed, N failed" (tests/lib.sh).
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"

for p in xgettext msgfmt msgcmp msggrep; do
	command -v $p >/dev/null 2>&1 || bail "i18n.sh: $p not found: apt-get install gettext"
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-i18n.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The template as the sources make it now (make update-po writes po/marketpay.pot the same way).
(cd "$srcdir" && xgettext --from-code=UTF-8 -k_ -kN_ -kP_:1c,2 -kM_:1c,2 --add-comments=TRANSLATORS: \
	--no-location --omit-header -o "$tmp/fresh.pot" $(cat po/POTFILES)) ||
	bail "i18n.sh: xgettext failed on the files of po/POTFILES"
n=$(grep -c '^msgid ' "$tmp/fresh.pot")
# quiet CMD...: runs it, showing what it said only when it fails (msgcmp warns of the header).
quiet() {
	local out
	out=$("$@" 2>&1) && return 0
	printf '%s\n' "$out" >&2
	return 1
}
# meta PO CONTEXT MSGID RE: PO translates MSGID in CONTEXT (one of the language's metadata,
# read by the worker at start) to a text matching RE.
meta() {
	local t
	t=$(msggrep --msgctxt -F -e "$2" "$1" | msgattrib --translated --no-fuzzy |
		msgexec -i - sh -c '[ "$MSGEXEC_MSGID" = "$0" ] && cat' "$3" 2>/dev/null) || true
	printf '%s' "$t" | grep -qxE -- "$4"
}
# The reproduction: a catalog without its name fails the metadata check.
msggrep --invert-match --msgctxt -F -e 'language name' -o "$tmp/noname.po" "$srcdir/po/ps.po"
check "a catalog without its language's name fails" bash -c \
	"$(declare -f meta); meta '$srcdir/po/ps.po' 'language name' English '.+' &&
	! meta '$tmp/noname.po' 'language name' English '.+'"
check "the sources mark $n texts for translation" [ "$n" -gt 40 ]
# Every file that calls _() or P_() is listed in po/POTFILES, or its texts are never extracted.
missing=$(cd "$srcdir" && grep -lE '\b(_|P_|N_)\("' src/*.c src/*.h | grep -vxF -f po/POTFILES |
	grep -v '^src/i18n\.[ch]$' || true)
check "po/POTFILES lists every source with marked texts${missing:+ (missing: $missing)}" \
	test -z "$missing"
check "po/marketpay.pot is up to date (make update-po)" bash -c \
	"msgcmp --use-untranslated '$srcdir/po/marketpay.pot' '$tmp/fresh.pot' 2>&1 &&
	msgcmp --use-untranslated '$tmp/fresh.pot' '$srcdir/po/marketpay.pot' 2>&1"

# The reproduction: a catalog with one message the page uses taken out, and one whose
# translation lost its placeholder, are refused by the same checks as the real ones below.
msggrep --invert-match --msgid -F -e 'Cancel and return to the shop' \
	-o "$tmp/lacking.po" "$srcdir/po/ps.po"
check "a catalog lacking a message the page uses fails msgcmp" bash -c \
	"! msgcmp '$tmp/lacking.po' '$tmp/fresh.pot' 2>'$tmp/lacking.err' &&
	grep -q 'used but not defined' '$tmp/lacking.err'"
sed 's/^msgstr "%s تادیه کړئ"$/msgstr "تادیه کړئ"/' "$srcdir/po/ps.po" >"$tmp/noformat.po"
check "a translation without its %s fails msgfmt -c" bash -c \
	"! cmp -s '$srcdir/po/ps.po' '$tmp/noformat.po' &&
	! msgfmt -c -o /dev/null '$tmp/noformat.po' 2>/dev/null"

shopt -s nullglob
catalogs=("$srcdir"/po/*.po)
shopt -u nullglob
check "catalogs shipped: ${#catalogs[@]}" [ "${#catalogs[@]}" -ge 2 ]
for po in "${catalogs[@]}"; do
	l=${po##*/}
	l=${l%.po}
	check "po/$l.po compiles (msgfmt -c)" msgfmt -c -o /dev/null "$po"
	# msgcmp counts an untranslated or fuzzy entry as missing: the page would fall back to
	# English there.
	check "po/$l.po translates every text the page uses" quiet msgcmp "$po" "$tmp/fresh.pot"
	check "po/$l.po is built and installed (its line in po/LINGUAS)" \
		grep -qx "$l" "$srcdir/po/LINGUAS"
	check "po/$l.po names its language (msgctxt \"language name\")" \
		meta "$po" 'language name' English '.+'
	check "po/$l.po gives its direction (msgctxt \"text direction\": ltr or rtl)" \
		meta "$po" 'text direction' ltr 'ltr|rtl'
	check "po/$l.po gives its digits (msgctxt \"digits\": latin or persian)" \
		meta "$po" digits latin 'latin|persian'
done
# And the other way: every name in po/LINGUAS has its catalog (configure refuses it too).
while read -r l; do
	case $l in '' | '#'*) continue ;; esac
	check "po/LINGUAS's $l has po/$l.po" test -f "$srcdir/po/$l.po"
done <"$srcdir/po/LINGUAS"

finish
