#!/usr/bin/env bash
# Beyond one machine: PostgreSQL failover on Patroni under load. Starts a three-node Patroni
# cluster with synchronous replication (tests/ha/cluster.sh), a stack on it with two pools
# behind one nginx upstream (tests/stack.sh with MP_DATABASE, MP_POOLS=2), a marketplace
# merchant, and runs tests/load/mpload (create-session, checkout payments, transfers with
# Idempotency-Key; 503s retried with the same key). Then, with the load running:
#   a. kill -9 of the primary's postmaster
#   b. the primary's Patroni stopped (SIGTERM), then started again
#   c. a planned switchover (patronictl switchover)
#   d. a rolling restart of the two pools
# After each failover: how long until the first write succeeded, how many 503s, how many
# acknowledged writes the new primary lacks (must be 0); no 500, 502 or request without an
# answer; the old primary back as a replica (pg_rewind where it diverged) and the cluster
# whole; the checks of tests/load-checks.sh (every 200 stored, nothing applied twice, the
# balances, ledger verify). After the rolling restart: not one failed request. At the end
# every payment.succeeded event delivered. Then tests/ha/async.sh: the same cluster without
# synchronous mode loses acknowledged writes, and says which.
# One result line per check, then "N passed, N failed"; the figures as "# figures:" lines.
#
# Environment: MP_WORKERS (per pool, default 3), MPLOAD_CONNS (6), KEEP=1 (keep the directory).
set -euo pipefail
export LC_ALL=C

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-.}" && pwd)
cluster="$srcdir/tests/ha/cluster.sh"
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
# shellcheck source=tests/load-checks.sh
. "$srcdir/tests/load-checks.sh"
conns=${MPLOAD_CONNS:-6} deposit=1000000 wallet_deposit=1000000
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_WORKERS=${MP_WORKERS:-3} MP_POOLS=2
export MP_CONF_EXTRA="webhook_poll_interval = 1
webhook_retry_schedule = 1,1,1,1,1,1,1,1,1,1,2,2,2,2,2,2,2,2,2,2"

for bin in "$mpload" "$builddir/marketpay-webhookd" /usr/bin/patroni /usr/bin/etcd; do
	[ -x "$bin" ] || { echo "ha: $bin is missing (dev/deps.sh installs patroni, etcd-server)" >&2; exit 1; }
done

top=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-ha.XXXXXX")
chmod 755 "$top"
dir=$top/stack # the stack: the journal and the logs of tests/load-checks.sh
db=$top/db     # the cluster
load_pid="" rc=1
cleanup() {
	[ -n "$load_pid" ] && kill -KILL "$load_pid" 2>/dev/null
	"$stack" stop "$dir" || true
	"$cluster" stop "$db" || true
	[ "$rc" = 0 ] || show_tails "$top" stack/fcgi.log stack/nginx/error.log stack/mpload.out \
		db/node1/patroni.log db/node2/patroni.log db/node3/patroni.log
	if [ "${KEEP:-0}" = 1 ]; then echo "ha: kept $top" >&2; else rm -rf "$top"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$cluster" start "$db" >/dev/null
# shellcheck disable=SC1091
. "$db/cluster.env"
"$stack" start "$dir" >/dev/null
# shellcheck disable=SC1091
. "$dir/stack.env"
# shellcheck source=tests/ha/cases.sh
. "$srcdir/tests/ha/cases.sh"

check "cluster: three nodes, one leader ($(leader)), one synchronous standby" whole
check "cluster: the leader names its synchronous standby (synchronous_standby_names $(
	sql -c 'SHOW synchronous_standby_names'))" [ -n "$(sql -c 'SHOW synchronous_standby_names')" ]
setup_merchant 'HA Market'
check "create-session through nginx and the two pools ($(probe) ms)" [ "$(probe)" -lt 15000 ]
start_load
run_start=$(now_ms)
sleep 3
check "load: requests are being answered 200" \
	[ "$(journal_count "$run_start" "$(now_ms)" 200)" -gt 0 ]

failover "kill -9 of the primary's postmaster" kill_postmaster
failover "the primary's Patroni stopped" stop_patroni
failover "switchover" switchover
rolling_restart

kill -TERM "$load_pid"
load_rc=0
wait "$load_pid" || load_rc=$?
load_pid=""
cat "$dir/mpload.out"
check "load: every operation reached its goal (mpload exit $load_rc)" [ "$load_rc" = 0 ]
db_checks "end" 1
check "end: every event delivered" events_delivered 40
receiver_got_events end
say "figures: case | s until writes succeed again | 503s | lost acknowledged writes | new primary"
cat "$dir/figures"

# shellcheck source=tests/ha/async.sh
. "$srcdir/tests/ha/async.sh"
rc=0
finish || rc=$?
exit $rc
