#!/usr/bin/env bash
# The README's first command: dev/run gives a newcomer a running sandbox stack. In a
# directory of its own (MARKETPAY_VAR) on a free port: dev/run --detach returns once the
# stack answers; the create-session it prints works with the demo key it made, and the
# session's checkout page opens, served by the pool's worker on the reads socket (the pool
# runs as the systemd units run it); a second dev/run keeps the demo merchant and key (made
# once); dev/run --stop stops everything it started. Then dev/run in the foreground, as the
# README has it first, stops everything on SIGTERM (Ctrl-C's INT takes the same trap), both
# once ready and while it still sets up.
# dev/run builds in the checkout's build/: skipped (77) in any other build directory.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
srcdir=$(cd "$srcdir" && pwd)
builddir=$(cd "${top_builddir:-$srcdir/build}" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"

[ "$builddir" = "$srcdir/build" ] ||
	{ echo "dev-run.sh: dev/run builds in $srcdir/build, not $builddir: skipped"; exit 77; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-dev-run.XXXXXX")
chmod 755 "$dir"
export MARKETPAY_VAR=$dir/var
port=$(free_port)
export MARKETPAY_PORT=$port
run_pid=
cleanup() {
	local code=$?
	[ -z "$run_pid" ] || kill "$run_pid" 2>/dev/null || true
	MARKETPAY_VAR=$dir/var "$srcdir/dev/run" --stop >/dev/null 2>&1 || true
	MARKETPAY_VAR=$dir/var-new "$srcdir/dev/run" --stop >/dev/null 2>&1 || true
	[ "$code" = 0 ] || tail -n 20 "$dir/out" "$MARKETPAY_VAR/fcgi.log" >&2 2>/dev/null || true
	rm -rf "$dir"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

answers() { curl -s -o /dev/null "http://127.0.0.1:$port/api/v1/health"; }
silent() { ! answers; }
# None of what the stack ran from its directory (PostgreSQL, the pool, nginx, the webhook
# daemon) is left; this script's own command line does not name the directory.
gone() { ! pgrep -f -- "$MARKETPAY_VAR" >/dev/null; }

"$srcdir/dev/run" --detach >"$dir/out" 2>&1 || bail "dev/run --detach failed: $(tail -n 5 "$dir/out")"
check "dev/run --detach prints how to call it" grep -q "API-KEY" "$dir/out"
# shellcheck disable=SC1091
. "$MARKETPAY_VAR/stack.env"
key=$MARKETPAY_DEMO_API_KEY
body=$(curl -s -w '\n%{http_code}' "$MARKETPAY_BASE_URL/api/v1/payment/create-session" \
	-H "Authorization: API-KEY $key" -H 'Content-Type: application/json' \
	-d '{"items":[{"id":"sku-1","name":"Green tea","price":12.50}],"user_id":"order-1001"}')
check "the printed create-session answers 200 with the demo key" [ "${body##*$'\n'}" = 200 ]
url=$(printf '%s' "${body%$'\n'*}" | jq -r '.url // empty' 2>/dev/null || true)
check "create-session gives the checkout page's URL" [ -n "$url" ]
check "the checkout page opens" [ "$(curl -s -o /dev/null -w '%{http_code}' "$url")" = 200 ]
# The worker that logged the page's GET (each line names its pid) is the one that started
# on the reads socket.
page=/${url#*://*/}
pid=$(sed -n "s|.* pid=\([0-9]*\) [^ ]* GET ${page%%\?*} status=200 .*|\1|p" "$MARKETPAY_VAR/fcgi.log" | tail -n 1)
check "the page was served by the worker of the reads socket (pid ${pid:-none})" \
	grep -q " pid=${pid:-none} .*worker ready (reads socket)$" "$MARKETPAY_VAR/fcgi.log"

"$srcdir/dev/run" --detach >"$dir/out" 2>&1 || bail "the second dev/run --detach failed"
# shellcheck disable=SC1091
. "$MARKETPAY_VAR/stack.env"
check "a second dev/run keeps the demo merchant's key" [ "$MARKETPAY_DEMO_API_KEY" = "$key" ]

"$srcdir/dev/run" --stop >"$dir/out" 2>&1
check "dev/run --stop: nothing answers" silent
check "dev/run --stop: none of the stack's processes is left" wait_for 10 gone

# dev/run in the foreground, signalled once WHEN: everything it started is stopped.
foreground() { # foreground WHEN TEST...: signalled once TEST succeeds
	local when=$1
	shift
	"$srcdir/dev/run" >"$dir/out" 2>&1 &
	run_pid=$!
	check "dev/run in the foreground: $when" wait_for 60 "$@"
	kill -TERM "$run_pid"
	wait "$run_pid" || true
	run_pid=
	check "dev/run stopped on SIGTERM $when: nothing is left" wait_for 10 gone
	gone || pgrep -af -- "$MARKETPAY_VAR" >&2
}
ready() { grep -q "Press Ctrl-C to stop" "$dir/out"; }
foreground "once ready" ready
# A new directory's stack answers a second or so before its demo merchant is set up: a stop
# then must not leave the stack running (it did: the trap came only once ready).
export MARKETPAY_VAR=$dir/var-new
foreground "as soon as a new stack answers" answers
finish
