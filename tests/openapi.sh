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
command -v node >/dev/null || die "node is missing: the OpenAPI tests need node 20 or newer and npm"
command -v npm >/dev/null || die "npm is missing: the OpenAPI tests need node 20 or newer and npm"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "node $(node --version) is too old: the OpenAPI tests need node 20 or newer"

# The node project lives in tests/openapi; a read-only source tree (make distcheck) gets a
# copy in the build tree (tests/openapi-run, which clean-local removes).
nodedir="$srcdir/tests/openapi"
if [ ! -w "$nodedir" ]; then
	mkdir -p "$builddir/tests/openapi-run"
	cp "$nodedir"/package.json "$nodedir"/package-lock.json "$nodedir"/*.mjs \
		"$nodedir"/redocly.yaml "$nodedir"/unsent.txt "$builddir/tests/openapi-run/"
	chmod -R u+w "$builddir/tests/openapi-run"
	nodedir="$builddir/tests/openapi-run"
fi
# Installs the locked packages when node_modules is missing or older than the lock.
if [ ! -f "$nodedir/node_modules/@redocly/cli/package.json" ] ||
	[ "$nodedir/package-lock.json" -nt "$nodedir/node_modules/.package-lock.json" ]; then
	(cd "$nodedir" && npm ci --no-audit --no-fund >&2) || die "npm ci in $nodedir failed"
fi

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
	if [ $st = 0 ]; then
		ok "doc/openapi.yaml is lint-clean (@redocly/cli, recommended-strict)"
	else
		grep -v '^ *[║╔╚]' <<<"$lint" >&2
		not_ok "doc/openapi.yaml is lint-clean (@redocly/cli, recommended-strict)"
	fi
	count "selftest.mjs" node "$nodedir/selftest.mjs" --doc "$doc"
fi
finish
