# Shared by the benchmarks (sourced, not run): bench/create-session, bench/transfer,
# bench/checkout-page, bench/read, bench/alternate,
# bench/wallet-pay, bench/mixed (and through it bench/soak), bench/key-timing and bench/webhooks.
#   here, srcdir                 bench/ and the source tree
#   die, say                     a message prefixed with "$me: " (default bench) to stderr
#   posint VALUE                 true when VALUE is a positive integer
#   mp_paths                     MP_BUILDDIR (default build/ or .), pgbin and MP_NGINX_WORKERS
#                                (default the README's recommendation), exported
#   mp_env_settings              mp_paths; DURATION, WARMUP, CONNECTIONS, MP_WORKERS; durable
#                                PostgreSQL
#   mp_need_built HINT BIN...    dies naming HINT unless each BIN is executable
#   mp_need_wrk, mp_need_pgbench wrk (installed when root) and pgbench (sets pgbench)
#   mp_need_tools HINT [BIN...]  the programs built (and BIN), wrk and pgbench
#   mp_start_stack WORKERS [NOTE]  a stack in a fresh $tmp, stopped by mp_cleanup on exit
#                                (after the caller's mp_stop_own, if defined); sets pg_pid,
#                                ngx_pid, pool_pid (the pools' pids: "MAIN [READS]"), url;
#                                MP_READ_WORKERS (default one per core; 0: none) workers
#                                for GET and HEAD, as the README's units and server blocks do
#   mp_pool_pids                 the pids of the stack's pools, as pool_pid holds them
#   mp_prime_wal                 (run by mp_start_stack) min_wal_size of WAL segments made and
#                                recycled, as a database in service has them; MP_PRIME_WAL=0: not
#   mp_min_wal_segments, mp_wal_enter N  min_wal_size in segments; write into the next N
#   mp_pg_tuning FILE            MP_PG_TUNED=1: the README's production PostgreSQL settings
#                                (doc/postgresql/marketpay-tuning.conf scaled to the RAM) for
#                                the stack mp_start_stack starts; mp_seed_stack DIR, when the
#                                benchmark defines it, fills the stack's directory first
#   psql, ctl, conf, checkpoint  the stack's database, marketpayctl and marketpay.conf
#   mp_session_params            a merchant, its key and the pgbench variables of a session
#   mp_read_sessions DIGEST MERCHANT N  N sessions of one merchant to read; prints one's id
#   mp_wait_up URL               true once URL answers (10 s at most)
#   mp_wrk OUT SECONDS [ARGS] URL  a wrk run of conns connections, its output in OUT
#   median [FILE]                the median of numbers, one a line
#   mp_pin_settings, mp_transfer_merchant, mp_transfer_vars
#                                a merchant ready for transfers and its pgbench variables
#   mp_pay_setup, mp_pay_sessions, mp_wallet_pay_script
#                                merchants, wallets with a PIN and open sessions to pay (the
#                                tables bench.*); the pgbench script of a wallet payment
#   cpu_snap, cpu_snap_of, cpu_report, cpu_other, note_other, pg_settle, children
#                                the CPU each part of the stack (or any processes) used
#                                during a run
#   to_ms, wrk_rps, wrk_pct, wrk_total, wrk_non2xx, wrk_sockerr, ratio, met, warn_disturbed
#                                wrk's output, the figures made of it, a disturbed run
#   mp_run_pgbench, pgbench_tps, pgbench_avg, pgbench_ok
#                                a pgbench run of conns clients and its output
# shellcheck shell=bash disable=SC2317 # functions called from traps

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=$(dirname "$here")

die() { echo "${me:-bench}: $*" >&2; exit 1; }
say() { echo "${me:-bench}: $*" >&2; }
posint() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }

mp_paths() {
	if [ -z "${MP_BUILDDIR:-}" ]; then
		if [ -x "$srcdir/build/marketpay-fcgi" ]; then MP_BUILDDIR=$srcdir/build; else MP_BUILDDIR=.; fi
	fi
	MP_BUILDDIR=$(cd "$MP_BUILDDIR" && pwd)
	pgbin=${MP_PGBIN:-/usr/lib/postgresql/15/bin}
	export MP_BUILDDIR MP_SRCDIR=$srcdir MP_PGBIN=$pgbin
	mp_nginx_workers
}
# The settings bench/create-session and bench/transfer take from the environment (see their
# headers): duration, warmup, conns and workers; PostgreSQL durable, the same for both sides.
mp_env_settings() {
	mp_paths
	duration=${DURATION:-15}
	warmup=${WARMUP:-3}
	conns=${CONNECTIONS:-32}
	workers=${MP_WORKERS:-8}
	unset MP_FAST_PG
}
mp_need_built() { # mp_need_built HINT BIN...
	local hint=$1 bin
	shift
	for bin in "$@"; do
		[ -x "$bin" ] || die "$bin is missing${hint:+: $hint}"
	done
}
mp_need_wrk() {
	if ! command -v wrk >/dev/null; then
		[ "$(id -u)" = 0 ] || die "wrk is missing (apt-get install wrk)"
		say "installing wrk"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q wrk >/dev/null || die "cannot install wrk"
	fi
}
mp_need_pgbench() {
	pgbench=$pgbin/pgbench
	[ -x "$pgbench" ] || pgbench=$(command -v pgbench) || die "pgbench is missing"
}
# mp_need_tools HINT [BIN...]: marketpay-fcgi, marketpayctl and BIN built, wrk and pgbench.
mp_need_tools() {
	local hint=$1
	shift
	mp_need_built "$hint" "$MP_BUILDDIR/marketpay-fcgi" "$MP_BUILDDIR/marketpayctl" "$@"
	mp_need_wrk
	mp_need_pgbench
}

# --- a stack of its own, stopped on exit ----------------------------------------------------
tmp='' client=''
stack_pids() { # processes left whose command line names this run's directory
	# The pattern comes from a file so that this grep does not find itself.
	grep -lF -f <(printf '%s\n' "$tmp/") /proc/[0-9]*/cmdline 2>/dev/null |
		sed 's,^/proc/\([0-9]*\)/cmdline$,\1,' || true
}
mp_cleanup() {
	local rc=$? i pids
	if [ -n "${client:-}" ]; then kill -TERM "$client" 2>/dev/null || true; fi
	# A benchmark's own processes first (mp_stop_own, when it defines one): load generators
	# and servers of its own that should stop before the stack they talk to.
	if declare -F mp_stop_own >/dev/null; then mp_stop_own || true; fi
	if [ -n "$tmp" ]; then
		"$srcdir/tests/stack.sh" stop "$tmp" >/dev/null 2>&1 || true
		# Should the directory have gone under us (pid files and all), stack.sh stop finds
		# nothing: stop what still runs for this directory, by pid.
		for i in $(seq 60); do
			pids=$(stack_pids)
			[ -n "$pids" ] || break
			# shellcheck disable=SC2086 # $pids is a list
			case $i in
			1) say "stopping leftover processes of $tmp:" $pids
			   kill -TERM $pids 2>/dev/null || true ;;
			20) kill -INT $pids 2>/dev/null || true ;;
			40) kill -KILL $pids 2>/dev/null || true ;;
			esac
			sleep 0.1
		done
		if [ "${KEEP:-0}" = 1 ]; then say "kept $tmp"; else rm -rf "$tmp"; fi
	fi
	exit "$rc"
}
# nginx's worker processes as the README recommends them: one on a machine of two cores that
# also runs the pool and PostgreSQL (bench/README.md, "Comparing two configurations"), else
# one per core (Debian's "auto"). tests/stack.sh reads MP_NGINX_WORKERS.
mp_nginx_workers() {
	MP_NGINX_WORKERS=${MP_NGINX_WORKERS:-$(nproc | awk '{ print ($1 <= 2) ? 1 : $1 }')}
	export MP_NGINX_WORKERS
}
# The pool for GET and HEAD: one worker per core, as the README recommends READ_WORKERS
# (bench/README.md, "A pool of its own for reads"). tests/stack.sh reads MP_READ_WORKERS.
mp_read_workers() {
	MP_READ_WORKERS=${MP_READ_WORKERS-$(nproc)}
	export MP_READ_WORKERS
}
mp_pool_pids() {
	local p
	p=$(cat "$tmp/pool.pid")
	[ ! -f "$tmp/pool-reads.pid" ] || p+=" $(cat "$tmp/pool-reads.pid")"
	echo "$p"
}
mp_start_stack() { # mp_start_stack WORKERS [NOTE]: NOTE follows the workers in the message
	MP_WORKERS=$1
	export MP_WORKERS
	mp_nginx_workers
	mp_read_workers
	# nginx's access log as deployed (nginx/marketpay-sandbox.conf), not the tests' two.
	export MP_NGINX_LOG=deployed
	# Not /tmp/marketpay-*: a clean-up elsewhere once removed such a directory mid-run.
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpbench.XXXXXX")
	trap mp_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	# A benchmark's own contents for the directory (bench/growth: a preloaded cluster).
	if declare -F mp_seed_stack >/dev/null; then mp_seed_stack "$tmp"; fi
	mp_pg_tuning "$tmp/marketpay-tuning.conf"
	say "starting a stack in $tmp ($MP_WORKERS workers${2:-}, $MP_READ_WORKERS for reads, nginx worker_processes $MP_NGINX_WORKERS${MP_PG_CONF:+, $(mp_pg_tuning_note)})"
	"$srcdir/tests/stack.sh" start "$tmp" >"$tmp/stack.log" 2>&1 ||
		{ cat "$tmp/stack.log" >&2; die "the stack did not start"; }
	# shellcheck disable=SC1091
	. "$tmp/stack.env"
	pg_pid=$(head -1 "$tmp/pg/data/postmaster.pid")
	ngx_pid=$(cat "$tmp/nginx/nginx.pid")
	pool_pid=$(mp_pool_pids)
	url=$MARKETPAY_BASE_URL
	[ "${MP_PG_STATEMENTS:-0}" != 1 ] || pss_create
	mp_prime_wal
}

# mp_prime_wal: the WAL segments a database in service has ready for reuse. PostgreSQL
# makes each new 16 MB segment by writing it full of zeros and flushing it (wal_init_zero),
# while holding the lock that every commit's flush waits for: on a new cluster, at a few
# thousand commits a second, every commit in flight stalls for 30-120 ms every few seconds
# (bench/README.md, "New WAL segments"). A cluster that has been through a checkpoint renames
# the segments it no longer needs for reuse instead, min_wal_size of them at least, and no
# commit waits for a zero-fill. So the stack's database is brought to that state before
# any run: min_wal_size of segments entered (mp_wal_enter), then two checkpoints, which
# recycle them. MP_PRIME_WAL=0 leaves it out (to compare).
mp_prime_wal() {
	[ "${MP_PRIME_WAL:-1}" != 0 ] || return 0
	local n
	n=$(mp_min_wal_segments)
	posint "$n" || die "cannot read min_wal_size"
	say "priming the WAL: $n segments (min_wal_size) made, then recycled by two checkpoints"
	{ mp_wal_enter "$n" && psql -c CHECKPOINT -c CHECKPOINT; } || die "cannot prime the WAL"
}
# mp_min_wal_segments: how many WAL segments min_wal_size makes (at least 1).
mp_min_wal_segments() {
	psql -c "SELECT greatest(pg_size_bytes(current_setting('min_wal_size'))
		/ pg_size_bytes(current_setting('wal_segment_size')), 1)"
}
# mp_wal_enter N: write into each of the next N WAL segments, pg_switch_wal() then a row in a
# table of its own (dropped after); a segment not ready for reuse is made then.
mp_wal_enter() {
	psql -c 'SET client_min_messages = warning' -c 'CREATE TABLE mp_wal_enter (n int)' \
		-c "DO \$\$ BEGIN FOR i IN 1..$1 LOOP PERFORM pg_switch_wal(); INSERT INTO mp_wal_enter VALUES (i);
			COMMIT; END LOOP; END \$\$" \
		-c 'DROP TABLE mp_wal_enter'
}

# MP_PG_STATEMENTS=1: pg_stat_statements in the stack's PostgreSQL, tracking the statements
# inside our functions too. A benchmark brackets a run with pss_reset and pss_dump FILE (no-ops
# without it); pss_compare A UNITS_A B UNITS_B prints both runs' statements side by side, per
# unit (a request, a transaction): calls, execution µs and blocks, the largest first.
# mp_warm_analyze, after a benchmark's warm-up: ANALYZE. The workers connect when the stack
# starts and plan each foreign-key check once, on the tables as they first find them (nearly
# empty: a sequential scan), keeping the plan until the table's statistics change; in a
# running service autovacuum's analyze does that within minutes of the first rows. pgbench
# connects afresh at each run. Without it, the stack's side pays scans pgbench does not.
# MP_WARM_ANALYZE=0 leaves it out (to compare).
mp_warm_analyze() { [ "${MP_WARM_ANALYZE:-1}" = 0 ] || psql -c ANALYZE >/dev/null; }
pss_conf_lines() { printf "shared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = all\n"; }
pss_reset() {
	[ "${MP_PG_STATEMENTS:-0}" = 1 ] || return 0
	psql -c 'SELECT pg_stat_statements_reset()' >/dev/null
}
pss_dump() { # pss_dump FILE: with MP_PG_STATEMENTS=1, pss_snapshot FILE
	[ "${MP_PG_STATEMENTS:-0}" = 1 ] || return 0
	pss_snapshot "$1"
}
# pss_snapshot FILE: queryid, calls, exec ms, blocks, the query's start; one line per query id
# (the same statement is a row per role and per nesting level: summed)
pss_snapshot() {
	psql -F$'\t' -c "SELECT queryid, sum(calls), sum(total_exec_time), sum(shared_blks_hit + shared_blks_read),
		min(regexp_replace(left(query, 80), '\s+', ' ', 'g')) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) GROUP BY queryid" >"$1"
}
pss_create() { psql -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' >/dev/null; }
pss_compare() { # pss_compare A UNITS_A B UNITS_B
	awk -F'\t' -v na="$2" -v nb="$4" 'NR == FNR { c[$1] = $2 / na; t[$1] = 1000 * $3 / na; b[$1] = $4 / na; q[$1] = $5; next }
		{ cb[$1] = $2 / nb; tb[$1] = 1000 * $3 / nb; bb[$1] = $4 / nb; q[$1] = $5 }
		END { for (k in q) printf "%9.1f %9.1f  %6.2f %6.2f  %7.1f %7.1f  %s\n", t[k], tb[k], c[k], cb[k], b[k], bb[k], q[k] }' \
		"$1" "$3" | sort -k1,1 -g -r | awk -v n="${PSS_TOP:-25}" 'NR <= n'
}
# mp_pg_tuning FILE: with MP_PG_TUNED=1, doc/postgresql/marketpay-tuning.conf scaled to
# MP_PG_RAM_MB (default the machine's RAM) as the README says, written to FILE and exported
# as MP_PG_CONF for tests/stack.sh; otherwise PostgreSQL's defaults (MP_PG_CONF unset).
# MP_PG_STATEMENTS=1 adds pg_stat_statements to the file (and sets MP_PG_CONF) either way.
mp_pg_tuning() {
	unset MP_PG_CONF
	: >"$1"
	if [ "${MP_PG_STATEMENTS:-0}" = 1 ]; then
		pss_conf_lines >>"$1"
		MP_PG_CONF=$1
		export MP_PG_CONF
	fi
	[ "${MP_PG_TUNED:-0}" = 1 ] || return 0
	local ram=${MP_PG_RAM_MB:-$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)}
	posint "$ram" || die "MP_PG_RAM_MB must be a positive number of MB"
	awk -v ram="$ram" '
		function mb(v) { return int(v) "MB" }
		/^shared_buffers =/ { sub(/= [^ ]+/, "= " mb(ram / 4)) }
		/^effective_cache_size =/ { sub(/= [^ ]+/, "= " mb(ram * 3 / 4)) }
		/^maintenance_work_mem =/ { sub(/= [^ ]+/, "= " mb(ram / 16 > 2048 ? 2048 : ram / 16)) }
		{ print }' "$srcdir/doc/postgresql/marketpay-tuning.conf" >>"$1"
	MP_PG_CONF=$1
	export MP_PG_CONF
}
mp_pg_tuning_note() { # the scaled settings, for the messages
	awk '/^(shared_buffers|max_wal_size|checkpoint_timeout) =/ { printf "%s%s=%s", sep, $1, $3; sep = " " }' \
		"$MP_PG_CONF"
}
psql() { "$pgbin/psql" -X -qAt -v ON_ERROR_STOP=1 "$@"; }
ctl() { "$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" "$@"; }
conf() { # conf NAME DEFAULT: a setting of the stack's marketpay.conf, or its default
	local v
	v=$(sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\([^[:space:]]*\).*/\1/p" "$MARKETPAY_CONFIG")
	echo "${v:-$2}"
}
checkpoint() { psql -c CHECKPOINT; }

# mp_session_params: a merchant (merchant) and its key in the stack (key, exported as
# MARKETPAY_BENCH_KEY for the wrk scripts; digest, its SHA-256 as bytea hex), and session_vars, the -D arguments that give
# bench/pgbench-create-session.sql what the worker sends for create-session.lua's body.
mp_session_params() {
	local lifetime
	merchant=$(ctl merchant create --name Bench)
	key=$(ctl key create "$merchant")
	export MARKETPAY_BENCH_KEY=$key
	digest='\x'$(printf '%s' "$key" | sha256sum | cut -d' ' -f1)
	[ "$(psql -c "SELECT count(*) FROM api_keys WHERE digest = '$digest'::bytea")" = 1 ] ||
		die "the key's digest is not in api_keys"
	lifetime=$(conf session_lifetime 1800)
	session_vars=(-D digest="$digest" -D env=sandbox -D user_id=order-1 -D email=b@example.com
		-D lifetime="$lifetime" -D ids='{"sku-1","sku-2"}' -D names='{"Green tea","Cup"}'
		-D prices='{1250,300}')
}

# --- transfers: a merchant ready to send them, and what pgbench passes for it -------------
# mp_pin_settings: tz (the config's timezone, default UTC) and pepper_hex (the stack's PIN
# pepper as hex), both as the worker uses them.
mp_pin_settings() {
	local pepper
	tz=$(sed -n 's/^[[:space:]]*timezone[[:space:]]*=[[:space:]]*\([^[:space:]]*\).*/\1/p' "$MARKETPAY_CONFIG")
	tz=${tz:-UTC}
	pepper=$(sed -n 's/^[[:space:]]*pepper_file[[:space:]]*=[[:space:]]*\([^[:space:]]*\).*/\1/p' "$MARKETPAY_CONFIG")
	[ -r "$pepper" ] || die "cannot read the stack's pepper_file ($pepper)"
	pepper_hex=$(od -An -v -tx1 "$pepper" | tr -d ' \n')
}
# mp_random_pin: a PIN of six digits, taken at random for the run (never one of the tests').
mp_random_pin() { printf '%06d' $(((RANDOM * 32768 + RANDOM) % 1000000)); }
# mp_transfer_merchant NAME DEPOSIT NVENDORS: a merchant with a key, a random PIN, settlement
# on, a settlement account holding DEPOSIT and NVENDORS vendor accounts; prints one line:
# id, key, PIN, vendors ({VE...,...}).
mp_transfer_merchant() {
	local m key pin acct v vendors="" i
	m=$(ctl merchant create --name "Bench $1")
	key=$(ctl key create "$m")
	pin=$(mp_random_pin)
	printf %s "$pin" | ctl merchant pin "$m" >/dev/null
	ctl merchant settlement "$m" on >/dev/null
	acct=$(ctl account create --kind merchant --merchant "$m")
	ctl account deposit "$acct" "$2" >/dev/null
	for i in $(seq "$3"); do
		v=$(ctl account create --kind vendor)
		vendors="$vendors${vendors:+,}$v"
	done
	printf '%s %s %s {%s}\n' "$m" "$key" "$pin" "$vendors"
}
# mp_transfer_vars ID KEY PIN VENDORS: bench/pgbench-transfer.sql's variables for the
# merchant, on one line: id, \x digest of the key, \x PIN digest and legacy digest as the
# worker computes them (src/pin.c: HMAC-SHA256 under the pepper of
# "marketpay-pin-v2:merchant:ID" NUL PIN, and of the PIN alone), vendors. Needs pepper_hex.
mp_transfer_vars() {
	printf '%s \\x%s \\x%s \\x%s %s\n' "$1" "$(printf %s "$2" | sha256sum | cut -d' ' -f1)" \
		"$(printf 'marketpay-pin-v2:merchant:%s\0%s' "$1" "$3" | mp_pin_hmac)" \
		"$(printf %s "$3" | mp_pin_hmac)" "$4"
}
# --- wallet payments: sessions made in advance, each paid once ----------------------------
# mp_pay_setup MERCHANTS WALLETS PIN: the tables of schema bench: merchants (i, key digest),
# wallets (i, account number, PIN digest and legacy digest as src/pay_wallet.c makes them for
# PIN: owner "account:NUMBER"), each wallet a customer account holding 10,000,000.00 of the
# stack's default currency; and pay, the sessions of mp_pay_sessions. Needs pepper_hex.
mp_pay_setup() {
	local i m k a
	psql -c "CREATE SCHEMA bench;
		CREATE TABLE bench.merchants (i int PRIMARY KEY, digest bytea NOT NULL);
		CREATE TABLE bench.wallets (i int PRIMARY KEY, account text NOT NULL,
			digest text NOT NULL, legacy text NOT NULL);
		CREATE TABLE bench.pay (run text, n int, sid uuid NOT NULL, account text NOT NULL,
			digest text NOT NULL, legacy text NOT NULL, PRIMARY KEY (run, n));"
	for i in $(seq "$1"); do
		m=$(ctl merchant create --name "Shop $i")
		k=$(ctl key create "$m")
		echo "$i \\x$(printf %s "$k" | sha256sum | cut -d' ' -f1)"
	done | psql -c "\\copy bench.merchants FROM STDIN WITH (FORMAT csv, DELIMITER ' ')"
	for i in $(seq "$2"); do
		a=$(ctl account create --kind customer --name "Bench wallet $i")
		ctl account deposit "$a" 10000000.00 >/dev/null
		printf %s "$3" | ctl account pin "$a" >/dev/null
		printf '%s %s \\x%s \\x%s\n' "$i" "$a" \
			"$(printf 'marketpay-pin-v2:account:%s\0%s' "$a" "$3" | mp_pin_hmac)" \
			"$(printf %s "$3" | mp_pin_hmac)"
	done | psql -c "\\copy bench.wallets FROM STDIN WITH (FORMAT csv, DELIMITER ' ')"
}
# mp_pay_sessions RUN COUNT MERCHANTS WALLETS: COUNT open sessions (a day's lifetime, two
# items, 15.50 in all, redirect URLs set) of the first MERCHANTS merchants, made as the service
# makes them (mp_create_session), each to be paid from one of the first WALLETS wallets: rows
# (RUN, 1..COUNT) of bench.pay.
mp_pay_sessions() {
	psql -c "INSERT INTO bench.pay SELECT '$1', g, (SELECT id FROM mp_create_session(m.digest,
		'sandbox', 'order-' || g, 'b@example.com', 'https://shop.example/ok',
		'https://shop.example/no', 86400, '{sku-1,sku-2}', '{\"Green tea\",\"A cup\"}',
		'{1250,300}', NULL)), w.account, w.digest, w.legacy
		FROM generate_series(1, $2) g JOIN bench.merchants m ON m.i = 1 + g % $3
		JOIN bench.wallets w ON w.i = 1 + g % $4"
}
# mp_paid RUN: how many of RUN's sessions (bench.pay) are paid now.
mp_paid() {
	psql -c "SELECT count(*) FROM bench.pay p JOIN payment_sessions s ON s.id = p.sid
		WHERE p.run = '$1' AND s.status = 'paid'"
}
# mp_wallet_pay_script OUT: bench/pgbench-wallet-pay.sql with the page's statements
# (bench/pgbench-checkout-page.sql) before the payment's, as the worker sends them, into OUT.
mp_wallet_pay_script() {
	awk -v page="$here/pgbench-checkout-page.sql" '/^SELECT outcome/ {
		while ((getline l < page) > 0) if (l !~ /^--/) print l
	} { print }' "$here/pgbench-wallet-pay.sql" >"$1"
}
mp_pin_hmac() { openssl dgst -sha256 -mac HMAC -macopt "hexkey:$pepper_hex" | awk '{ print $NF }'; }

mp_read_sessions() { # mp_read_sessions DIGEST MERCHANT N: N sessions made as the service
	# makes them, the tables analyzed; prints the id of one of them, taken at random
	psql -c "SELECT count(*) FROM generate_series(1, $3) g, mp_create_session('$1',
		'sandbox', 'order-' || g, 'b@example.com', NULL, NULL, 1800, '{sku-1,sku-2}',
		'{\"Green tea\",Cup}', '{1250,300}', NULL)" >/dev/null
	psql -c "VACUUM ANALYZE payment_sessions, session_items" >/dev/null
	psql -c "SELECT id FROM payment_sessions WHERE merchant_id = $2 ORDER BY random() LIMIT 1"
}
mp_wait_up() { # mp_wait_up URL
	local i
	for i in $(seq 100); do
		curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# mp_wrk OUT SECONDS [wrk args...] URL: wrk's two threads and conns connections; its output
# in OUT. In the background and waited for, so that a signal stops the benchmark at once
# (mp_cleanup stops $client); its output on stderr when it fails.
mp_wrk() {
	local out=$1 secs=$2
	shift 2
	wrk -t2 -c"$conns" -d"${secs}s" --latency "$@" >"$out" 2>&1 &
	client=$!
	wait "$client" || { cat "$out" >&2; die "wrk failed"; }
	client=
}

# median [FILE]: the median of the numbers, one a line, in FILE or on stdin.
median() { sort -g "$@" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# --- CPU accounting: clock ticks used by each part of the stack during a run -------------
children() { ps -o pid= --ppid "$1" || true; } # pids whose parent is $1
ticks() { # ticks (utime+stime) of pids $@, plus the reaped children (cutime+cstime) of the
	# first, which is read last: a child reaped meanwhile is counted twice rather than lost
	local first=$1 pid t=0 v
	shift
	for pid in "$@" "$first"; do
		v=$(awk -v first="$([ "$pid" = "$first" ] && echo 1 || echo 0)" \
			'{ sub(/^.*\) /, ""); print $12 + $13 + (first ? $14 + $15 : 0) }' "/proc/$pid/stat" 2>/dev/null) || v=0
		t=$((t + ${v:-0}))
	done
	echo "$t"
}
group() { # a pid and its children
	local p=$1
	# shellcheck disable=SC2046 # one word per pid
	echo "$p" $(children "$p")
}
machine_busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
client_ticks() { # reaped children of the benchmark: the load generators (and a few ps/awk)
	awk '{ sub(/^.*\) /, ""); print $14 + $15 }' "/proc/$$/stat"
}
cpu_snap_of() { # cpu_snap_of PART... -> "ticks of each PART, machine, client, seconds"
	# PART: a list of pids (one word: "1 2 3"), each counted with its children
	local part p t out=''
	for part in "$@"; do
		t=0
		# shellcheck disable=SC2046 # one word per pid
		for p in $part; do t=$((t + $(ticks $(group "$p")))); done
		out+="$t "
	done
	echo "$out$(machine_busy) $(client_ticks) $EPOCHREALTIME"
}
cpu_snap() { cpu_snap_of "$pg_pid" "$pool_pid" "$ngx_pid"; } # the stack: pg, pool, nginx
pg_settle() { # wait (5 s at most) until the backends of a finished pgbench have exited
	local n=$1 i
	for i in $(seq 50); do
		[ "$(children "$pg_pid" | wc -l)" -gt "$n" ] || return 0
		sleep 0.1
	done
}
# cpu_report BEFORE AFTER [NAMES] -> percent of one core for each part of two cpu_snap_of
# lines, NAMES naming the parts in their order (default cpu_snap's: the stack's three)
cpu_report() {
	awk -v tck="$(getconf CLK_TCK)" -v b="$1" -v a="$2" -v ncpu="$(nproc)" \
		-v names="${3:-postgres marketpay-fcgi nginx}" 'BEGIN {
		n = split(b, x, " ") - 3; split(a, y, " "); split(names, nm, " ")
		f = 100 / (tck * (y[n + 3] - x[n + 3]))
		all = (y[n + 1] - x[n + 1]) * f; cl = (y[n + 2] - x[n + 2]) * f; rest = all - cl
		for (i = 1; i <= n; i++) { v = (y[i] - x[i]) * f; rest -= v; printf "%s %.0f%%, ", nm[i], v }
		if (rest < 0) rest = 0
		printf "load generator %.0f%%, other %.0f%% (machine busy %.0f%% of %d%%)", cl, rest, all, 100 * ncpu
	}'
}
# The disk beside the CPU: a run that waits on fsync is slowed by other writes the CPU
# columns cannot show (another cluster's copy being written back). disk_snap: "dirty
# writeback written" (pages dirty and under writeback in the page cache, KiB written to
# disk so far); disk_report BEFORE AFTER: what was waiting at the start and the writes during.
disk_snap() {
	awk '$1 == "nr_dirty" { d = $2 } $1 == "nr_writeback" { w = $2 } $1 == "pgpgout" { o = $2 }
		END { print d, w, o }' /proc/vmstat
	echo "$EPOCHREALTIME"
}
disk_report() {
	awk -v b="$1" -v a="$2" -v pg="$(getconf PAGESIZE)" 'BEGIN {
		split(b, x, /[ \n]/); split(a, y, /[ \n]/)
		printf "dirty %.0f MiB and writeback %.0f MiB at the start, %.1f MiB/s written during",
			x[1] * pg / 1048576, x[2] * pg / 1048576, (y[3] - x[3]) / 1024 / (y[4] - x[4])
	}'
}
# cpu_ms_per BEFORE AFTER PART N: ms of CPU per unit over two cpu_snap_of lines, PART a
# part's position (1 for the first) or "machine" (every process), N units (requests)
cpu_ms_per() {
	awk -v tck="$(getconf CLK_TCK)" -v b="$1" -v a="$2" -v p="$3" -v n="$4" 'BEGIN {
		k = split(b, x, " ") - 3; split(a, y, " "); i = (p == "machine") ? k + 1 : p
		printf "%.4f", (n > 0 ? 1000 * (y[i] - x[i]) / tck / n : 0)
	}'
}
cpu_other() { # ticks outside the parts and the load generator, in percent of one core
	awk -v tck="$(getconf CLK_TCK)" -v b="$1" -v a="$2" 'BEGIN {
		n = split(b, x, " ") - 3; split(a, y, " "); f = 100 / (tck * (y[n + 3] - x[n + 3]))
		r = (y[n + 1] - x[n + 1]) - (y[n + 2] - x[n + 2])
		for (i = 1; i <= n; i++) r -= y[i] - x[i]
		printf "%.0f", r < 0 ? 0 : r * f
	}'
}
# note_other BEFORE AFTER: other_max (the caller's, or global) keeps the most cpu_other saw.
note_other() { local o; o=$(cpu_other "$@"); [ "$o" -le "${other_max:-0}" ] || other_max=$o; }

# --- wrk's output ---------------------------------------------------------------------------
to_ms() { # "1.23ms" / "850.00us" / "1.02s" -> milliseconds
	awk -v v="$1" 'BEGIN {
		if (v ~ /us$/) { sub(/us$/, "", v); printf "%.2f", v / 1000 }
		else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.2f", v }
		else if (v ~ /m$/) { sub(/m$/, "", v); printf "%.2f", v * 60000 }
		else if (v ~ /s$/) { sub(/s$/, "", v); printf "%.2f", v * 1000 }
		else { print "?"; exit 1 }
	}'
}
wrk_rps() { awk '/^Requests\/sec:/ { print $2 }' "$1"; }
wrk_pct() { to_ms "$(awk -v p="$2%" '$1 == p { print $2; exit }' "$1")"; }
wrk_total() { awk '/requests in/ { print $1; exit }' "$1"; }
wrk_non2xx() { awk -F: '/Non-2xx or 3xx responses/ { gsub(/ /, "", $2); n = $2 } END { print n + 0 }' "$1"; }
wrk_sockerr() { # connect+read+write+timeout
	awk '/Socket errors/ { gsub(/,/, ""); n = $4 + $6 + $8 + $10 } END { print n + 0 }' "$1"
}
# warn_disturbed [INDENT]: when more than 20% of a core (other_max) went elsewhere, says so.
warn_disturbed() {
	[ "${other_max:-0}" -gt 20 ] || return 0
	printf '%s\n' "WARNING: up to ${other_max}% of a core went to processes outside this benchmark during a run:" \
		"the machine was not idle and the figures (above all the ratios) are disturbed. Rerun on a" \
		"quiet machine." | sed "s/^/${1:-}/"
}

# --- pgbench -------------------------------------------------------------------------------
# mp_run_pgbench OUTDIR SECONDS SCRIPT [ARG...]: pgbench -n -M prepared, conns clients on 2
# threads, for SECONDS, in OUTDIR (stdout, stderr); client is its pid meanwhile.
mp_run_pgbench() {
	local dir=$1 secs=$2 script=$3
	shift 3
	mkdir -p "$dir"
	(cd "$dir" && exec "$pgbench" -n -M prepared -c "$conns" -j 2 -T "$secs" -f "$script" \
		"$@" >stdout 2>stderr) &
	client=$!
	wait "$client" || { cat "$dir/stderr" "$dir/stdout" >&2; die "pgbench failed"; }
	client=
}
pgbench_tps() { awk '/^tps = / { print $3; exit }' "$1/stdout"; }
pgbench_avg() { awk '/^latency average = / { print $4; exit }' "$1/stdout"; }
pgbench_total() { awk -F: '/^number of transactions actually processed/ { gsub(/ /, "", $2); print $2; exit }' "$1/stdout"; }
pgbench_ok() { grep -q '^number of failed transactions: 0 ' "$1/stdout"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", 100 * a / b }'; }
met() { if awk "BEGIN { exit !($1) }"; then echo "met"; else echo "MISSED"; fi; }
