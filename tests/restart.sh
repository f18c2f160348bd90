#!/usr/bin/env bash
# Restarts and reloads lose nothing. A stack of its own whose pool runs as the systemd units
# run it (tests/stack.sh MP_POOL=systemd: marketpay-fcgi --workers on a socket that
# systemd-socket-activate holds across restarts, as marketpay-fcgi@.socket does), and
# tests/load/mpload sending create-session POSTs through nginx as fast as 2 kept-alive
# libcurl connections go. With the load running, one case after another:
#   1. the pool restarted (SIGTERM, then a new pool on the same socket: systemctl restart)
#   2. the pool reloaded (SIGHUP: systemctl reload): new workers, the same pool
#   3. one worker killed with SIGKILL: the pool starts another
#   4. nginx reloaded (nginx -s reload)
# The units' pool has its second socket, for reads (MP_READ_WORKERS, default 1 here), which
# nginx passes GETs to: after the start, the restart and the reload a GET must be served by
# a worker of that socket, and the pool has its workers on both.
# Each case counts its requests and its failures (a status other than 200, or no answer:
# a transport error or timeout at the client) and must have none; it also checks the pool
# afterwards (pids changed as they should, every worker there). Except case 3: a request
# the killed worker had in hand dies with it (nginx answers 502; the client repeats it with
# its Idempotency-Key), so at most 1 request may fail there, with a 502, never unanswered. Then: a reload with a configuration
# that does not load is refused and the same workers keep serving.
# Reproduction of the old HUP finding: MP_POOL=multiwatch runs the same cases on the
# spawn-fcgi + multiwatch pool (restarted by tests/stack.sh pool-stop and pool-start): case 1
# fails (no socket for a moment: nginx answers 502), and case 2 (SIGHUP stops it for good).
# One result line per check, then "N passed, N failed".
# (wrk is no judge of case 4: it counts each kept-alive connection that nginx's old workers
# close while idle as a socket error, though no request was on it; libcurl, like other HTTP
# clients, opens a new connection then.)
# Environment: MP_WORKERS (default 4), MP_READ_WORKERS (see above), CASE_SECONDS (load per case, default 6), MPLOAD
# (the mpload binary), KEEP=1.
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-.}" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
workers=${MP_WORKERS:-4} secs=${CASE_SECONDS:-6} stack="$srcdir/tests/stack.sh"
export LC_ALL=C
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=$workers
export MP_POOL=${MP_POOL:-systemd}
[ "$MP_POOL" = multiwatch ] && export MP_POOL=""
reads=0
[ -n "$MP_POOL" ] && reads=${MP_READ_WORKERS:-1}
export MP_READ_WORKERS=$reads
# The scrape server (nginx/marketpay-metrics.conf): each socket's queue.
export MP_METRICS=1
mpload=${MPLOAD:-$builddir/tests/load/mpload}
[ -x "$mpload" ] || bail "$mpload is missing (make check builds it)"
command -v systemd-socket-activate >/dev/null ||
	bail "systemd-socket-activate is missing (apt-get install systemd)"

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-restart.XXXXXX")
chmod 755 "$dir"
load_pid=""
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
	local st=$?
	[ -n "$load_pid" ] && kill -KILL "$load_pid" 2>/dev/null
	"$stack" stop "$dir/stack" >/dev/null 2>&1 || true
	if [ $st != 0 ] || [ $failed != 0 ]; then
		for f in fcgi.log nginx/error.log; do
			echo "--- last lines of $f ---" >&2
			tail -n 20 "$dir/stack/$f" >&2 2>/dev/null || true
		done
	fi
	if [ "${KEEP:-0}" = 1 ]; then echo "restart: kept $dir" >&2; else rm -rf "$dir"; fi
	[ $st = 0 ] || [ $failed != 0 ] || failed=1
	finish || exit 1
}
trap cleanup EXIT
trap 'exit 130' INT TERM

until_ok() { # until_ok SECONDS command...: 0 once command succeeds, 1 after SECONDS
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt "$end" ] || return 1
		sleep 0.1
	done
}
pool_pid() { cat "$dir/stack/pool.pid" 2>/dev/null; }
worker_pids() { { pgrep -P "$(pool_pid)" || true; } | sort -n | tr '\n' ' '; }
nworkers() { wc -w <<<"$(worker_pids)" | tr -d ' '; }
full_pool() { [ "$(nworkers)" = $((workers + reads)) ]; }
none_of() { # none_of "OLD PIDS": no pid of the pool now is one of them
	local p
	for p in $(worker_pids); do
		case " $1 " in *" $p "*) return 1 ;; esac
	done
}

"$stack" start "$dir/stack" >/dev/null
# shellcheck disable=SC1091
. "$dir/stack/stack.env"
ctl() { "$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" "$@"; }
merchant=$(ctl merchant create --name 'Restart Market')
MPLOAD_KEY=$(ctl key create "$merchant")
export MPLOAD_KEY
until_ok 10 full_pool || bail "the pool has not $workers + $reads workers: $(worker_pids)"
create_one() { # one create-session through nginx: 0 when it answered 2xx
	curl -fsS -o /dev/null -H "Authorization: API-KEY $MPLOAD_KEY" \
		-H 'Content-Type: application/json' --data '{"items":[{"id":"a","name":"A","price":1}]}' \
		"$MARKETPAY_BASE_URL/api/v1/payment/create-session"
}
# read_by_reads_worker LABEL: a GET through nginx answered 200 by a worker that logged
# "worker ready (reads socket)" (every worker logs its pid on each line).
read_by_reads_worker() {
	local mark pid
	[ "$reads" -gt 0 ] || return 0
	mark=$(stat -c %s "$dir/stack/fcgi.log")
	curl -fsS -o /dev/null -H "Authorization: API-KEY $MPLOAD_KEY" \
		"$MARKETPAY_BASE_URL/api/v1/payment/sessions?limit=1" || { not_ok "$1: GET failed"; return; }
	pid=$(tail -c +$((mark + 1)) "$dir/stack/fcgi.log" |
		sed -n 's/.* pid=\([0-9]*\) [^ ]* GET \/api\/v1\/payment\/sessions status=200 .*/\1/p')
	check "$1: a GET served by a worker of the reads socket (pid ${pid:-none})" \
		grep -q " pid=${pid:-none} .*worker ready (reads socket)$" "$dir/stack/fcgi.log"
}
read_by_reads_worker start
if [ "$reads" -gt 0 ]; then
	curl -fsS -o "$dir/metrics.txt" "http://127.0.0.1:$(cat "$dir/stack/metrics.port")/metrics/sandbox" ||
		true
	for m in marketpay_pool_listen_queue_limit marketpay_pool_reads_listen_queue_limit; do
		check "a scrape gives $m" grep -Eq "^$m [1-9][0-9]*$" "$dir/metrics.txt"
	done
	# Each socket's workers, busy and idle, counted apart.
	alive() { awk -v m="$1" 'index($0, m "{state=") == 1 { n += $2 } END { print n + 0 }' \
		"$dir/metrics.txt"; }
	check "the scrape counts $workers workers on the FastCGI socket, $reads on the reads socket" \
		[ "$(alive marketpay_pool_workers) $(alive marketpay_pool_reads_workers)" = "$workers $reads" ]
fi

# mpload's count of one kind: field NAME of its "kind=create" summary line.
field() { awk -v k="$2" '/^kind=create / { for (i = 2; i <= NF; i++) { split($i, a, "=");
	if (a[1] == k) print a[2] } }' "$1"; }

# under_load NAME MAXFAIL ACTION...: mpload for $secs s, ACTION after 2 s; then every
# request 200 but MAXFAIL at most, each of those a 502 (nginx's: no answer from the worker).
under_load() {
	local name=$1 max=$2 out="$dir/$1.load" total ok noanswer s502
	shift 2
	"$mpload" -c 2 -d "$secs" -m create=1 -t 10 -u "$MARKETPAY_BASE_URL" \
		-j "$dir/$name.tsv" >"$out" 2>&1 &
	load_pid=$!
	sleep 2
	"$@"
	wait "$load_pid" || true
	load_pid=""
	total=$(field "$out" n) ok=$(field "$out" s200) noanswer=$(field "$out" transport_errors)
	s502=$(field "$out" s502)
	ok=${ok:-0} s502=${s502:-0}
	echo "# $name: ${total:-0} requests in $secs s, $ok answered 200, $s502 answered 502," \
		"${noanswer:-?} no answer"
	[ -n "$total" ] && [ "$total" -gt 0 ] || { cat "$out" >&2; not_ok "$name: no load ran"; return; }
	if [ "$max" = 0 ]; then
		check "$name: 0 failed of $total requests (not 200: $((total - ok)))" [ "$total" = "$ok" ]
	else
		check "$name: at most $max failed of $total requests, each a 502 (not 200: $((total - ok)))" \
			test $((total - ok)) -le "$max" -a $((total - ok)) = "$s502"
	fi
}

restart_pool() {
	old_pool=$(pool_pid)
	if [ -z "$MP_POOL" ]; then
		# spawn-fcgi's pool owns its socket: a restart is a stop, then a new socket.
		"$stack" pool-stop "$dir/stack" && "$stack" pool-start "$dir/stack"
		return
	fi
	kill -TERM "$old_pool"
	until_ok 30 bash -c "! kill -0 $old_pool" || true
}
under_load restart 0 restart_pool
check "restart: a new pool ($(pool_pid), was $old_pool) with $workers workers" \
	until_ok 10 bash -c "[ \"\$(cat '$dir/stack/pool.pid')\" != $old_pool ]"
check "restart: the new pool has $workers + $reads workers" until_ok 10 full_pool
read_by_reads_worker restart

reload_pool() {
	old_pool=$(pool_pid) old_workers=$(worker_pids)
	kill -HUP "$old_pool"
	until_ok 15 none_of "$old_workers" || true
}
under_load reload 0 reload_pool
check "reload: the same pool, still running" kill -0 "$old_pool"
check "reload: every worker is new (was: $old_workers)" none_of "$old_workers"
check "reload: $workers + $reads workers" until_ok 10 full_pool
read_by_reads_worker reload

kill_worker() {
	victim=$(worker_pids | awk '{ print $1 }')
	kill -KILL "$victim"
	until_ok 10 full_pool || true
}
under_load kill-9 1 kill_worker
check "kill -9: worker $victim replaced, $workers + $reads workers" bash -c \
	"[ \"\$(pgrep -P $(pool_pid) | grep -cx $victim)\" = 0 ] && [ \"\$(pgrep -P $(pool_pid) | wc -l)\" = $((workers + reads)) ]"

# A stop while a worker waits for the first bytes of a connection it has accepted: libfcgi
# waits up to 2 s for them. A stop signal in that wait once made the worker loop for ever on
# the closed connection at 100% CPU, so the pool never stopped (one worker "neither served
# nor exited"). Here a client connects to the pool's socket and stays silent; the pool must
# stop, and the next one serve.
workers_state() { # what each worker of the pool is doing, for a failure's log
	local w
	for w in $(worker_pids); do
		echo "# worker $w: $(awk '/^State/ { print $2, $3 }' "/proc/$w/status" 2>/dev/null)," \
			"wchan $(cat "/proc/$w/wchan" 2>/dev/null)"
		if command -v gdb >/dev/null; then
			gdb -batch -p "$w" -ex bt 2>/dev/null | sed -n 's/^#/#   #/p'
		fi
	done
}
if [ -n "$MP_POOL" ]; then
	perl -MIO::Socket::UNIX -e 'my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "$!\n";
		sleep 30' "$dir/stack/fcgi.sock" &
	silent=$!
	sleep 0.5
	old_pool=$(pool_pid)
	kill -TERM "$old_pool"
	stopped=yes
	until_ok 10 bash -c "! kill -0 $old_pool" || stopped=no
	check "stop with a silent connection: the pool stops within 10 s" [ $stopped = yes ]
	if [ $stopped = no ]; then
		workers_state
		pkill -KILL -P "$old_pool" || true
	fi
	kill "$silent" 2>/dev/null || true
	check "stop with a silent connection: a new pool with $workers + $reads workers" \
		until_ok 10 full_pool
	check "stop with a silent connection: requests served" create_one
fi

nginx_reload() { /usr/sbin/nginx -p "$dir/stack/nginx" -c "$dir/stack/nginx/nginx.conf" -s reload; }
under_load nginx-reload 0 nginx_reload

# A configuration that does not load: the reload is refused, the workers serve on.
before=$(worker_pids)
cp "$dir/stack/worker.conf" "$dir/worker.conf.good"
echo "no_such_key = 1" >>"$dir/stack/worker.conf"
mark=$(stat -c %s "$dir/stack/fcgi.log")
kill -HUP "$(pool_pid)"
check "reload with a bad configuration: refused, logged" until_ok 10 bash -c \
	"tail -c +$((mark + 1)) '$dir/stack/fcgi.log' | grep -q 'reload refused'"
sleep 1
check "reload with a bad configuration: the same workers serve" [ "$(worker_pids)" = "$before" ]
cp "$dir/worker.conf.good" "$dir/stack/worker.conf"
check "reload with a bad configuration: requests still served" create_one

# The sockets and the options disagreeing: --read-workers with one socket (an upgrade whose
# socket unit was not restarted), or two sockets without it. The pool serves every socket
# there is, and says so on stderr.
# disagree NAME WORKERS MESSAGE SOCKET-ARGS... -- POOL-ARGS...
disagree() {
	local name=$1 n=$2 msg=$3 as=() socks=() one
	shift 3
	while [ "$1" != -- ]; do socks+=(-l "$dir/$1"); shift; done
	shift
	[ "$(id -u)" = 0 ] && as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
	(exec setsid systemd-socket-activate "${socks[@]}" -- "${as[@]}" \
		"$builddir/marketpay-fcgi" "$@" -c "$dir/stack/worker.conf") \
		</dev/null >"$dir/$name.log" 2>&1 &
	one=$!
	until_ok 10 test -S "${socks[1]}"
	# systemd-socket-activate starts the pool at the first connection.
	perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "$!\n"' \
		"${socks[1]}" || true
	check "$name: $n workers" until_ok 10 bash -c "[ \"\$(pgrep -P $one | wc -l)\" = $n ]"
	check "$name: said why" grep -qF "$msg" "$dir/$name.log"
	kill -TERM "$one" 2>/dev/null || true
	until_ok 10 bash -c "! kill -0 $one" || kill -KILL -- "-$one" 2>/dev/null || true
}
if [ -n "$MP_POOL" ]; then
	disagree "--read-workers 2, one socket" 3 'the 2 read workers accept on the one socket' \
		one.sock -- --workers 1 --read-workers 2
	disagree "two sockets, no --read-workers" 2 'and no --read-workers: 1 worker accepts' \
		two.sock two-reads.sock -- --workers 1
fi
