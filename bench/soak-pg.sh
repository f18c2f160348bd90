# bench/soak's view of PostgreSQL (sourced by bench/soak, not run): the extra settings of
# MP_PG_SET, and the counters that explain a drift of throughput or latency over a run.
#   soak_pg_conf LINES    appends name=value settings to the cluster's postgresql.conf and
#                         restarts it (the pool and webhookd around it); prints what took effect
#   soak_pg_snap          the counters, one line (see below), into pg_now
#   soak_pg_step N        the columns of the interval since the last call for N requests, in
#                         pg_cols (not a subshell: it keeps the last snapshot): db MiB, WAL
#                         kB/req, FPI/req, ckpt, bkw, blocks/req, heap%, idx%, tuples/req,
#                         av, aa, whq
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
	"$srcdir/tests/stack.sh" webhookd-stop "$tmp" >/dev/null
	"$srcdir/tests/stack.sh" pg-stop "$tmp" >/dev/null
	"$srcdir/tests/stack.sh" pg-start "$tmp" >/dev/null || { cat "$tmp/pg/server.log" >&2; die "PostgreSQL did not start with MP_PG_SET"; }
	"$srcdir/tests/stack.sh" webhookd-start "$tmp" >/dev/null
	"$srcdir/tests/stack.sh" pool-start "$tmp" >/dev/null
	pg_pid=$(head -1 "$tmp/pg/data/postmaster.pid")
	pool_pid=$(cat "$tmp/pool.pid")
	pg_conf_note=$(psql -c "SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name)
		FROM pg_settings WHERE name IN ($names)")
	say "in effect: $pg_conf_note"
}

# One line of cumulative counters: WAL bytes, full-page images, checkpoints (timed and
# requested), buffers written by backends themselves (shared_buffers full of dirty pages),
# heap and index blocks of our tables found in shared buffers / read from outside, autovacuum
# and autoanalyze runs, the database's size in bytes, webhook events not yet delivered, the
# rows our tables gave to sequential and index scans.
soak_pg_snap() {
	pg_now=$(psql -F' ' -c "SELECT w.wal_bytes, w.wal_fpi, b.checkpoints_timed + b.checkpoints_req,
		b.buffers_backend, t.hh, t.hr, t.ih, t.ir, a.av, a.aa, pg_database_size(current_database()),
		(SELECT count(*) FROM webhook_events WHERE status = 'pending'), a.tup
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
		printf "%d %d %d\n", d[9], d[10], y[12] }')
	pg_prev=$pg_now
}
