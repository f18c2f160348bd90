# The faults of tests/ha.sh (sourced by it, after tests/load-checks.sh): each failover case
# and the rolling restart of the pools, with their checks and figures. Needs: db (the
# cluster's directory), dir (the stack's), cluster, stack, PATRONICTL.

leader() { "$cluster" leader "$db"; }
whole() { "$cluster" whole "$db"; }
led_by_other() { local l; l=$(leader) && [ "$l" != "$1" ]; }
# Patroni names a new leader before its PostgreSQL has finished promoting: until then no node
# takes a read-write connection.
writable() { [ "$(sql -c 'SELECT pg_is_in_recovery()' 2>/dev/null)" = f ]; }
wrote_since() { [ -n "$(first_write "$1")" ]; }

# The ms from T0 to the end of the first write started after T0 that succeeded: a 200
# create-session or transfer, or a payment confirmed to the customer; empty while none has.
first_write() {
	journal_snap
	awk -F'\t' -v t="$1" '$1 >= t && (($2 == "create" || $2 == "transfer") && $3 == 200 ||
		$2 == "pay" && $10 == "paid") { e = $1 + int($4 / 1000); if (m == "" || e < m) m = e }
		END { if (m != "") print m - t }' "$dir/journal.snap"
}

# The start of the first request after T answered 503, T itself when there was none.
first_503() {
	journal_snap
	awk -F'\t' -v t="$1" '$1 >= t && $3 == 503 { if (m == "" || $1 < m) m = $1 }
		END { print (m == "" ? t : m) }' "$dir/journal.snap"
}

# The pid of node N's Patroni (its command line names the node's configuration).
patroni_pid() { pgrep -f "^[^ ]*python3 /usr/bin/patroni $db/$1/patroni.yml\$"; }

kill_postmaster() { kill -KILL "$(head -n 1 "$db/$1/data/postmaster.pid")"; }

# SIGTERM: Patroni stops its PostgreSQL (fast) and gives up the leader key; once another
# node leads, it is started again and rejoins.
stop_patroni() {
	local pid
	pid=$(patroni_pid "$1")
	kill -TERM "$pid"
	wait_for 30 bash -c "! kill -0 $pid" || return 1
	wait_for 30 led_by_other "$1" || return 1
	"$cluster" node-start "$db" "$1"
}

switchover() { $PATRONICTL switchover --leader "$1" --force >"$dir/switchover.out" 2>&1; }

# failover WHAT ACTION: ACTION NODE on the leader with the load running, then the checks.
failover() {
	local what=$1 old new t0 t1 first n503 n500 n502 n0 lost log rewound=no n
	old=$(leader)
	log=$(mark "$db/$old/patroni.log")
	t0=$(now_ms)
	check "$what: done to the leader $old" "$2" "$old"
	# A killed postmaster's backends serve on for a moment, and the cluster looks whole until
	# Patroni notices: the fault counts once another node leads.
	check "$what: another node leads" wait_for 60 led_by_other "$old"
	# Writes fail from the first 503 on (at once after a kill; only once PostgreSQL stops
	# after a Patroni stop or a switchover): the time is the fault's to the first write
	# that succeeds after that.
	wait_for 30 wrote_since "$t0" || true
	t503=$(first_503 "$t0")
	wait_for 30 wrote_since "$t503" || true
	first=$(first_write "$t503")
	[ -z "$first" ] || first=$((first + t503 - t0))
	check "$what: writes succeed again ${first:-never} ms after it (limit 30000)" \
		[ -n "$first" ] && [ "${first:-99999}" -le 30000 ]
	check "$what: the old primary $old is a replica again, the cluster whole" wait_for 90 whole
	check "$what: the leader takes writes" wait_for 30 writable
	sleep 1
	t1=$(now_ms)
	n503=$(journal_count "$t0" "$t1" 503)
	n500=$(journal_count "$t0" "$t1" 500)
	n502=$(journal_count "$t0" "$t1" 502)
	n0=$(journal_count "$t0" "$t1" 0)
	check "$what: 503 only: no 500 ($n500), no 502 ($n502), no request without an answer ($n0)" \
		test "$n500$n502$n0" = 000
	lost=$(lost_writes)
	check "$what: no acknowledged write lost ($lost)" [ "$lost" = 0 ]
	new=$(leader)
	since "$db/$old/patroni.log" "$log" | grep -q 'running pg_rewind' && rewound=yes
	say "$what: writes again $first ms after, the first 503 $((t503 - t0)) ms after; $n503 x503, $(journal_count "$t0" "$t1" 200) x200" \
		"until the cluster was whole $((t1 - t0)) ms after; $old rewound: $rewound"
	n=$(printf '%d.%03d' $((first / 1000)) $((first % 1000)))
	printf '# figures: %s | %s | %s | %s | %s -> %s (pg_rewind: %s)\n' "$what" "$n" "$n503" \
		"$lost" "$old" "$new" "$rewound" >>"$dir/figures"
	db_checks "$what"
}

# Each pool in turn: its socket removed first, so nginx's connections to it fail before
# anything is sent and go to the other pool (fastcgi_next_upstream error); what was queued is
# served; then SIGTERM (each worker finishes its request) and a new pool on a new socket.
rolling_restart() {
	local t0 t1 n bad total
	t0=$(now_ms)
	for n in 1 2; do
		if [ "$n" = 1 ]; then rm -f "$dir/fcgi.sock"; else rm -f "$dir/fcgi$n.sock"; fi
		sleep 1
		"$stack" pool-stop "$dir" "$n"
		"$stack" pool-start "$dir" "$n"
		sleep 1
	done
	t1=$(now_ms)
	journal_snap
	read -r bad total < <(awk -F'\t' -v a="$t0" -v b="$t1" '$1 >= a && $1 <= b { n++;
		if ($3 == 0 || $3 >= 500) f++ } END { print f + 0, n + 0 }' "$dir/journal.snap")
	say "rolling restart of the two pools: $total requests in $((t1 - t0)) ms, $bad failed"
	check "rolling restart: requests served meanwhile ($total)" [ "$total" -gt 0 ]
	check "rolling restart: not one failed request (5xx or no answer: $bad)" [ "$bad" = 0 ]
	printf '# figures: rolling restart of the pools | - | %s | 0 | %s requests, %s failed\n' \
		"$(journal_count "$t0" "$t1" 503)" "$total" "$bad" >>"$dir/figures"
	db_checks "rolling restart"
}
