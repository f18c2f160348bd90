#!/usr/bin/env bash
# mpload -q, the open-loop load of bench/soak, against a real stack (create-session only):
#   - a steady run sends the operations due at the rate, spread over the run, each journalled
#     with how late it was sent (lag_us, column 11);
#   - a stall of the whole pool (SIGSTOP of its workers for STALL seconds) shows in the
#     latency of every operation it delayed, counted from when each was due, and in the late
#     count; the same stall under the closed loop (no -q) shows in at most one request per
#     connection: the coordinated omission -q is there to avoid. The bounds hold by
#     construction (an operation due at t during a stall ending at t1 waits at least t1 - t),
#     not by the machine's speed.
#
# Environment: MP_WORKERS (default 2), MPLOAD (the mpload binary).
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-.}" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
export LC_ALL=C
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=${MP_WORKERS:-2}
stack="$srcdir/tests/stack.sh"
mpload=${MPLOAD:-$builddir/tests/load/mpload}
[ -x "$mpload" ] || bail "$mpload is missing (make check builds it)"

stopped=''
# shellcheck disable=SC2317 # called by own_stack_exit
own_cleanup() {
	# shellcheck disable=SC2086 # a list of pids
	[ -z "$stopped" ] || kill -CONT $stopped 2>/dev/null || true
}
own_stack mpload-pace
ctl() { "$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" "$@"; }
MPLOAD_KEY=$(ctl key create "$(ctl merchant create --name 'Pace Market')")
export MPLOAD_KEY
workers() { pgrep -P "$(cat "$dir/stack/pool.pid")" | tr '\n' ' '; }
wait_for 10 test -n "$(workers)" || bail "the pool has no workers"

# field FILE LINE-START NAME: NAME=value of mpload's summary line starting with LINE-START.
field() {
	awk -v s="$2" -v k="$3" 'index($0, s) == 1 { for (i = 1; i <= NF; i++) { split($i, a, "=")
		if (a[1] == k) print a[2] } }' "$1"
}
both() { [ "$1" = "$2" ] && [ "$3" = "$4" ]; } # both A B C D: A = B and C = D
within() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; } # within N LO HI
# slow JOURNAL MS: requests whose latency reached MS milliseconds.
slow() { awk -F'\t' -v ms="$2" '$4 >= ms * 1000' "$1" | wc -l; }

# 1. Steady: 20 operations/s for 5 s over 4 connections, far below what the stack serves.
"$mpload" -c 4 -q 20 -d 5 -m create=1 -j "$dir/steady.tsv" >"$dir/steady.out" 2>&1 ||
	{ cat "$dir/steady.out" >&2; bail "mpload -q failed"; }
cat "$dir/steady.out"
check "steady: 100 operations due over 5 s at 20/s" [ "$(field "$dir/steady.out" paced due)" = 100 ]
check "steady: every one of them sent" \
	both "$(field "$dir/steady.out" paced sent)" 100 "$(field "$dir/steady.out" paced unsent)" 0
check "steady: the journal has the 100 requests, each with its lag (column 11)" \
	[ "$(awk -F'\t' 'NF == 11 && $11 ~ /^[0-9]+$/' "$dir/steady.tsv" | wc -l)" = 100 ]
# Open loop: spread over the run (the first due at 0 s, the last at 4.95 s), not sent in a burst.
span=$(awk -F'\t' 'NR == 1 || $1 < a { a = $1 } $1 > b { b = $1 } END { print b - a }' "$dir/steady.tsv")
check "steady: the requests spread over the run ($span ms from the first to the last due)" \
	within "$span" 4500 5100

# 2. A stall: the pool stopped from 1 s to 1 s + STALL while 50 operations/s fall due.
stall_run() { # stall_run NAME MPLOAD-ARGS...: mpload with the pool stopped for 1.5 s after 1 s
	local pid
	"$mpload" -c 2 -d 6 -m create=1 -j "$dir/$1.tsv" "${@:2}" >"$dir/$1.out" 2>&1 &
	pid=$!
	sleep 1
	stopped=$(workers)
	# shellcheck disable=SC2086 # a list of pids
	kill -STOP $stopped
	sleep 1.5
	# shellcheck disable=SC2086
	kill -CONT $stopped
	stopped=''
	wait "$pid" || { cat "$dir/$1.out" >&2; bail "mpload ($1) failed"; }
	cat "$dir/$1.out"
}
stall_run open -q 50
# Due in the stall's first half (about 37 operations): each waited 0.75 s or more.
n=$(slow "$dir/open.tsv" 700)
check "open loop: the stall shows in the operations it delayed ($n requests of 0.7 s or more, >= 30)" \
	[ "$n" -ge 30 ]
late=$(field "$dir/open.out" paced late)
check "open loop: they are counted late ($late, >= 30)" [ "$late" -ge 30 ]
check "open loop: due = sent + unsent (300 due)" both "$(field "$dir/open.out" paced due)" 300 \
	$(($(field "$dir/open.out" paced sent) + $(field "$dir/open.out" paced unsent))) 300
stall_run closed
n=$(slow "$dir/closed.tsv" 700)
check "the control, closed loop: the same stall shows in at most one request per connection ($n)" \
	[ "$n" -le 2 ]
check "the control, closed loop: no pacing line" [ -z "$(field "$dir/closed.out" paced due)" ]
finish
