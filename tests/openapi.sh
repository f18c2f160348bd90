#!/usr/bin/env bash
# The OpenAPI contract, doc/openapi.yaml, with the node project in tests/openapi (installed
# with npm ci from its committed package-lock.json):
#
#   tests/openapi.sh             lints the document with @redocly/cli (every warning an
#                                error) and runs selftest.mjs: the contract checker refuses
#                                doctored exchanges and webhooks, every component is used
#   tests/openapi.sh --contract EXCHANGES [WEBHOOKS]
#                                the contract test of an integration run (tests/integration.sh):
#                                every exchange tests/integ/http.c recorded (MP_HTTP_RECORD) and
#                                every webhook the stack's receiver logged, against the document;
#                                every documented success field sent, but those in
#                                tests/openapi/unsent.txt (each with its reason)
#
# Each check is counted with tests/lib.sh, then "N passed, N failed".
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-.}
builddir=$(cd "$builddir" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"

die() { bail "openapi.sh: $*"; }

doc="$srcdir/doc/openapi.yaml"
[ -f "$doc" ] || die "no $doc"
# The node project in tests/openapi (a copy in the build tree when the source tree is read-only).
node_project "$srcdir/tests/openapi" @redocly/cli "the OpenAPI tests"

# Counts the "ok: ..." and "FAIL: ..." lines of a node script's output; the other lines
# (a failure's problems) are shown as they are. A script that ends in error without a
# failing line counts once.
count() {
	local what=$1 out st=0 n=0
	shift
	out=$("$@" 2>&1) || st=$?
	while IFS= read -r line; do
		case $line in
		ok:\ *) ok "${line#ok: }"; n=$((n + 1)) ;;
		FAIL:\ *) not_ok "${line#FAIL: }"; n=$((n + 1)) ;;
		*) echo "$line" ;;
		esac
	done <<<"$out"
	if [ $st != 0 ] && ! grep -q '^FAIL: ' <<<"$out"; then
		not_ok "$what ended with status $st"
	fi
	[ $n != 0 ] || [ $st != 0 ] || not_ok "$what reported no check"
}

if [ "${1:-}" = --contract ]; then
	[ $# -ge 2 ] || die "usage: openapi.sh --contract EXCHANGES [WEBHOOKS]"
	args=(--doc "$doc" --unsent "$nodedir/unsent.txt")
	[ -z "${3:-}" ] || args+=(--webhooks "$3")
	count "the contract test" node "$nodedir/validate.mjs" "${args[@]}" "$2"
else
	# Redocly's notice about its next release's node version is not a problem of ours.
	lint=$(cd "$nodedir" && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
		timeout 120 node_modules/.bin/redocly lint --config redocly.yaml --format stylish \
		"$doc" 2>&1) && st=0 || st=$?
	if [ "$st" = 0 ]; then
		ok "doc/openapi.yaml is lint-clean (@redocly/cli, recommended-strict)"
	else
		grep -v '^ *[║╔╚]' <<<"$lint" >&2
		not_ok "doc/openapi.yaml is lint-clean (@redocly/cli, recommended-strict)"
	fi
	count "selftest.mjs" node "$nodedir/selftest.mjs" --doc "$doc"
fi
finish
