#!/usr/bin/env bash
# The browser suite: starts a whole stack (PostgreSQL, spawn-fcgi pool, nginx) in a
# temporary directory and drives the hosted checkout page with a real headless Chromium
# (Debian's chromium, through npm's playwright-core) using node's test runner; always tears
# the stack down, also when a test fails or the run is interrupted.
#
# Each test's result is counted with tests/lib.sh (read from the TAP record node's test
# runner writes beside its spec output), then "N passed, N failed".
#
# Environment: MP_CHROMIUM (default /usr/bin/chromium), MP_TEST_OUT (screenshots and failure
# dumps; default tests/browser/out), MP_STACK (the stack script; default tests/stack.sh).
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-.}
builddir=$(cd "$builddir" && pwd)
export MP_STACK=${MP_STACK:-"$srcdir/tests/stack.sh"}
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=${MP_WORKERS:-4}
export MP_CHROMIUM=${MP_CHROMIUM:-/usr/bin/chromium}
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"

die() { bail "browser.sh: $*"; }

# Chromium: Debian's package. As root we install it if it is missing; otherwise we say how.
if [ ! -x "$MP_CHROMIUM" ]; then
	if [ "$MP_CHROMIUM" = /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "browser.sh: $MP_CHROMIUM is missing; installing Debian's chromium" >&2
		{ DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
				chromium fonts-dejavu-core >/dev/null; } ||
			die "could not install chromium (apt-get install chromium failed)"
	fi
	[ -x "$MP_CHROMIUM" ] ||
		die "no Chromium at $MP_CHROMIUM: install Debian's chromium (sudo apt-get install chromium) or set MP_CHROMIUM"
fi

# node 20 or newer (playwright-core needs it), npm, and the locked playwright-core in
# tests/browser (a copy in the build tree when the source tree is read-only). playwright-core
# downloads no browser; the variable is there in case that ever changes.
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 node_project "$srcdir/tests/browser" playwright-core \
	"the browser tests"

export MP_TEST_OUT=${MP_TEST_OUT:-"$nodedir/out"}
mkdir -p "$MP_TEST_OUT" || die "cannot make $MP_TEST_OUT"
rm -f "$MP_TEST_OUT"/fail-*.png "$MP_TEST_OUT"/fail-*.html "$MP_TEST_OUT"/checkout-*.png

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-browser.XXXXXX")
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
	"$MP_STACK" stop "$dir" || true
	if [ "${rc:-1}" != 0 ]; then
		echo "--- last lines of the worker log ($dir/fcgi.log) ---" >&2
		tail -n 30 "$dir/fcgi.log" >&2 || true
		echo "--- screenshots and failure dumps: $MP_TEST_OUT ---" >&2
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$MP_STACK" start "$dir" || die "the stack did not start"
# shellcheck disable=SC1091
. "$dir/stack.env"
rc=0
# The spec report to the log, the TAP record to a file, read below: one result per test (a
# suite, whose YAML says type: 'suite', is not one). The whole run is bounded: each test has
# its own timeout in the test file, and this one caps the lot.
tap="$dir/browser.tap"
(cd "$nodedir" && timeout --kill-after=10 600 \
	node --test --test-reporter=spec --test-reporter-destination=stdout \
	--test-reporter=tap --test-reporter-destination="$tap" checkout.test.mjs refund.test.mjs \
	webhook-rotate.test.mjs i18n.test.mjs) || rc=$?
[ $rc = 124 ] && echo "browser.sh: the browser tests took over 600 s and were stopped" >&2
counted=0
while IFS=$'\t' read -r result name; do
	counted=$((counted + 1))
	if [ "$result" = ok ]; then ok "$name"; else not_ok "$name"; fi
done < <(awk '
	function flush() { if (name != "" && !suite) printf "%s\t%s\n", res, name; name = "" }
	/^ *(not )?ok [0-9]+ - / { flush(); res = $1 == "not" ? "not_ok" : "ok"
		name = $0; sub(/^ *(not )?ok [0-9]+ - /, "", name); suite = 0; next }
	/^ *type: .suite.$/ { suite = 1 }
	END { flush() }' "$tap" 2>/dev/null)
# A run that failed with no failing test to show for it (it stopped early) counts once.
[ $rc = 0 ] || [ "$failed" != 0 ] || not_ok "the browser run ended with status $rc after $counted tests"
[ $counted != 0 ] || [ $rc != 0 ] || not_ok "the browser run reported no test"
finish || rc=1
exit $rc
