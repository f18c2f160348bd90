# The risk of asynchronous replication, shown (sourced by tests/ha.sh once its load has
# stopped): Patroni's synchronous_mode is switched off, the leader's WAL senders are stopped
# (SIGSTOP: the replicas receive nothing more, deterministically), create-sessions are
# answered 200, both replicas are seen to lack them, the leader is killed (kill -9), a replica
# is promoted, and the acknowledged sessions it lacks are counted and named. The checks fail
# if nothing was lost, or if what was lost is not what the replicas lacked before the kill.
# Needs what tests/ha/cases.sh needs, and key (the merchant's API key).

node_sql() { # node_sql NODE SQL: on that node itself, whatever its role
	(unset PGSERVICE; PGHOST=$db/$1/sock PGPORT=$("$cluster" port "$db" "$1") sql -c "$2")
}

$PATRONICTL edit-config --force -s synchronous_mode=false \
	-s maximum_lag_on_failover=1073741824 >"$dir/edit-config.out" 2>&1
no_sync_standby() { [ -z "$(sql -c 'SHOW synchronous_standby_names')" ]; }
check "asynchronous: synchronous_mode off, the leader waits for no standby" \
	wait_for 20 no_sync_standby
old=$(leader)
senders=$(node_sql "$old" "SELECT pid FROM pg_stat_replication")
check "asynchronous: the leader $old streams to two replicas ($(echo $senders))" \
	[ "$(count_words "$senders")" = 2 ]
# shellcheck disable=SC2086
kill -STOP $senders
acked=""
for i in $(seq 1 10); do
	id=$(curl -s -m 5 -H "Authorization: API-KEY $key" -H 'Content-Type: application/json' \
		--data "{\"items\":[{\"id\":\"async-$i\",\"name\":\"Async\",\"price\":2.00}]}" \
		"$MARKETPAY_BASE_URL/api/v1/payment/create-session" | json session_id)
	[ -z "$id" ] || acked="$acked${acked:+,}'$id'"
done
acked_n=$(count_words "${acked//,/ }")
check "asynchronous: 10 create-sessions answered 200 while the replicas receive nothing ($acked_n)" \
	[ "$acked_n" = 10 ]
on_leader=$(node_sql "$old" "SELECT count(*) FROM payment_sessions WHERE id::text IN ($acked)")
missing=""
for n in node1 node2 node3; do
	[ "$n" = "$old" ] && continue
	missing="$missing $((acked_n - $(node_sql "$n" "SELECT count(*) FROM payment_sessions
		WHERE id::text IN ($acked)")))"
done
say "asynchronous: before the kill the leader has $on_leader of them; the replicas lack$missing"
log=$(mark "$db/$old/patroni.log")
t0=$(now_ms)
pm=$(head -n 1 "$db/$old/data/postmaster.pid")
# shellcheck disable=SC2086
kill -KILL "$pm" $senders
check "asynchronous: another node leads after the kill" \
	wait_for 60 led_by_other "$old"
check "asynchronous: the new leader takes writes" wait_for 30 writable
new=$(leader)
kept=$(sql -c "SELECT count(*) FROM payment_sessions WHERE id::text IN ($acked)")
lost=$((acked_n - kept))
lost_ids=$(sql -c "SELECT string_agg(x, ' ') FROM unnest(ARRAY[$acked]) x
	WHERE x NOT IN (SELECT id::text FROM payment_sessions)")
say "asynchronous: $new promoted $(($(now_ms) - t0)) ms after the kill; of $acked_n acknowledged" \
	"create-sessions it has $kept, lost $lost: ${lost_ids:-none}"
printf '# figures: asynchronous (synchronous_mode off), kill -9 | - | - | %s of %s | %s -> %s\n' \
	"$lost" "$acked_n" "$old" "$new" >>"$dir/figures"
check "asynchronous: the risk shown: acknowledged writes lost ($lost of $acked_n)" [ "$lost" -gt 0 ]
check "asynchronous: what was lost is what the promoted replica lacked before the kill" \
	grep -qw "$lost" <<<"$missing"
whole_async() { MP_HA_SYNC=0 "$cluster" whole "$db"; }
check "asynchronous: the old leader $old rejoins as a replica" wait_for 90 whole_async
# What the old leader had alone is gone from it too: it follows the new timeline (Patroni ran
# pg_rewind, or would have cloned it afresh), so the cluster agrees on what was lost.
gone_from_old() {
	[ "$(node_sql "$old" "SELECT count(*) FROM payment_sessions WHERE id::text IN ($acked)")" = 0 ]
}
check "asynchronous: the lost writes are gone from $old as well (it follows the new leader)" \
	wait_for 30 gone_from_old
how=other
grep -q 'running pg_rewind' <(since "$db/$old/patroni.log" "$log") && how=pg_rewind
say "asynchronous: $old rejoined by $how"
check "asynchronous: marketpayctl ledger verify on the new leader" ledger_verify
tail -n 1 "$dir/figures"
