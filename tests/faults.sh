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
stack="$srcdir/tests/stack.sh"
mpload=${MPLOAD:-$builddir/tests/load/mpload}
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
	if [ "$rc" != 0 ]; then
		for f in fcgi.log webhookd.log nginx/error.log mpload.out; do
			echo "--- last lines of $dir/$f ---" >&2
			tail -n 15 "$dir/$f" >&2 2>/dev/null || true
		done
	fi
	if [ "${KEEP:-0}" = 1 ]; then echo "faults: kept $dir" >&2; else rm -rf "$dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { echo "# $*"; }
now_ms() { date +%s%3N; }
iso_of_ms() { date -u -d "@$(($1 / 1000)).$(printf %03d $(($1 % 1000)))" +%Y-%m-%dT%H:%M:%S.%3NZ; }
ctl() { "$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" "$@"; }
sql() { psql -qAtX -v ON_ERROR_STOP=1 "$@"; }
ledger_verify() { ctl ledger verify >/dev/null; }
# The pool's worker pids, sorted, on one line (the workers' command lines start with the
# program; multiwatch's names it later).
worker_pids() {
	pgrep -f "^[^ ]*marketpay-fcgi -c $dir/worker.conf" | sort -n | tr '\n' ' ' || true
}
count_words() { wc -w <<<"$1" | tr -d ' '; }

# Milliseconds until a new create-session is answered 200 (up to 15 s); fails after that.
probe() {
	local t0 code end
	t0=$(now_ms)
	end=$((t0 + 15000))
	while [ "$(now_ms)" -lt $end ]; do
		code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' -H "Authorization: API-KEY $key" \
			-H 'Content-Type: application/json' --data \
			'{"items":[{"id":"probe","name":"Probe","price":1.00}]}' \
			"$MARKETPAY_BASE_URL/api/v1/payment/create-session" || true)
		[ "$code" = 200 ] && { echo $(($(now_ms) - t0)); return 0; }
		sleep 0.1
	done
	echo 15000
	return 1
}

# Requests of the journal in [from, to] ms with the given status ("503"; "0": no answer).
journal_count() {
	head -n "$(wc -l <"$dir/journal.tsv")" "$dir/journal.tsv" |
		awk -F'\t' -v a="$1" -v b="$2" -v s="$3" '$1 >= a && $1 <= b && $3 == s { n++ }
			END { print n + 0 }'
}

# Byte size of a log now, to read what a fault added to it later.
mark() { stat -c %s "$1"; }
since() { tail -c +$(($2 + 1)) "$1"; }

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

# The database against the journal so far (final=1: also what holds only once the load has
# stopped). Each query prints "name|bad|total"; bad must be 0.
db_checks() {
	local what=$1 final=${2:-0} n out more name bad total
	n=$(wc -l <"$dir/journal.tsv")
	head -n "$n" "$dir/journal.tsv" >"$dir/journal.snap"
	out=$(sql <<SQL
-- One snapshot for every query: a payment committed meanwhile must not look half done.
BEGIN ISOLATION LEVEL REPEATABLE READ;
CREATE TEMP TABLE j (start_ms bigint, kind text, status int, lat_us bigint, try int, key text,
    ids text, amount bigint, request_id text, note text);
\copy j FROM '$dir/journal.snap' (FORMAT text, NULL '-')
CREATE TEMP TABLE pt AS SELECT reference, count(*) AS n, min(id) AS tx FROM ledger_transactions
    WHERE kind = 'payment' GROUP BY reference;
CREATE TEMP TABLE ev AS SELECT body::json->'data'->>'session_id' AS sid, count(*) AS n
    FROM webhook_events WHERE merchant_id = $merchant AND type = 'payment.succeeded' GROUP BY 1;
-- Transfers the merchant's stored Idempotency-Key answers name, with their ledger transaction.
CREATE TEMP TABLE kt AS SELECT k.key, t.ledger_transaction_id AS tx
    FROM idempotency_keys k, json_array_elements(k.body::json->'transaction_detail') d,
         transfers t
    WHERE k.merchant_id = $merchant AND k.key LIKE 'tr-%' AND t.id = d->>'transaction_id'
    GROUP BY 1, 2;
CREATE TEMP TABLE tx AS SELECT id AS tx FROM ledger_transactions
    WHERE kind = 'transfer' AND merchant_id = $merchant;
-- Every 200 create-session names a stored session of this merchant with the amount sent.
SELECT 'every 200 create-session is a stored session with its amount',
    count(*) FILTER (WHERE s.id IS NULL OR s.amount <> j.amount OR s.merchant_id <> $merchant),
    count(*)
FROM j LEFT JOIN payment_sessions s ON s.id = j.ids::uuid
WHERE j.kind = 'create' AND j.status = 200;
-- One session per create operation (its user_id), also when it was sent again.
SELECT 'no session created twice by a retried create-session', count(*), NULL FROM (
    SELECT user_id FROM payment_sessions WHERE merchant_id = $merchant AND user_id LIKE 'u-%'
    GROUP BY user_id HAVING count(*) > 1) x;
SELECT 'every Idempotency-Key of create-session answered with one session', count(*), NULL FROM (
    SELECT key FROM j WHERE kind = 'create' AND status = 200 GROUP BY key
    HAVING count(DISTINCT ids) > 1) x;
-- A payment the customer saw succeed (303 to the success URL, or "Already paid" on a retry)
-- is a paid session with exactly one payment transaction, the one it names.
SELECT 'every confirmed payment is a paid session with one ledger transaction',
    count(*) FILTER (WHERE s.status IS DISTINCT FROM 'paid' OR pt.n IS DISTINCT FROM 1
        OR s.transaction_id IS DISTINCT FROM pt.tx),
    count(*)
FROM (SELECT DISTINCT ids AS sid FROM j WHERE kind = 'pay' AND note IN ('paid', 'already_paid')) p
LEFT JOIN payment_sessions s ON s.id = p.sid::uuid
LEFT JOIN pt ON pt.reference = 'session ' || p.sid;
SELECT 'no session paid twice (whole database)', count(*), NULL FROM pt WHERE n > 1;
SELECT 'every paid session has exactly one payment.succeeded event', count(*), NULL
FROM payment_sessions s LEFT JOIN ev ON ev.sid = s.id::text
WHERE s.merchant_id = $merchant AND s.status = 'paid' AND ev.n IS DISTINCT FROM 1;
SELECT 'no payment.succeeded event without a paid session', count(*), NULL
FROM ev LEFT JOIN payment_sessions s ON s.id::text = ev.sid
WHERE s.status IS DISTINCT FROM 'paid';
-- Every 200 transfer: its tr_ ids are stored, in one ledger transaction of this merchant,
-- adding up to the total sent.
WITH r AS (SELECT row_number() OVER () AS rn, key, ids, amount FROM j
           WHERE kind = 'transfer' AND status = 200),
     e AS (SELECT r.rn, r.amount, x.id FROM r, unnest(string_to_array(r.ids, ',')) AS x(id)),
     m AS (SELECT e.rn, count(t.id) AS found, count(*) AS n,
                  count(DISTINCT t.ledger_transaction_id) AS txs, sum(t.amount) AS total,
                  max(e.amount) AS want, bool_and(t.merchant_id = $merchant) AS mine
           FROM e LEFT JOIN transfers t ON t.id = e.id GROUP BY e.rn)
SELECT 'every 200 transfer is stored with its tr_ ids and amounts',
    count(*) FILTER (WHERE found <> n OR txs <> 1 OR total <> want OR mine IS NOT TRUE),
    count(*) FROM m;
SELECT 'every Idempotency-Key of a transfer answered with the same tr_ ids', count(*), NULL FROM (
    SELECT key FROM j WHERE kind = 'transfer' AND status = 200 GROUP BY key
    HAVING count(DISTINCT ids) > 1) x;
-- No transfer applied twice: each transfer transaction of the merchant belongs to exactly one
-- stored key, and no key to two transactions.
SELECT 'no transfer applied twice (one ledger transaction per Idempotency-Key)',
    (SELECT count(*) FROM tx WHERE tx NOT IN (SELECT tx FROM kt))
    + (SELECT count(*) FROM (SELECT tx FROM kt GROUP BY tx HAVING count(*) > 1) a)
    + (SELECT count(*) FROM (SELECT key FROM kt GROUP BY key HAVING count(*) > 1) b),
    (SELECT count(*) FROM tx);
-- Balances, in one snapshot: the merchant's = deposit + paid sessions - transfers; the
-- vendors hold what was transferred; the wallets lost what they paid.
SELECT 'merchant balance = deposit + payments - transfers',
    (SELECT balance FROM accounts WHERE account_number = '$merchant_acct')
    - ($deposit * 100 + (SELECT coalesce(sum(amount), 0) FROM payment_sessions
        WHERE merchant_id = $merchant AND status = 'paid')
      - (SELECT coalesce(sum(amount), 0) FROM transfers WHERE merchant_id = $merchant)), NULL;
SELECT 'vendor balances = transfers to them',
    (SELECT sum(balance) FROM accounts WHERE account_number = ANY(string_to_array('$vendors', ',')))
    - (SELECT coalesce(sum(amount), 0) FROM transfers WHERE merchant_id = $merchant), NULL;
SELECT 'wallets paid exactly the sessions paid by wallet',
    (SELECT sum($wallet_deposit * 100 - balance) FROM accounts
        WHERE account_number = ANY(string_to_array('$wallets', ',')))
    - (SELECT coalesce(sum(amount), 0) FROM payment_sessions
        WHERE merchant_id = $merchant AND status = 'paid' AND payment_method = 'wallet'), NULL;
COMMIT;
SQL
) || { not_ok "$what: the check queries failed"; return 0; }
	if [ "$final" = 1 ]; then
		more=$(sql <<SQL
CREATE TEMP TABLE j (start_ms bigint, kind text, status int, lat_us bigint, try int, key text,
    ids text, amount bigint, request_id text, note text);
\copy j FROM '$dir/journal.snap' (FORMAT text, NULL '-')
-- With the load stopped, every operation has its last answer: nothing was applied that the
-- client did not see succeed, and the sums of the journal are the database's.
SELECT 'every paid session was confirmed to the customer', count(*), NULL
FROM payment_sessions s WHERE s.merchant_id = $merchant AND s.status = 'paid'
    AND s.user_id LIKE 'u-%'
    AND NOT EXISTS (SELECT 1 FROM j WHERE kind = 'pay' AND note IN ('paid', 'already_paid')
        AND j.ids = s.id::text);
SELECT 'every applied transfer was answered 200 to the client', count(*), NULL
FROM (SELECT DISTINCT key FROM idempotency_keys WHERE merchant_id = $merchant AND key LIKE 'tr-%') k
WHERE NOT EXISTS (SELECT 1 FROM j WHERE kind = 'transfer' AND status = 200 AND j.key = k.key);
SELECT 'merchant balance = deposit + payments - transfers, as the journal has them',
    (SELECT balance FROM accounts WHERE account_number = '$merchant_acct')
    - ($deposit * 100
       + (SELECT coalesce(sum(c.amount), 0) FROM (SELECT DISTINCT ids FROM j WHERE kind = 'pay'
            AND note IN ('paid', 'already_paid')) p
          JOIN (SELECT DISTINCT ids, amount FROM j WHERE kind = 'create' AND status = 200) c
          ON c.ids = p.ids)
       - (SELECT coalesce(sum(amount), 0) FROM (SELECT DISTINCT key, amount FROM j
            WHERE kind = 'transfer' AND status = 200) t)), NULL;
SQL
) || { not_ok "$what: the final check queries failed"; more=""; }
		out="$out
$more"
	fi
	while IFS='|' read -r name bad total; do
		[ -n "$name" ] || continue
		check "$what: $name (${bad} bad${total:+ of $total})" [ "$bad" = 0 ]
	done <<<"$out"
	check "$what: marketpayctl ledger verify" ledger_verify
}

# Waits up to secs for every event of the merchant created up to now to be delivered.
events_delivered() {
	local secs=$1 end left
	end=$((SECONDS + secs))
	while :; do
		left=$(sql -c "SELECT count(*) FROM webhook_events WHERE merchant_id = $merchant
			AND status <> 'delivered' AND created_at <= to_timestamp($(now_ms) / 1000.0)")
		[ "$left" = 0 ] && return 0
		[ $SECONDS -lt $end ] || { echo "# $left events not delivered" >&2; return 1; }
		sleep 0.5
	done
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
merchant=$(ctl merchant create --name 'Fault Market')
key=$(ctl key create "$merchant")
ctl merchant webhook "$merchant" --url "$MARKETPAY_WEBHOOK_RECEIVER" >/dev/null
printf 2468 | ctl merchant pin "$merchant" >/dev/null
ctl merchant settlement "$merchant" on >/dev/null
merchant_acct=$(ctl account create --kind merchant --merchant "$merchant")
ctl account deposit "$merchant_acct" "$deposit" >/dev/null
vendors="" wallets=""
for _ in 1 2 3 4 5 6; do
	vendors="$vendors${vendors:+,}$(ctl account create --kind vendor)"
done
for _ in $(seq 1 "$conns"); do
	a=$(ctl account create --kind customer)
	ctl account deposit "$a" "$wallet_deposit" >/dev/null
	echo 1357 | ctl account pin "$a" >/dev/null
	wallets="$wallets${wallets:+,}$a"
done
# A port that accepts connections and never answers (webhook timeouts), and one that refuses.
hole_port=$(free_port)
perl -MIO::Socket::INET -e 'my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
	LocalPort => $ARGV[0], Listen => 128, ReuseAddr => 1) or die "blackhole: $!\n"; sleep 3600' \
	"$hole_port" &
hole_pid=$!
disown "$hole_pid"   # no job report when cleanup ends it
end=$((SECONDS + 5))
until (exec 3<>"/dev/tcp/127.0.0.1/$hole_port") 2>/dev/null; do
	[ $SECONDS -lt $end ] || { echo "faults: the blackhole port does not listen" >&2; exit 1; }
	sleep 0.1
done
closed_port=$(free_port)
while [ "$closed_port" = "$hole_port" ]; do closed_port=$(free_port); done

# --- the load ---------------------------------------------------------------------------------
MPLOAD_KEY=$key MPLOAD_PIN=2468 MPLOAD_VENDORS=$vendors MPLOAD_WALLETS=$wallets \
	MPLOAD_WALLET_PIN=1357 "$mpload" -c "$conns" -d 0 -m create=1,pay=2,transfer=1 -R 40 \
	-j "$dir/journal.tsv" >"$dir/mpload.out" 2>&1 &
load_pid=$!
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
# The receiver's own log: each event's webhook-id answered 204 at least once.
sed -n 's/^{"id":"\(evt_[0-9a-f]*\)".*"status":"\([0-9]*\)".*/\1\t\2/p' "$dir/webhooks.log" \
	>"$dir/received.tsv"
out=$(sql <<SQL
CREATE TEMP TABLE got (id text, status int);
\copy got FROM '$dir/received.tsv'
SELECT count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM got WHERE got.id = e.id
    AND got.status = 204)), count(*),
    (SELECT count(*) FROM (SELECT id FROM got WHERE status = 204 GROUP BY id
        HAVING count(*) > 1) d)
FROM webhook_events e WHERE e.merchant_id = $merchant AND e.type = 'payment.succeeded';
SQL
)
IFS='|' read -r missing events dup <<<"$out"
say "webhooks: $events payment.succeeded events, $dup delivered more than once"
say "retries answered from the Idempotency-Key store: $(awk -F'\t' '$2 == "create" &&
	$10 == "replayed"' "$dir/journal.tsv" | wc -l) create-session, $(awk -F'\t' '$2 == "transfer" &&
	$10 == "replayed"' "$dir/journal.tsv" | wc -l) transfers; payments found already paid on a" \
	"retry: $(awk -F'\t' '$10 == "already_paid"' "$dir/journal.tsv" | wc -l)"
check "end: the receiver got every payment.succeeded event ($missing of $events missing)" \
	test "$missing" = 0 -a "$events" -gt 0
say "run took $(( ($(now_ms) - run_start) / 1000 )) s of load"
rc=0
finish || rc=$?
exit $rc
