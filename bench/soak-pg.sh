# bench/soak's view of PostgreSQL (sourced by bench/soak, not run): the extra settings of
# MP_PG_SET, and the counters that explain a drift of throughput or latency over a run.
#   soak_pg_conf LINES    appends name=value settings to the cluster's postgresql.conf and
#                         restarts it (the pool and webhookd around it); prints what took effect
#   soak_pg_snap          the counters, one line (see below), into pg_now
#   soak_pg_step N        the columns of the interval since the last call for N requests, in
#                         pg_cols (not a subshell: it keeps the last snapshot): db MiB, WAL
#                         kB/req, FPI/req, ckpt, bkw, blocks/req, heap%, idx%, tuples/req,
#                         av, aa, whq, lvl
# shellcheck shell=bash disable=SC2034,SC2154 # tmp, srcdir, pg_pid, pool_pid: bench/lib.sh's

# soak_pg_conf "name=value ...": as postgresql.conf lines (the last one of a name wins, so they
# override the defaults); shared_buffers and the like need the restart.
soak_pg_conf() {
	local kv names=''
	for kv in $1; do
		[[ $kv =~ ^[a-z_.]+=[^\'[:space:]]+$ ]] || die "MP_PG_SET: '$kv' is not name=value"
		printf "%s = '%s'\n" "${kv%%=*}" "${kv#*=}"
		names="$names${names:+,}'${kv%%=*}'"
	done >>"$tmp/pg/data/postgresql.conf"
	say "restarting PostgreSQL with MP_PG_SET"
	"$srcdir/tests/stack.sh" pool-stop "$tmp" >/dev/null
	[ ! -f "$tmp/pool-reads.pid" ] || "$srcdir/tests/stack.sh" pool-stop "$tmp" reads >/dev/null
	"$srcdir/tests/stack.sh" webhookd-stop "$tmp" >/dev/null
	"$srcdir/tests/stack.sh" pg-stop "$tmp" >/dev/null
	"$srcdir/tests/stack.sh" pg-start "$tmp" >/dev/null || { cat "$tmp/pg/server.log" >&2; die "PostgreSQL did not start with MP_PG_SET"; }
	"$srcdir/tests/stack.sh" webhookd-start "$tmp" >/dev/null
	"$srcdir/tests/stack.sh" pool-start "$tmp" >/dev/null
	[ "$MP_READ_WORKERS" = 0 ] || "$srcdir/tests/stack.sh" pool-start "$tmp" reads >/dev/null
	pg_pid=$(head -1 "$tmp/pg/data/postmaster.pid")
	pool_pid=$(mp_pool_pids)
	pg_conf_note=$(psql -c "SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name)
		FROM pg_settings WHERE name IN ($names)")
	say "in effect: $pg_conf_note"
}

# One line of cumulative counters: WAL bytes, full-page images, checkpoints (timed and
# requested), buffers written by backends themselves (shared_buffers full of dirty pages),
# heap and index blocks of our tables found in shared buffers / read from outside, autovacuum
# and autoanalyze runs, the database's size in bytes, webhook events not yet delivered, the
# rows our tables gave to sequential and index scans, and the levels of our B-tree indexes
# summed (pageinspect's bt_metap: a level more is a block more in every descent of that
# index; soak_pg_levels makes the extension).
soak_pg_levels() { psql -c 'CREATE EXTENSION IF NOT EXISTS pageinspect' >/dev/null; }
soak_pg_snap() {
	pg_now=$(psql -F' ' -c "SELECT w.wal_bytes, w.wal_fpi, b.checkpoints_timed + b.checkpoints_req,
		b.buffers_backend, t.hh, t.hr, t.ih, t.ir, a.av, a.aa, pg_database_size(current_database()),
		(SELECT count(*) FROM webhook_events WHERE status = 'pending'), a.tup,
		(SELECT coalesce(sum((bt_metap(c.oid::regclass::text)).level), 0) FROM pg_class c
			JOIN pg_am m ON m.oid = c.relam WHERE m.amname = 'btree' AND c.relkind = 'i'
			AND c.relnamespace = 'public'::regnamespace)
		FROM pg_stat_wal w, pg_stat_bgwriter b,
		(SELECT coalesce(sum(heap_blks_hit), 0) hh, coalesce(sum(heap_blks_read), 0) hr,
			coalesce(sum(idx_blks_hit), 0) ih, coalesce(sum(idx_blks_read), 0) ir
			FROM pg_statio_user_tables) t,
		(SELECT coalesce(sum(autovacuum_count), 0) av, coalesce(sum(autoanalyze_count), 0) aa,
			coalesce(sum(seq_tup_read), 0) + coalesce(sum(idx_tup_fetch), 0) tup
			FROM pg_stat_user_tables) a")
}

pg_prev=''
soak_pg_step() {
	soak_pg_snap
	pg_cols=$(awk -v b="${pg_prev:-$pg_now}" -v a="$pg_now" -v n="$1" 'BEGIN {
		split(b, x, " "); split(a, y, " "); for (i = 1; i <= 13; i++) d[i] = y[i] - x[i]
		printf "%.0f ", y[11] / 1048576
		if (n > 0) printf "%.2f %.3f ", d[1] / 1024 / n, d[2] / n; else printf "- - "
		printf "%d %d ", d[3], d[4]
		if (n > 0) printf "%.1f ", (d[5] + d[6] + d[7] + d[8]) / n; else printf "- "
		printf "%s ", d[5] + d[6] ? sprintf("%.2f", 100 * d[5] / (d[5] + d[6])) : "-"
		printf "%s ", d[7] + d[8] ? sprintf("%.2f", 100 * d[7] / (d[7] + d[8])) : "-"
		if (n > 0) printf "%.1f ", d[13] / n; else printf "- "
		printf "%d %d %d %d\n", d[9], d[10], y[12], y[14] }')
	pg_prev=$pg_now
}

# SOAK_STATEMENTS=N: what PostgreSQL's time goes to, statement by statement (pg_stat_statements,
# nested statements of our functions included). soak_pss_setup adds the module to MP_PG_SET
# and, after the restart, makes the extension; soak_pss_step K saves interval K's per-statement
# deltas in $tmp/pss/K (queryid calls exec_ms blocks query); soak_pss_report A B N prints the
# N statements whose execution time per request grew most from interval A to interval B.
soak_pss_setup() {
	MP_PG_SET="${MP_PG_SET:-} shared_preload_libraries=pg_stat_statements pg_stat_statements.track=all"
	mkdir -p "$tmp/pss"
}
soak_pss_start() {
	pss_create
	psql -c 'SELECT pg_stat_statements_reset()' >/dev/null
	: >"$tmp/pss/prev"
}
soak_pss_step() { # soak_pss_step K REQUESTS
	pss_snapshot "$tmp/pss/now"
	awk -F'\t' -v n="$2" 'NR == FNR { c[$1] = $2; t[$1] = $3; b[$1] = $4; next }
		{ printf "%s\t%d\t%.3f\t%d\t%s\t%d\n", $1, $2 - c[$1], $3 - t[$1], $4 - b[$1], $5, n }' \
		"$tmp/pss/prev" "$tmp/pss/now" >"$tmp/pss/$1"
	mv "$tmp/pss/now" "$tmp/pss/prev"
}
soak_pss_report() { # soak_pss_report FIRST LAST N
	echo
	echo "statements whose execution time per request grew most, interval $1 -> interval $2 (pg_stat_statements, µs/request; calls/request; blocks/call):"
	awk -F'\t' 'NR == FNR { if ($6 > 0) { a[$1] = 1000 * $3 / $6; ac[$1] = $2 / $6; ab[$1] = $2 ? $4 / $2 : 0 } next }
		$6 > 0 { u = 1000 * $3 / $6; printf "%+9.1f\t%8.1f -> %8.1f µs  %5.2f -> %5.2f calls  %7.1f -> %7.1f blk  %s\n",
			u - a[$1], a[$1], u, ac[$1], $2 / $6, ab[$1], $2 ? $4 / $2 : 0, $5 }' "$tmp/pss/$1" "$tmp/pss/$2" |
		sort -t$'\t' -k1,1 -g -r | awk -v n="$3" 'NR <= n { print "  " $0 }'
	local k
	for k in "$1" "$2"; do
		awk -F'\t' -v k="$k" '$6 > 0 { s += $3; n = $6 } END { if (n) printf "  every statement summed (a function'"'"'s own statements counted in it too): %.1f µs/request in interval %s\n", 1000 * s / n, k }' "$tmp/pss/$k"
	done
}

# Autovacuum's own CPU, from the server log (bench/soak sets log_autovacuum_min_duration=0):
# soak_av_step K REQUESTS sets av_ms to the CPU ms per request of the automatic vacuums and analyzes logged since
# the last call (CPU user + system, as each run reports it, rounded by PostgreSQL to 10 ms)
# and keeps each table's CPU ms of interval K in $tmp/av/K; soak_av_report FIRST LAST lists
# the tables whose autovacuum CPU changed most between two intervals.
av_off=0
soak_av_step() {
	local log=$tmp/pg/server.log size
	mkdir -p "$tmp/av"
	size=$(stat -c %s "$log")
	dd if="$log" bs=1M iflag=skip_bytes,count_bytes skip="$av_off" count=$((size - av_off)) \
		status=none | awk -v out="$tmp/av/$1" -v n="$2" '
		/automatic (vacuum|analyze) of table/ { t = $0; sub(/^.*of table "/, "", t); sub(/".*$/, "", t)
			kind = ($0 ~ /automatic vacuum/) ? "vacuum" : "analyze" }
		/system usage: CPU: user:/ && t != "" { u = $0; sub(/^.*user: /, "", u); s = $0; sub(/^.*system: /, "", s)
			ms = 1000 * (u + s); tot += ms; per[kind " " t] += ms; runs[kind " " t]++; t = "" }
		END { for (k in per) printf "%s\t%.0f\t%d\n", k, per[k], runs[k] > out
			if (n > 0) printf "%.3f\n", tot / n; else print "-" }' >"$tmp/av.out"
	read -r av_ms <"$tmp/av.out"
	av_off=$size
}
soak_av_report() { # soak_av_report FIRST LAST
	[ -f "$tmp/av/$1" ] && [ -f "$tmp/av/$2" ] || return 0
	echo
	echo "autovacuum CPU by table, interval $1 -> interval $2 (ms in the interval, runs):"
	awk -F'\t' 'NR == FNR { a[$1] = $2; ar[$1] = $3; seen[$1] = 1; next }
		{ b[$1] = $2; br[$1] = $3; seen[$1] = 1 }
		END { for (k in seen) printf "%8.0f -> %8.0f ms  %3d -> %3d runs  %s\n", a[k], b[k], ar[k], br[k], k }' \
		"$tmp/av/$1" "$tmp/av/$2" | sort -k3,3 -g -r | awk 'NR <= 12 { print "  " $0 }'
}

# The machine's own speed, "CPU/max/MEM": the CPU ms of a fixed computation (5 million awk
# iterations), taken every 4 seconds in the background (soak_probe_start) and reported per
# interval as the median and the maximum of its samples; and the system CPU ms of writing
# 1 GiB of memory (dd from /dev/zero through a 64 MiB buffer, far more than any cache), taken
# once an interval. When every part's CPU per request rises together and these do too, the
# machine got slower (a neighbour on the host taking the cores or the memory bus, the
# clock), not our work heavier. One sample an interval was too few to follow the slow
# minutes: many samples are.
probe_cpu_ms() {
	local TIMEFORMAT=%3U c
	c=$( { time awk 'BEGIN { for (i = 0; i < 5000000; i++) s += i * i }' >/dev/null; } 2>&1)
	awk -v c="$c" 'BEGIN { printf "%.0f\n", 1000 * c }'
}
soak_probe_start() {
	: >"$tmp/probe.cpu"
	echo 0 >"$tmp/probe.seen"
	while :; do
		probe_cpu_ms >>"$tmp/probe.cpu"
		sleep 4
	done &
	probe_pid=$!
}
# Stopped with the benchmark (bench/lib.sh mp_cleanup), before the stack.
mp_stop_own() { [ -z "${probe_pid:-}" ] || kill "$probe_pid" 2>/dev/null || true; }
soak_probe() {
	local TIMEFORMAT=%3S m seen n
	m=$( { time dd if=/dev/zero of=/dev/null bs=64M count=16 2>/dev/null; } 2>&1)
	seen=$(cat "$tmp/probe.seen")
	n=$(wc -l <"$tmp/probe.cpu")
	echo "$n" >"$tmp/probe.seen"
	# The samples since the last line: their median and maximum ("-" when none yet).
	tail -n "+$((seen + 1))" "$tmp/probe.cpu" | head -n "$((n - seen))" | sort -n |
		awk -v m="$m" '{ v[NR] = $1 } END { if (NR == 0) printf "-/-/%.0f", 1000 * m
			else printf "%d/%d/%.0f", v[int((NR + 1) / 2)], v[NR], 1000 * m }'
}

# soak_explain FILE: over the intervals under load after the first (lines "elapsed req/s p99
# cpu probe": cpu the stack's CPU ms per request, all parts; probe the CPU probe's median),
# how p99 goes with them (Pearson r): a p99 that rises with the CPU per request and with the
# probe is the machine slowing down, not the service's work growing.
soak_explain() {
	[ -s "$1" ] || return 0
	awk 'function r(x, y, n,   i, mx, my, sxy, sxx, syy) {
			for (i = 1; i <= n; i++) { mx += x[i]; my += y[i] }
			mx /= n; my /= n
			for (i = 1; i <= n; i++) { sxy += (x[i] - mx) * (y[i] - my); sxx += (x[i] - mx) ^ 2; syy += (y[i] - my) ^ 2 }
			return sxx > 0 && syy > 0 ? sprintf("%+.2f", sxy / sqrt(sxx * syy)) : "-" }
		NR > 1 && $3 != "-" && $5 != "-" && NF >= 5 { n++; p[n] = $3; c[n] = $4; q[n] = $5 }
		END { if (n < 3) exit
			printf "p99 against the machine, over %d intervals: r(p99, CPU ms/req) %s, r(p99, probe) %s, r(CPU ms/req, probe) %s\n",
				n, r(p, c, n), r(p, q, n), r(c, q, n) }' "$1"
}
