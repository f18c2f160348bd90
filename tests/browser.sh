#!/usr/bin/env bash
# The browser suite: starts a whole stack (PostgreSQL, spawn-fcgi pool, nginx) in a
# temporary directory and drives the hosted checkout page with a real headless Chromium
# (Debian's chromium, through npm's playwright-core) using node's test runner; always tears
# the stack down, also when a test fails or the run is interrupted.
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

die() { echo "browser.sh: $*" >&2; exit 1; }

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

# node 20 or newer (playwright-core needs it) and npm.
command -v node >/dev/null || die "node is missing: the browser tests need node 20 or newer and npm"
command -v npm >/dev/null || die "npm is missing: the browser tests need node 20 or newer and npm"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "node $(node --version) is too old: the browser tests need node 20 or newer"

# The node project lives in tests/browser; a read-only source tree (make distcheck) gets a
# copy in the build tree (tests/browser-run, which clean-local removes).
nodedir="$srcdir/tests/browser"
if [ ! -w "$nodedir" ]; then
	mkdir -p "$builddir/tests/browser-run"
	cp "$nodedir"/package.json "$nodedir"/package-lock.json "$nodedir"/*.mjs "$builddir/tests/browser-run/"
	chmod -R u+w "$builddir/tests/browser-run"
	nodedir="$builddir/tests/browser-run"
fi
# Installs the locked playwright-core when node_modules is missing or older than the lock.
# playwright-core downloads no browser; the variable is there in case that ever changes.
if [ ! -f "$nodedir/node_modules/playwright-core/package.json" ] ||
	[ "$nodedir/package-lock.json" -nt "$nodedir/node_modules/.package-lock.json" ]; then
	(cd "$nodedir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund) ||
		die "npm ci in $nodedir failed"
fi

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

"$MP_STACK" start "$dir"
# shellcheck disable=SC1091
. "$dir/stack.env"
rc=0
# TAP output: its closing lines ("# pass N", "# fail N") are what CI reads. The whole run is
# bounded: each test has its own timeout in the test file, and this one caps the lot.
(cd "$nodedir" && timeout --kill-after=10 600 \
	node --test --test-reporter=tap checkout.test.mjs) || rc=$?
[ $rc = 124 ] && echo "browser.sh: the browser tests took over 600 s and were stopped" >&2
exit $rc
