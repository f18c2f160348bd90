#!/usr/bin/env bash
# A three-node PostgreSQL 15 cluster managed by Patroni (Debian's patroni) with one etcd
# (Debian's etcd-server), all on loopback ports of their own, in one directory. Used by
# tests/ha.sh; a DBA can read it as a worked example of the configuration man/marketpay-ha.7
# describes.
#
#   tests/ha/cluster.sh start DIR    etcd, node1 (bootstraps, leader), node2 and node3 (basebackup
#                                    from it); returns once all three run and one is the
#                                    synchronous standby; creates the database marketpay;
#                                    writes DIR/cluster.env
#   tests/ha/cluster.sh stop DIR     stops whatever of it runs; safe to call twice
#   tests/ha/cluster.sh status DIR   patronictl list
#   tests/ha/cluster.sh leader DIR   the leader's node name (node1..node3)
#   tests/ha/cluster.sh whole DIR    true when all three run, one leads and (synchronous mode)
#                                    one is its synchronous standby
#   tests/ha/cluster.sh port DIR NODE         NODE's PostgreSQL port
#   tests/ha/cluster.sh node-start DIR NODE   starts NODE's Patroni again (after a stop)
#
# DIR/cluster.env (sourced by tests/ha.sh; tests/stack.sh takes MP_DATABASE):
#   MP_DATABASE     service=marketpay: the service of DIR/pg_service.conf, a libpq multi-host
#                   string (the nodes' socket directories and ports,
#                   target_session_attrs=read-write, connect_timeout=2)
#   PGSERVICEFILE PGSERVICE PGUSER   the same for psql and every program of the stack
#   PATRONICTL      patronictl with the cluster's configuration
#
# The applications reach the nodes on their unix sockets with peer authentication, as in
# tests/stack.sh (its pg-access writes pg_hba.conf and pg_ident.conf, which the nodes read
# from DIR through hba_file and ident_file); the nodes replicate and rewind over TCP on
# 127.0.0.1 with scram-sha-256 passwords made at start, readable by postgres only.
#
# Environment: MP_HA_SYNC (1: Patroni's synchronous_mode, the default; 0: asynchronous),
# MP_HA_TTL (the leader key's TTL, default 20 s), MP_SRCDIR.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${MP_SRCDIR:-$(cd "$here/../.." && pwd)}
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
pgbin=/usr/lib/postgresql/15/bin
nodes="node1 node2 node3"

die() { echo "cluster: $*" >&2; exit 1; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# In the background in a session of its own (its pid is the group's): the postgres user's.
bg_pg() { # bg_pg LOG PIDFILE command...
	local log=$1 pidfile=$2 as=()
	shift 2
	[ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
	# A clean environment: Patroni's own connections must not take the applications'
	# PGSERVICE or PGTARGETSESSIONATTRS (a replica's Patroni refused by its own node).
	setsid "${as[@]}" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@" \
		</dev/null >>"$log" 2>&1 &
	echo $! >"$pidfile"
}

# free_ports N: N distinct loopback ports nothing listens on, in the array ports.
free_ports() {
	local p
	ports=()
	while [ ${#ports[@]} -lt "$1" ]; do
		p=$(free_port)
		[[ " ${ports[*]} " == *" $p "* ]] || ports+=("$p")
	done
}

password() { head -c 18 /dev/urandom | base64 | tr '+/' '-_'; }

write_node() { # write_node DIR NAME PGPORT RESTPORT ETCDPORT
	local dir=$1 name=$2 port=$3 rest=$4 etcd=$5 sync=true
	[ "${MP_HA_SYNC:-1}" = 1 ] || sync=false
	mkdir -p "$dir/$name/sock"
	cat >"$dir/$name/patroni.yml" <<YML
# Written by tests/ha/cluster.sh
scope: marketpay
name: $name
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$rest
  connect_address: 127.0.0.1:$rest
etcd3:
  hosts: 127.0.0.1:$etcd
bootstrap:
  dcs:
    ttl: ${MP_HA_TTL:-20}
    loop_wait: 1
    retry_timeout: 5
    maximum_lag_on_failover: 1048576
    # A crashed primary is not restarted in place first (300 s by default): its synchronous
    # standby takes over at once, which loses nothing in synchronous mode.
    primary_start_timeout: 0
    synchronous_mode: $sync
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_log_hints: 'on'
        max_connections: 200
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 128MB
        hot_standby: 'on'
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - auth-local: peer
    - auth-host: scram-sha-256
postgresql:
  listen: 127.0.0.1:$port
  connect_address: 127.0.0.1:$port
  data_dir: $dir/$name/data
  bin_dir: $pgbin
  pgpass: $dir/$name/pgpass
  use_unix_socket: true
  authentication:
    superuser:
      username: postgres
      password: '$(cat "$dir/pw.postgres")'
    replication:
      username: replicator
      password: '$(cat "$dir/pw.replicator")'
    rewind:
      username: rewinder
      password: '$(cat "$dir/pw.rewinder")'
  parameters:
    unix_socket_directories: $dir/$name/sock
    hba_file: $dir/pg_hba.conf
    ident_file: $dir/pg_ident.conf
    password_encryption: scram-sha-256
YML
	chmod 600 "$dir/$name/patroni.yml"
}

# The applications' rules (tests/stack.sh pg-access), then the nodes' own over TCP.
write_hba() {
	local dir=$1
	"$srcdir/tests/stack.sh" pg-access "$dir"
	cat >>"$dir/pg_hba.conf" <<HBA
# The nodes: streaming replication, pg_rewind and Patroni's superuser, over loopback TCP.
host replication replicator 127.0.0.1/32 scram-sha-256
host all rewinder 127.0.0.1/32 scram-sha-256
host all postgres 127.0.0.1/32 scram-sha-256
HBA
}

start_etcd() {
	local dir=$1 client=$2 peer=$3
	mkdir -p "$dir/etcd"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir/etcd"
	chmod 700 "$dir/etcd"
	bg_pg "$dir/etcd/etcd.log" "$dir/etcd.pid" etcd --name e1 --data-dir "$dir/etcd/data" \
		--listen-client-urls "http://127.0.0.1:$client" \
		--advertise-client-urls "http://127.0.0.1:$client" \
		--listen-peer-urls "http://127.0.0.1:$peer" \
		--initial-advertise-peer-urls "http://127.0.0.1:$peer" \
		--initial-cluster "e1=http://127.0.0.1:$peer"
	wait_for 20 etcdctl --endpoints "127.0.0.1:$client" endpoint health ||
		{ tail -20 "$dir/etcd/etcd.log" >&2; die "etcd did not start"; }
}

start_node() {
	local dir=$1 name=$2
	# setsid: its own process group, so stop can end it and the PostgreSQL it runs.
	bg_pg "$dir/$name/patroni.log" "$dir/$name/patroni.pid" patroni "$dir/$name/patroni.yml"
}

rest_port() { sed -n 's/^  listen: 127.0.0.1:\([0-9]*\)$/\1/p' "$1/$2/patroni.yml" | head -1; }
pg_port() { sed -n 's/^  listen: 127.0.0.1:\([0-9]*\)$/\1/p' "$1/$2/patroni.yml" | tail -1; }

# Patroni's REST API: 200 on /primary from the leader only, on /sync from the synchronous
# standby (/replica from any running replica).
role_is() { curl -fs -o /dev/null "http://127.0.0.1:$(rest_port "$1" "$2")/$3"; }

leader() {
	local dir=$1 n
	for n in $nodes; do
		role_is "$dir" "$n" primary 2>/dev/null && { echo "$n"; return 0; }
	done
	return 1
}

# Every node runs, one leads, and (synchronous mode) one is its synchronous standby.
whole() {
	local dir=$1 n replicas=0 sync=0
	leader "$dir" >/dev/null || return 1
	for n in $nodes; do
		role_is "$dir" "$n" replica && replicas=$((replicas + 1))
		role_is "$dir" "$n" sync && sync=$((sync + 1))
	done
	[ "$replicas" = 2 ] || return 1
	[ "${MP_HA_SYNC:-1}" = 0 ] || [ "$sync" = 1 ]
}

start() {
	local dir=$1 etcd peer n i=2 multi_host="" multi_port="" ports
	for bin in "$pgbin/initdb" /usr/bin/patroni /usr/bin/patronictl /usr/bin/etcd /usr/bin/etcdctl; do
		[ -x "$bin" ] || die "$bin is missing (dev/deps.sh installs patroni, etcd-server, etcd-client)"
	done
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	chmod 755 "$dir"
	free_ports 8 # etcd's two, then each node's PostgreSQL and REST API
	etcd=${ports[0]}
	peer=${ports[1]}
	(umask 077; for u in postgres replicator rewinder; do password >"$dir/pw.$u"; done)
	write_hba "$dir"
	for n in $nodes; do
		write_node "$dir" "$n" "${ports[$i]}" "${ports[$((i + 1))]}" "$etcd"
		multi_host="$multi_host${multi_host:+,}$dir/$n/sock"
		multi_port="$multi_port${multi_port:+,}${ports[$i]}"
		i=$((i + 2))
	done
	cat >"$dir/patronictl.yml" <<YML
scope: marketpay
etcd3:
  hosts: 127.0.0.1:$etcd
YML
	if [ "$(id -u)" = 0 ]; then
		chown -R postgres: "$dir"/node? "$dir"/pw.* "$dir/patronictl.yml"
		# The socket directories: postgres and the workers' group only, as in tests/stack.sh.
		for n in $nodes; do chown postgres:nogroup "$dir/$n"; chmod 750 "$dir/$n"; done
	fi
	start_etcd "$dir" "$etcd" "$peer"
	start_node "$dir" node1
	wait_for 60 role_is "$dir" node1 primary ||
		{ tail -30 "$dir/node1/patroni.log" >&2; die "node1 did not become the leader"; }
	start_node "$dir" node2
	start_node "$dir" node3
	wait_for 90 whole "$dir" ||
		{ tail -20 "$dir"/node?/patroni.log >&2; die "the cluster did not become whole"; }
	# The three nodes as one libpq service: a multi-host string does not fit on one line of
	# marketpay.conf (at most 198 characters), "service=marketpay" does.
	cat >"$dir/pg_service.conf" <<SVC
# Written by tests/ha/cluster.sh: the cluster's nodes, the one that takes writes wins.
[marketpay]
host=$multi_host
port=$multi_port
dbname=marketpay
target_session_attrs=read-write
connect_timeout=2
SVC
	chmod 644 "$dir/pg_service.conf"
	cat >"$dir/cluster.env" <<ENV
MP_DATABASE=service=marketpay
PGSERVICEFILE=$dir/pg_service.conf
PGSERVICE=marketpay
PGUSER=postgres
PATRONICTL="patronictl -c $dir/patronictl.yml"
export MP_DATABASE PGSERVICEFILE PGSERVICE PGUSER
ENV
	# shellcheck disable=SC1091
	(. "$dir/cluster.env"
	as_pg env PGDATABASE=postgres "$pgbin/psql" -d "service=marketpay dbname=postgres" -qAtX -c \
		"SELECT 1 FROM pg_database WHERE datname = 'marketpay'" | grep -q 1 ||
		as_pg "$pgbin/createdb" marketpay)
}

stop_pid() { # stop_pid PIDFILE SECS: SIGTERM to its group, SIGKILL after SECS
	local pid
	[ -f "$1" ] || return 0
	pid=$(cat "$1")
	kill -TERM -- "-$pid" 2>/dev/null || true
	wait_for "$2" bash -c "! kill -0 -- -$pid" || kill -KILL -- "-$pid" 2>/dev/null || true
	rm -f "$1"
}

stop() {
	local dir=$1 n
	[ -d "$dir" ] || return 0
	for n in $nodes; do stop_pid "$dir/$n/patroni.pid" 30 & done
	wait
	# A PostgreSQL whose Patroni was killed keeps running: stop it too.
	for n in $nodes; do
		[ -f "$dir/$n/data/postmaster.pid" ] || continue
		as_pg "$pgbin/pg_ctl" -D "$dir/$n/data" -m immediate -w stop >/dev/null 2>&1 || true
	done
	stop_pid "$dir/etcd.pid" 10
}

case "${1:-}" in
start) [ $# -ge 2 ] || die "usage: cluster.sh start DIR"; start "$2" ;;
stop) [ $# -ge 2 ] || die "usage: cluster.sh stop DIR"; stop "$2" ;;
status) patronictl -c "$2/patronictl.yml" list ;;
leader) leader "$2" ;;
whole) whole "$2" ;;
port) pg_port "$2" "$3" ;;
node-start) start_node "$(cd "$2" && pwd)" "$3" ;;
*) die "usage: cluster.sh start|stop|status|leader|whole DIR, node-start DIR NODE" ;;
esac
