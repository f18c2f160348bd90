#!/usr/bin/env bash
# Faults under load. Starts a stack of its own, sets up a marketplace merchant (API key,
# webhook endpoint at the test receiver, settlement with a PIN, a funded balance, vendors)
# and customer wallets, runs tests/load/mpload (create-session, checkout payments,
# transfers) in the background and, with the load running, one after another:
#   a. kill -9 of workers, one at a time (multiwatch must respawn them)
#   b. SIGTERM to the whole pool, then a new pool (graceful: no request a worker took is lost)
#   c. PostgreSQL restarted like a crash (-m immediate): 503 while down, then 200 from the
#      same workers, none restarted
#   d. marketpay-webhookd stopped, then started again
#   e. the webhook receiver answering 503, not answering in time, refusing connections
# After each fault: the pool serves new requests within seconds and every worker serves
# again; every 200 the load got is in the database, nothing was applied twice, the ledger
# verifies, balances add up. At the end also: every operation reached its goal, and every
# payment.succeeded event was delivered (at least once; none lost).
# One result line per check, then "N passed, N failed". Exit status non-zero on a failure.
#
# Environment: MP_WORKERS (default 4), MPLOAD_CONNS (8), MPLOAD (the mpload binary),
# KEEP=1 (keep the stack's directory: logs, journal).
set -euo pipefail
export LC_ALL=C

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-.}" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
# shellcheck source=tests/load-checks.sh
. "$srcdir/tests/load-checks.sh"
workers=${MP_WORKERS:-4}
conns=${MPLOAD_CONNS:-8}
deposit=1000000        # the merchant's deposit, whole units
wallet_deposit=1000000 # each wallet's
# PostgreSQL keeps its durable settings: with MP_FAST_PG's synchronous_commit=off, the crash
# restart below loses commits already answered 200 (the checks catch it).
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=0 MP_WORKERS=$workers
# Webhook attempts time out after 1 s, and the retry schedule (60 s in all) outlasts every
# receiver outage below, so no event goes dead while the receiver is down. The endpoint's
# breaker opens for 2 s first (30 s by default), so a recovery is seen within the checks' wait.
export MP_CONF_EXTRA="webhook_timeout = 1
webhook_poll_interval = 1
webhook_breaker_cooldown = 2
webhook_retry_schedule = 1,1,1,1,1,1,1,1,1,1,2,2,2,2,2,2,2,2,2,2,3,3,3,3,3,3,3,3,3,3"

for bin in "$mpload" "$builddir/marketpay-webhookd" /usr/bin/perl /usr/bin/psql; do
	[ -x "$bin" ] || { echo "faults: $bin is missing (make builds mpload)" >&2; exit 1; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-faults.XXXXXX")
load_pid="" hole_pid="" rc=1
cleanup() {
	[ -n "$load_pid" ] && kill -KILL "$load_pid" 2>/dev/null
	[ -n "$hole_pid" ] && kill -KILL "$hole_pid" 2>/dev/null
	"$stack" stop "$dir" || true
	[ "$rc" = 0 ] || show_tails "$dir" fcgi.log webhookd.log nginx/error.log mpload.out
	if [ "${KEEP:-0}" = 1 ]; then echo "faults: kept $dir" >&2; else rm -rf "$dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The pool's worker pids, sorted, on one line (the workers' command lines start with the
# program; multiwatch's names it later).
worker_pids() {
	pgrep -f "^[^ ]*marketpay-fcgi -c $dir/worker.conf" | sort -n | tr '\n' ' ' || true
}

# Every worker of the pool has served a request since ms: none is stuck.
workers_all_serving() {
	local since_iso pid idle=""
	since_iso=$(iso_of_ms "$1")
	for pid in $(worker_pids); do
		awk -v t="$since_iso" -v p="pid=$pid" '$1 >= t && $3 == p && / status=/ { f = 1; exit }
			END { exit !f }' "$dir/fcgi.log" || idle="$idle $pid"
	done
	[ -z "$idle" ] || { echo "# workers that served nothing since $since_iso:$idle" >&2; return 1; }
}

# After a fault: a new request is served within 10 s, and (after 2 s more of load) every
# worker serves again.
recovered() {
	local what=$1 ms t
	if ms=$(probe); then
		check "$what: new requests served ${ms} ms after the fault (limit 10000)" [ "$ms" -le 10000 ]
	else
		not_ok "$what: no 200 for a new create-session within 15 s"
	fi
	t=$(now_ms)
	sleep 2
	check "$what: every worker ($(count_words "$(worker_pids)")) served requests in the 2 s after" \
		workers_all_serving "$t"
}


# Webhook attempts between two ms timestamps matching an SQL condition.
attempts_between() {
	sql -c "SELECT count(*) FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
		WHERE e.merchant_id = $merchant AND a.attempted_at BETWEEN to_timestamp($1 / 1000.0)
		AND to_timestamp($2 / 1000.0) AND ($3)"
}

# --- the stack and the merchant --------------------------------------------------------------
"$stack" start "$dir" >/dev/null
# shellcheck disable=SC1091
. "$dir/stack.env"
setup_merchant 'Fault Market'
# A port that accepts connections and never answers (webhook timeouts), and one that refuses.
hole_port=$(free_port)
perl -MIO::Socket::INET -e 'my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
	LocalPort => $ARGV[0], Listen => 128, ReuseAddr => 1) or die "blackhole: $!\n"; sleep 3600' \
	"$hole_port" &
hole_pid=$!
disown "$hole_pid"   # no job report when cleanup ends it
wait_listening "$hole_port" "faults: the blackhole" || exit 1
closed_port=$(free_port)
while [ "$closed_port" = "$hole_port" ]; do closed_port=$(free_port); done

# --- the load ---------------------------------------------------------------------------------
start_load
run_start=$(now_ms)
sleep 3
check "load: requests are being answered 200" \
	[ "$(journal_count "$run_start" "$(now_ms)" 200)" -gt 0 ]
say "workers: $(worker_pids)"

# --- a. kill -9 of workers --------------------------------------------------------------------
# multiwatch gives up on a child that dies 3 times within 10 s of its start (its -r and -t),
# so each original worker is killed at most once: a crash loop is not what this tests.
t0=$(now_ms)
elog=$(mark "$dir/nginx/error.log")
victims=$(worker_pids | tr ' ' '\n' | grep . | shuf | head -n "$workers")
kills=0
for v in $victims; do
	kill -KILL "$v"
	kills=$((kills + 1))
	end=$((SECONDS + 5))
	while :; do
		now=$(worker_pids)
		if [ "$(count_words "$now")" = "$workers" ] && ! grep -qw "$v" <<<"$now"; then break; fi
		[ $SECONDS -lt $end ] || break
		sleep 0.1
	done
	check "kill -9 #$kills: worker $v replaced, the pool has $workers workers again ($now)" \
		[ "$(count_words "$now")" = "$workers" ]
	sleep 1.5
done
t1=$(now_ms)
say "kill -9: $kills workers killed; answers meanwhile: $(journal_count "$t0" "$t1" 200) x200," \
	"$(journal_count "$t0" "$t1" 502) x502 (requests in the killed workers' hands)," \
	"$(journal_count "$t0" "$t1" 0) without answer; nginx: $(since "$dir/nginx/error.log" "$elog" |
		grep -c 'prematurely closed' || true) 'upstream prematurely closed'"
recovered "kill -9"
db_checks "kill -9"

# --- b. SIGTERM to the whole pool, then a new one ---------------------------------------------
pids_before=$(worker_pids)
elog=$(mark "$dir/nginx/error.log")
ulog=$(mark "$dir/nginx/upstream.log")
flog=$(mark "$dir/fcgi.log")
t0=$(now_ms)
"$stack" pool-stop "$dir"
t_stopped=$(now_ms)
sleep 1
"$stack" pool-start "$dir"
t_started=$(now_ms)
recovered "pool SIGTERM + restart"
t1=$(now_ms)
since "$dir/nginx/upstream.log" "$ulog" >"$dir/upstream.window"
since "$dir/nginx/error.log" "$elog" >"$dir/error.window"
since "$dir/fcgi.log" "$flog" >"$dir/fcgi.window"
n502=$(awk '$3 == 502' "$dir/upstream.window" | wc -l)
refused=$(grep -c 'connect() to unix:.* failed' "$dir/error.window" || true)
reset=$(grep -c 'recv() failed (104: Connection reset by peer)' "$dir/error.window" || true)
premature=$(grep -c 'prematurely closed' "$dir/error.window" || true)
# A 502 whose request id a worker logged was served (and maybe committed), then lost.
served_lost=0
for id in $(awk '$3 == 502 { print $2 }' "$dir/upstream.window"); do
	grep -q " req=$id " "$dir/fcgi.window" && served_lost=$((served_lost + 1))
done
exited=$(grep -c ' worker exiting$' "$dir/fcgi.window" || true)
# Requests the old workers answered after the signal: the ones they had in hand.
in_hand=$(awk -v pids=" $pids_before" 'index(pids, " " substr($3, 5) " ") && / status=/' \
	"$dir/fcgi.window" | wc -l)
say "pool SIGTERM: stopped in $((t_stopped - t0)) ms, down until $((t_started - t0)) ms; 502s:" \
	"$n502 = $refused refused (connect() failed: no listener) + $reset reset in the listen" \
	"backlog (queued after the last worker left, never accepted) + $premature accepted then" \
	"dropped; mpload retried them. The old workers finished $in_hand requests after the signal"
check "pool SIGTERM: every worker finished its request and exited cleanly ($exited of $(
	count_words "$pids_before"))" [ "$exited" = "$(count_words "$pids_before")" ]
check "pool SIGTERM: no request accepted by a worker was dropped (premature close: $premature)" \
	[ "$premature" = 0 ]
check "pool SIGTERM: no 502 for a request a worker served ($served_lost)" [ "$served_lost" = 0 ]
check "pool SIGTERM: each 502 is a refused or never-accepted connection ($n502 = $refused + $reset)" \
	[ "$n502" = $((refused + reset)) ]
check "pool SIGTERM: a new pool of $workers workers" \
	[ "$(count_words "$(worker_pids)")" = "$workers" ]
db_checks "pool SIGTERM"

# --- c. PostgreSQL restarted like a crash -----------------------------------------------------
pids_before=$(worker_pids)
pool_before=$(cat "$dir/pool.pid")
t0=$(now_ms)
"$stack" pg-restart "$dir" 2
t_up=$(now_ms)
recovered "PostgreSQL restart"
t1=$(now_ms)
n503=$(journal_count "$t0" "$t1" 503)
n500=$(journal_count "$t0" "$t1" 500)
n502=$(journal_count "$t0" "$t1" 502)
say "PostgreSQL -m immediate: down $((t_up - t0)) ms; answers in the window:" \
	"$(journal_count "$t0" "$t1" 200) x200, $n503 x503, $n500 x500, $n502 x502," \
	"$(journal_count "$t0" "$t1" 0) without answer"
check "PostgreSQL restart: 503 while it was down ($n503)" [ "$n503" -gt 0 ]
check "PostgreSQL restart: no 500 ($n500) and no 502 ($n502) meanwhile" test "$n500$n502" = 00
check "PostgreSQL restart: the same workers serve again, none restarted ($pids_before)" \
	test "$(worker_pids) $(cat "$dir/pool.pid")" = "$pids_before $pool_before"
db_checks "PostgreSQL restart"
check "PostgreSQL restart: events of the outage delivered" events_delivered 30

# --- d. webhookd stopped and started ----------------------------------------------------------
"$stack" webhookd-stop "$dir"
t0=$(now_ms)
sleep 3
pending=$(sql -c "SELECT count(*) FROM webhook_events WHERE merchant_id = $merchant
	AND status = 'pending'")
"$stack" webhookd-start "$dir"
say "webhookd down 3 s: $pending events waiting"
check "webhookd restart: events waited while it was down ($pending)" [ "$pending" -gt 0 ]
check "webhookd restart: every event delivered afterwards" events_delivered 30
recovered "webhookd restart"
db_checks "webhookd restart"

# --- e. the receiver fails: 503, timeouts, connection refused ----------------------------------
receiver_fault() { # NAME SQL-condition-of-its-attempts UNDO-COMMAND
	local name=$1 cond=$2 undo=$3 t0 t1 n state backed
	t0=$(now_ms)
	sleep 4
	state=$(sql -c "SELECT state FROM webhook_endpoint_health WHERE merchant_id = $merchant")
	"$undo"
	t1=$(now_ms)
	n=$(attempts_between "$t0" "$t1" "$cond")
	say "receiver $name for 4 s: $n failed attempts; $(attempts_between "$t0" "$t1" \
		'a.http_status BETWEEN 200 AND 299') delivered meanwhile"
	check "receiver $name: webhookd saw it fail ($n attempts)" [ "$n" -gt 0 ]
	case $state in open | half-open | failing) backed=yes ;; *) backed=no ;; esac
	check "receiver $name: its endpoint was backed off meanwhile (breaker $state)" \
		[ "$backed" = yes ]
	check "receiver $name: every event delivered afterwards" events_delivered 40
	check "receiver $name: its breaker closed again" [ "$(sql -c "SELECT failures || ' ' ||
		opens FROM webhook_endpoints WHERE merchant_id = $merchant")" = "0 0" ]
	check "receiver $name: no event dead" \
		[ "$(sql -c "SELECT count(*) FROM webhook_events WHERE merchant_id = $merchant
			AND status = 'dead'")" = 0 ]
}
receiver_up() { rm -f "$dir/receiver-down"; }
url_at() { ctl merchant webhook "$merchant" --url "$1" --keep-secret >/dev/null; }
url_back() { url_at "$MARKETPAY_WEBHOOK_RECEIVER"; }
touch "$dir/receiver-down"
receiver_fault "answering 503" "a.http_status = 503" receiver_up
url_at "http://127.0.0.1:$hole_port/hook"
receiver_fault "not answering (timeout)" "a.error ILIKE '%timed out%'" url_back
url_at "http://127.0.0.1:$closed_port/hook"
receiver_fault "refusing connections" "a.error ILIKE '%connect%'" url_back
db_checks "receiver faults"

# --- the end ------------------------------------------------------------------------------------
kill -TERM "$load_pid"
load_rc=0
wait "$load_pid" || load_rc=$?
load_pid=""
cat "$dir/mpload.out"
check "load: every operation reached its goal, retrying through the faults (mpload exit $load_rc)" \
	[ "$load_rc" = 0 ]
db_checks "end" 1
check "end: every payment.succeeded event delivered" events_delivered 40
say "retries answered from the Idempotency-Key store: $(awk -F'\t' '$2 == "create" &&
	$10 == "replayed"' "$dir/journal.tsv" | wc -l) create-session, $(awk -F'\t' '$2 == "transfer" &&
	$10 == "replayed"' "$dir/journal.tsv" | wc -l) transfers; payments found already paid on a" \
	"retry: $(awk -F'\t' '$10 == "already_paid"' "$dir/journal.tsv" | wc -l)"
receiver_got_events end
say "run took $(( ($(now_ms) - run_start) / 1000 )) s of load"
rc=0
finish || rc=$?
exit $rc
