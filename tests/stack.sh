#!/usr/bin/env bash
# Starts or stops a complete marketpay stack in one directory: a PostgreSQL cluster of its
# own (unix socket only, peer authentication: only the stack's OS users get in), the
# migrations, a spawn-fcgi + multiwatch pool of marketpay-fcgi, and nginx on a loopback port.
# Used by dev/run and by the integration tests.
#
#   tests/stack.sh start DIR [PORT]   PORT defaults to a free one; writes DIR/stack.env
#   tests/stack.sh stop DIR           stops whatever of it runs; safe to call twice
#   tests/stack.sh pg-stop|pg-start DIR   stops or starts only its PostgreSQL (outage tests)
#   tests/stack.sh pg-restart DIR [SECS]  PostgreSQL stopped like a crash (-m immediate), down
#                                         SECS (default 0), started again: crash recovery
#   tests/stack.sh pool-stop|pool-start DIR [N]     SIGTERM to the pool (pool N of MP_POOLS),
#                                                    waits until it is gone; or starts it again
#   tests/stack.sh webhookd-stop|webhookd-start DIR  the same for marketpay-webhookd
#
# Environment: MP_BUILDDIR (binaries, default .), MP_SRCDIR (sources, default the script's
# parent), MP_WORKERS (default 4), MP_NGINX_WORKERS (nginx's worker_processes, default 2),
# MP_FAST_PG=1 (fsync off: for throwaway test clusters), MP_ENVIRONMENT (sandbox),
# MP_CONF_EXTRA (extra lines for marketpay.conf), MP_SQL_DIR (the migrations; set and empty:
# the programs' built-in default), MP_LOCALE_DIR (the page's catalogs, default the build's
# po/locale; set and empty likewise), MP_STATIC_DIR (page assets),
# MP_EDGE_LIMITS=1 (a second, rate-limited server: the shipped nginx server block, edge.port),
# MP_NGINX_LOG=deployed (the main server logs as the shipped server block does: one access
# log in its format and buffering, no upstream.log; the benchmarks),
# MP_METRICS=1 (nginx/marketpay-metrics.conf's server for this stack's pool, metrics.port),
# MP_PG_ROLES (more database roles the invoking user may log in as; see write_pg_access),
# MP_POOLS (default 1; 2: two pools, fcgi.sock and fcgi2.sock, behind one nginx upstream that
# tries the other pool only when a connection failed, as two app hosts would be),
# MP_READ_WORKERS (default 0; N: the pool's second socket, fcgi-reads.sock, with N workers,
# which nginx passes GET and HEAD to, as the shipped server blocks do; with MP_POOL=systemd
# one pool on both sockets as the units run it, else a second spawn-fcgi pool, pool-reads.pid),
# MP_DATABASE (a libpq connection string without user=, of a database run elsewhere, such as
# tests/ha/cluster.sh's "service=marketpay": the stack starts no PostgreSQL and uses that
# one; its stack.env sets no PGHOST and PGPORT, and passes on the caller's PGSERVICEFILE and
# PGSERVICE, which the stack's programs inherit too),
# MP_PG_CONF (a file of PostgreSQL settings the cluster includes, see include_pg_conf),
# MP_POOL=systemd (the pool as the systemd units run it: marketpay-fcgi --workers on a socket
# systemd-socket-activate holds across its restarts, tests/pool-holder.sh; pool.pid is the
# pool's, holder.pid the socket holder's; pool-stop and pool-start are for the default
# pool, spawn-fcgi + multiwatch: the holder starts a stopped pool again, as systemd would).
#   tests/stack.sh pool-stop|pool-start DIR reads   the same for MP_READ_WORKERS's own pool
#
#   tests/stack.sh pg-access DIR     writes only DIR/pg_hba.conf and DIR/pg_ident.conf, the
#                                    stack's access rules (tests/ha/cluster.sh's nodes use them)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${MP_SRCDIR:-$(dirname "$here")}
builddir=${MP_BUILDDIR:-.}
builddir=$(cd "$builddir" && pwd)
pgbin=${MP_PGBIN:-/usr/lib/postgresql/15/bin}

die() { echo "stack: $*" >&2; exit 1; }

# Run as the postgres user when we are root (PostgreSQL refuses to run as root).
as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
	local p i
	for i in $(seq 1 200); do
		p=$((15000 + RANDOM % 17000))  # below the ephemeral range (32768-60999)
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
	done
	die "no free port found"
}

wait_for() { # wait_for SECONDS command...
	local t=$1; shift
	local end=$((SECONDS + t))
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}

# Who may log in, and as which role: peer authentication over the unix socket only (the
# cluster listens on no TCP port), through the map "marketpay". As root: root as postgres and
# the login roles make_login_roles makes, nobody (the workers) as mp_worker and mp_webhookd,
# postgres as postgres. Otherwise the invoking user as all of them. MP_PG_ROLES adds roles
# the invoking user may log in as (tests/install.sh's mp_admin). Written at every start, so
# a cluster initialised under older rules (dev/run's var/) gets these.
write_pg_access() {
	local data=$1 me u r
	me=$(id -un)
	{
		echo "# Written by tests/stack.sh: the unix socket only, each OS user as the roles"
		echo "# pg_ident.conf maps it to. No host lines: the cluster listens on no TCP port."
		echo "local all all peer map=marketpay"
	} >"$data/pg_hba.conf"
	{
		echo "# Written by tests/stack.sh. MAPNAME SYSTEM-USERNAME PG-USERNAME"
		for r in postgres mp_worker mp_webhookd mp_dba ${MP_PG_ROLES:-}; do
			echo "marketpay $me $r"
		done
		if [ "$me" = root ]; then
			for u in "nobody mp_worker" "nobody mp_webhookd" "postgres postgres"; do
				echo "marketpay $u"
			done
		fi
	} >"$data/pg_ident.conf"
	[ "$me" = root ] && chown postgres: "$data/pg_hba.conf" "$data/pg_ident.conf"
	chmod 600 "$data/pg_hba.conf" "$data/pg_ident.conf"
}

# MP_PG_CONF=FILE: FILE (such as doc/postgresql/marketpay-tuning.conf) copied into the data
# directory as marketpay-tuning.conf, which postgresql.conf includes (include_if_exists, as
# the README has a DBA do): set at every start, so a kept cluster follows the caller's choice.
include_pg_conf() {
	local data=$1 line="include_if_exists = 'marketpay-tuning.conf'"
	grep -qxF "$line" "$data/postgresql.conf" || echo "$line" >>"$data/postgresql.conf"
	rm -f "$data/marketpay-tuning.conf"
	[ -n "${MP_PG_CONF:-}" ] || return 0
	cp "$MP_PG_CONF" "$data/marketpay-tuning.conf"
	[ "$(id -u)" = 0 ] && chown postgres: "$data/marketpay-tuning.conf"
	return 0
}

start_pg() {
	local dir=$1
	mkdir -p "$dir/pg"
	# The socket's directory: only the stack's users get in (the workers run as nobody).
	if [ "$(id -u)" = 0 ]; then
		chown postgres:nogroup "$dir/pg"
		chmod 750 "$dir/pg"
	else
		chmod 700 "$dir/pg"
	fi
	if [ ! -f "$dir/pg/data/PG_VERSION" ]; then
		as_pg "$pgbin/initdb" -D "$dir/pg/data" -U postgres --auth-local=peer \
			--auth-host=reject -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/pg/initdb.log" 2>&1 ||
			{ cat "$dir/pg/initdb.log" >&2; die "initdb failed"; }
	fi
	write_pg_access "$dir/pg/data"
	include_pg_conf "$dir/pg/data"
	pg_start "$dir" || { cat "$dir/pg/server.log" >&2; die "PostgreSQL did not start"; }
	as_pg "$pgbin/psql" -h "$dir/pg" -U postgres -d postgres -qAtc \
		"SELECT 1 FROM pg_database WHERE datname = 'marketpay'" | grep -q 1 ||
		as_pg "$pgbin/createdb" -h "$dir/pg" -U postgres marketpay
}

write_secrets() {
	local dir=$1
	# Key files for the stack: webhook secrets are sealed under one, PINs peppered by the other.
	[ -f "$dir/secrets.key" ] || (umask 077; head -c 32 /dev/urandom >"$dir/secrets.key")
	[ -f "$dir/pin-pepper" ] || (umask 077; head -c 32 /dev/urandom >"$dir/pin-pepper")
	# The workers run as nobody when we are root.
	[ "$(id -u)" = 0 ] && chown nobody "$dir/secrets.key" "$dir/pin-pepper"
	return 0
}

write_config() {
	local dir=$1 port=$2 sqlline="sql_dir = $srcdir/sql" database="host=$1/pg dbname=marketpay"
	[ -z "${MP_DATABASE:-}" ] || database=$MP_DATABASE
	local localeline="locale_dir = $builddir/po/locale"
	[ -n "${MP_SQL_DIR+set}" ] && sqlline=${MP_SQL_DIR:+sql_dir = $MP_SQL_DIR}
	[ -n "${MP_LOCALE_DIR+set}" ] && localeline=${MP_LOCALE_DIR:+locale_dir = $MP_LOCALE_DIR}
	cat >"$dir/marketpay.conf" <<CONF
# Written by tests/stack.sh for the stack in $dir
environment = ${MP_ENVIRONMENT:-sandbox}
database = $database user=postgres
checkout_base_url = http://127.0.0.1:$port
$sqlline
$localeline
log_file = stderr
secrets_key_file = $dir/secrets.key
pepper_file = $dir/pin-pepper
pin_key_file = $dir/pin-key.pem
# The stack's webhook receiver, the tests' endpoints and a developer's own under dev/run all
# listen on loopback, which marketpay-webhookd and marketpayctl refuse unless this is on.
webhook_allow_private = 1
# marketpay-webhookd sweeps expired sessions every second: a test that moves a session's
# expires_at into the past sees it stored as expired, with its session.expired, at once.
expire_interval = 1
# The pool's and the daemon's counters (metrics.h), read by a scrape of /metrics.
metrics_dir = $dir/metrics
${MP_CONF_EXTRA:-}
CONF
}

# The workers and the daemon log in with the least-privilege roles of sql/006_roles.sql, as
# in production (marketpayctl db roles makes the login roles); marketpay.conf (marketpayctl's)
# keeps the owner. Each has its own config.
make_login_roles() {
	local dir=$1
	"$builddir/marketpayctl" -c "$dir/marketpay.conf" db roles --app mp_worker \
		--webhookd mp_webhookd --readonly mp_dba >/dev/null
	sed "s/^database = \(.*\) user=postgres$/database = \1 user=mp_worker/" \
		"$dir/marketpay.conf" >"$dir/worker.conf"
	sed "s/^database = \(.*\) user=postgres$/database = \1 user=mp_webhookd/" \
		"$dir/marketpay.conf" >"$dir/webhookd.conf"
}

# The pools' upstream when there are several (nginx/marketpay-upstream.conf.example explains
# it): another pool is tried only after an error, and a POST only when nothing was sent (nginx
# passes a non-idempotent request on only then); max_fails=0: a pool that is being restarted
# is tried again at once, never shut out for fail_timeout.
upstream() {
	local n
	[ "${MP_POOLS:-1}" -gt 1 ] || return 0
	echo "    upstream marketpay_pools {"
	for n in $(seq 1 "$MP_POOLS"); do
		echo "        server unix:$(pool_sock "$1" "$n") max_fails=0;"
	done
	echo "    }"
}

# Pool N's socket and pid file: pool 1 has the names of a stack with one pool; "reads" is
# the pool of MP_READ_WORKERS, its socket the one GET and HEAD are passed to.
pool_sock() {
	case ${2:-1} in 1) echo "$1/fcgi.sock" ;; reads) echo "$1/fcgi-reads.sock" ;; *) echo "$1/fcgi$2.sock" ;; esac
}
pool_pidfile() {
	case ${2:-1} in 1) echo "$1/pool.pid" ;; reads) echo "$1/pool-reads.pid" ;; *) echo "$1/pool$2.pid" ;; esac
}

# MP_READ_WORKERS: GET and HEAD to the reads socket, as the shipped server blocks' map does.
reads_map() {
	[ "${MP_READ_WORKERS:-0}" -gt 0 ] || return 0
	cat <<MAP
    upstream marketpay_all { server unix:$(pool_sock "$1" 1); }
    upstream marketpay_reads { server unix:$(pool_sock "$1" reads); }
    map \$request_method \$marketpay_pool {
        GET marketpay_reads;
        HEAD marketpay_reads;
        default marketpay_all;
    }
MAP
}

write_nginx() {
	local dir=$1 port=$2 rport=$3 pass="unix:$1/fcgi.sock"
	if [ "${MP_POOLS:-1}" -gt 1 ]; then
		[ "${MP_READ_WORKERS:-0}" = 0 ] || die "MP_POOLS and MP_READ_WORKERS: one or the other"
		pass="marketpay_pools;
            fastcgi_next_upstream error"
	fi
	# shellcheck disable=SC2016  # nginx's variable, not the shell's
	[ "${MP_READ_WORKERS:-0}" = 0 ] || pass='$marketpay_pool'
	local rsock=$dir/fcgi.sock
	[ "${MP_READ_WORKERS:-0}" = 0 ] || rsock=$(pool_sock "$dir" reads)
	mkdir -p "$dir/nginx/tmp"
	cp /etc/nginx/fastcgi_params "$dir/nginx/fastcgi_params"
	cp "$srcdir/nginx/marketpay-fastcgi.conf" "$dir/nginx/marketpay-fastcgi.conf"
	# MP_EDGE_LIMITS=1 (tests/edge.sh) adds a second server on its own port ($dir/edge.port):
	# the deployed server block of nginx/marketpay-<environment>.conf itself, with its TLS,
	# IPv6 and any port-80 block taken out and its paths pointed into this stack, under the
	# zones of nginx/marketpay-limits.conf. The main server is never throttled (benchmarks).
	local edge="" eport limits="" logs params
	local deployed=$srcdir/nginx/marketpay-${MP_ENVIRONMENT:-sandbox}.conf
	if [ "${MP_EDGE_LIMITS:-0}" = 1 ] || [ "${MP_NGINX_LOG:-}" = deployed ]; then
		cp "$srcdir/nginx/marketpay-limits.conf" "$dir/nginx/"
		limits="include marketpay-limits.conf;"
	fi
	# The main server's access log. The tests read it at once: a line a request, unbuffered,
	# and upstream.log beside it (tests/faults.sh). MP_NGINX_LOG=deployed (the benchmarks):
	# the deployed server block's one log instead, its format and buffering as written there.
	logs="access_log $dir/nginx/access.log;
        access_log $dir/nginx/upstream.log upstream;"
	if [ "${MP_NGINX_LOG:-}" = deployed ]; then
		params=$(sed -n 's|^ *access_log /var/log/nginx/[^ ]* \(.*\);$|\1|p' "$deployed")
		[ -n "$params" ] || die "MP_NGINX_LOG: no access_log line in $deployed"
		logs="access_log $dir/nginx/access.log $params;"
	fi
	if [ "${MP_EDGE_LIMITS:-0}" = 1 ]; then
		eport=$(free_port)
		while [ "$eport" = "$port" ] || [ "$eport" = "$rport" ]; do eport=$(free_port); done
		cp "$srcdir/nginx/marketpay-errors.conf" "$dir/nginx/"
		edge="$(awk '/^server \{/ { blk = $0 "\n"; inblk = 1; next }
	inblk { blk = blk $0 "\n"; if ($0 ~ /^\}/) { inblk = 0; if (blk !~ /listen 80;/) printf "%s", blk }; next }
	{ print }' "$deployed" |
	sed -E -e '/^\s*(ssl_|listen \[::\]|add_header Strict-Transport-Security)/d' \
		-e "s|listen 443 ssl http2;|listen 127.0.0.1:$eport;|" \
		-e "s|server unix:/run/marketpay/[a-z]+\.sock;|server unix:$dir/fcgi.sock;|" \
		-e "s|server unix:/run/marketpay/[a-z]+-reads\.sock;|server unix:$rsock;|" \
		-e "s|/etc/marketpay/nginx/|$dir/nginx/|" \
		-e "s|/var/log/nginx/|$dir/nginx/|" \
		-e "s|/usr/share/marketpay/static/|${MP_STATIC_DIR:-$srcdir/static}/|")"
		if ! grep -q "listen 127.0.0.1:$eport;" <<<"$edge" || grep -Eq 'listen (80|443)|^ *server unix:/run/' <<<"$edge"; then
			die "MP_EDGE_LIMITS: cannot adapt the listen lines of the server block"
		fi
		echo "$eport" >"$dir/edge.port"
	fi
	# MP_METRICS=1 (tests/metrics.sh) adds nginx/marketpay-metrics.conf's server on its own
	# port ($dir/metrics.port), its environment's location pointed at this stack's pool.
	local metrics="" mport
	if [ "${MP_METRICS:-0}" = 1 ]; then
		mport=$(free_port)
		while [ "$mport" = "$port" ] || [ "$mport" = "$rport" ]; do mport=$(free_port); done
		metrics=$(sed -E -e '/listen \[::1\]/d' \
			-e "s|listen 127.0.0.1:9180;|listen 127.0.0.1:$mport;|" \
			-e "s|unix:/run/marketpay/${MP_ENVIRONMENT:-sandbox}\.sock;|unix:$dir/fcgi.sock;|" \
			-e "s|/etc/marketpay/nginx/|$dir/nginx/|" \
			-e "s|/var/log/nginx/|$dir/nginx/|" "$srcdir/nginx/marketpay-metrics.conf")
		grep -q "listen 127.0.0.1:$mport;" <<<"$metrics" ||
			die "MP_METRICS: cannot adapt the listen line of marketpay-metrics.conf"
		echo "$mport" >"$dir/metrics.port"
	fi
	cat >"$dir/nginx/nginx.conf" <<CONF
worker_processes ${MP_NGINX_WORKERS:-2};
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/error.log warn;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    access_log $dir/nginx/access.log;
    client_body_temp_path $dir/nginx/tmp/body;
    fastcgi_temp_path $dir/nginx/tmp/fastcgi;
    proxy_temp_path $dir/nginx/tmp/proxy;
    uwsgi_temp_path $dir/nginx/tmp/uwsgi;
    scgi_temp_path $dir/nginx/tmp/scgi;
    server_tokens off;
$limits
$edge
$metrics
    # The test webhook receiver logs what it got, headers and exact body, one JSON line each.
    log_format webhook escape=json '{"id":"\$http_webhook_id","timestamp":"\$http_webhook_timestamp",'
        '"signature":"\$http_webhook_signature","content_type":"\$content_type",'
        '"uri":"\$request_uri","status":"\$status","body":"\$request_body"}';
    server {
        listen 127.0.0.1:$rport;
        location /hook {
            # tests create $dir/receiver-down to make the receiver fail for a while
            if (-f $dir/receiver-down) { return 503; }
            access_log $dir/webhooks.log webhook;
            # Proxying makes nginx read the body, so \$request_body is there to log.
            proxy_pass http://127.0.0.1:$rport/sink;
        }
        # /flaky/NAME fails (503) while $dir/flaky-NAME exists: one merchant's endpoint down.
        location ~ ^/flaky/([a-z0-9]+)\$ {
            if (-f $dir/flaky-\$1) { return 503; }
            access_log $dir/webhooks.log webhook;
            rewrite ^ /sink break;
            proxy_pass http://127.0.0.1:$rport;
        }
        location = /sink { access_log off; return 204; }
    }
    # One line per API/checkout request with the id the worker logs (req=) and what the
    # upstream answered, so the fault tests can tell a request a worker served from one none saw.
    log_format upstream '\$msec \$request_id \$status \$upstream_status \$request_method \$uri';
$(upstream "$dir")
$(reads_map "$dir")
    server {
        listen 127.0.0.1:$port;
        client_max_body_size 1m;
        $logs
        location /api/v1/ {
            include marketpay-fastcgi.conf;
            fastcgi_pass $pass;
        }
        location /checkout/ {
            include marketpay-fastcgi.conf;
            fastcgi_pass $pass;
        }
        location /static/ {
            alias ${MP_STATIC_DIR:-$srcdir/static}/;
            expires 1h;
        }
        # The machine's ceiling for the benchmarks: nginx answering by itself.
        location = /ceiling {
            default_type application/json;
            return 200 '{"status_code":10,"success":true}';
        }
    }
}
CONF
}

start_pool() { # start_pool DIR [N|reads]
	local dir=$1 workers=${MP_WORKERS:-4} user=() sock listen=() reads=()
	sock=$(pool_sock "$dir" "${2:-1}")
	[ "${2:-1}" = reads ] && workers=$MP_READ_WORKERS
	[ "$(id -u)" = 0 ] && user=(-u nobody -g nogroup)
	rm -f "$sock" "$dir/pool.stop"
	if [ "${MP_POOL:-}" = systemd ]; then
		# Both sockets, in the socket unit's order, and the pool's workers for each.
		listen=(-l "$sock")
		if [ "${MP_READ_WORKERS:-0}" -gt 0 ]; then
			rm -f "$(pool_sock "$dir" reads)"
			listen+=(-l "$(pool_sock "$dir" reads)")
			reads=(--read-workers "$MP_READ_WORKERS")
		fi
		# systemd-socket-activate starts the holder at the first connection, as systemd
		# starts a socket-activated service: the health check in start is that connection.
		(exec setsid systemd-socket-activate "${listen[@]}" -- /bin/bash \
			"$here/pool-holder.sh" "$dir" "$builddir/marketpay-fcgi" --workers "$workers" \
			"${reads[@]}" -c "$dir/worker.conf") </dev/null >>"$dir/fcgi.log" 2>&1 &
		echo $! >"$dir/holder.pid"
		wait_for 10 test -S "${listen[-1]}" || { cat "$dir/fcgi.log" >&2; die "no socket"; }
		# The socket unit's SocketMode= is 0660 for www-data; here any local user, as -M 0666.
		chmod 666 "$sock" "${listen[-1]}"
		return 0
	fi
	# -n: spawn-fcgi execs multiwatch in place, so the PID we record is multiwatch's, which
	# respawns crashed workers and turns SIGTERM into a graceful stop.
	setsid spawn-fcgi -n -s "$sock" -M 0666 "${user[@]}" -- \
		/usr/bin/multiwatch -f "$workers" -r 100 -- "$builddir/marketpay-fcgi" -c "$dir/worker.conf" \
		</dev/null >>"$dir/fcgi.log" 2>&1 &
	echo $! >"$(pool_pidfile "$dir" "${2:-1}")"
	wait_for 10 test -S "$sock" || { cat "$dir/fcgi.log" >&2; die "pool did not start"; }
}

# marketpay-webhookd, once it is built: one daemon (tests may start a second one).
start_webhookd() {
	local dir=$1
	[ -x "$builddir/marketpay-webhookd" ] || return 0
	setsid "$builddir/marketpay-webhookd" -c "$dir/webhookd.conf" </dev/null \
		>>"$dir/webhookd.log" 2>&1 &
	echo $! >"$dir/webhookd.pid"
}

start() {
	local dir=$1 port=${2:-}
	for bin in "$pgbin/initdb" /usr/sbin/nginx /usr/bin/spawn-fcgi /usr/bin/multiwatch \
		/usr/bin/systemd-socket-activate \
		"$builddir/marketpay-fcgi" "$builddir/marketpayctl"; do
		[ -x "$bin" ] || die "$bin is missing (dev/test and dev/run install and build everything)"
	done
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	chmod 755 "$dir"
	[ -n "$port" ] || port=$(free_port)
	local rport n
	rport=$(free_port)
	[ -n "${MP_DATABASE:-}" ] || start_pg "$dir"
	write_secrets "$dir"
	# The metrics files: the workers (nobody as root) create theirs, the daemon its own, and
	# the group (set by the directory) lets a worker read the daemon's.
	mkdir -p "$dir/metrics"
	if [ "$(id -u)" = 0 ]; then chown nobody:nogroup "$dir/metrics"; chmod 2750 "$dir/metrics"; fi
	write_config "$dir" "$port"
	"$builddir/marketpayctl" -c "$dir/marketpay.conf" db migrate >/dev/null
	# The RSA key merchants encrypt transfer PINs to (kept across dev/run restarts).
	[ -f "$dir/pin-key.pem" ] ||
		"$builddir/marketpayctl" -c "$dir/marketpay.conf" pin-key generate >/dev/null
	[ "$(id -u)" = 0 ] && chown nobody "$dir/pin-key.pem"
	make_login_roles "$dir"
	write_nginx "$dir" "$port" "$rport"
	for n in $(seq 1 "${MP_POOLS:-1}"); do start_pool "$dir" "$n"; done
	if [ "${MP_READ_WORKERS:-0}" -gt 0 ] && [ "${MP_POOL:-}" != systemd ]; then
		start_pool "$dir" reads
	fi
	start_webhookd "$dir"
	/usr/sbin/nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log" ||
		die "nginx did not start"
	local pg="PGHOST=$dir/pg
PGPORT=5432" pgnames="PGHOST PGPORT"
	if [ -n "${MP_DATABASE:-}" ]; then
		pg="PGSERVICEFILE=${PGSERVICEFILE:-}
PGSERVICE=${PGSERVICE:-}"
		pgnames="PGSERVICEFILE PGSERVICE"
	fi
	cat >"$dir/stack.env" <<ENV
MARKETPAY_BASE_URL=http://127.0.0.1:$port
MARKETPAY_PORT=$port
MARKETPAY_CONFIG=$dir/marketpay.conf
MARKETPAY_STACK_DIR=$dir
MARKETPAYCTL=$builddir/marketpayctl
MARKETPAY_WEBHOOK_RECEIVER=http://127.0.0.1:$rport/hook
$pg
PGDATABASE=marketpay
PGUSER=postgres
export MARKETPAY_BASE_URL MARKETPAY_PORT MARKETPAY_CONFIG MARKETPAY_STACK_DIR MARKETPAYCTL MARKETPAY_WEBHOOK_RECEIVER $pgnames PGDATABASE PGUSER
ENV
	wait_for 20 curl -fsS "http://127.0.0.1:$port/api/v1/health" ||
		{ tail -20 "$dir/fcgi.log" >&2; die "the stack does not answer on port $port"; }
}

stop() {
	local dir=$1 pid
	[ -d "$dir" ] || return 0
	if [ -f "$dir/nginx/nginx.pid" ]; then
		kill -QUIT "$(cat "$dir/nginx/nginx.pid")" 2>/dev/null || true
	fi
	if [ -f "$dir/webhookd.pid" ]; then
		pid=$(cat "$dir/webhookd.pid")
		kill -TERM "$pid" 2>/dev/null || true
		wait_for 15 bash -c "! kill -0 $pid" || kill -KILL -- "-$pid" 2>/dev/null || true
		rm -f "$dir/webhookd.pid"
	fi
	# MP_POOL=systemd: the holder starts no pool again once pool.stop exists.
	[ -f "$dir/holder.pid" ] && touch "$dir/pool.stop"
	for f in "$dir"/pool.pid "$dir"/pool[0-9]*.pid "$dir"/pool-reads.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		kill -TERM "$pid" 2>/dev/null || true
		wait_for 10 bash -c "! kill -0 $pid" || kill -KILL -- "-$pid" 2>/dev/null || true
		# Workers orphaned by a multiwatch that died are still in its process group.
		kill -TERM -- "-$pid" 2>/dev/null || true
		rm -f "$f"
	done
	if [ -f "$dir/holder.pid" ]; then
		pid=$(cat "$dir/holder.pid")
		wait_for 10 bash -c "! kill -0 $pid" || kill -KILL -- "-$pid" 2>/dev/null || true
		rm -f "$dir/holder.pid"
	fi
	if [ -f "$dir/pg/data/postmaster.pid" ]; then
		as_pg "$pgbin/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	rm -f "$dir"/fcgi.sock "$dir"/fcgi[0-9]*.sock "$dir"/fcgi-reads.sock
}

pg_stop() {
	as_pg "$pgbin/pg_ctl" -D "$1/pg/data" -m fast -w stop >/dev/null
}

pg_start() {
	local opts="-c listen_addresses='' -k $1/pg -c max_connections=200"
	[ "${MP_FAST_PG:-0}" = 1 ] && opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	as_pg "$pgbin/pg_ctl" -D "$1/pg/data" -l "$1/pg/server.log" -o "$opts" -w -t 60 start >/dev/null
}

pg_restart() {
	as_pg "$pgbin/pg_ctl" -D "$1/pg/data" -m immediate -w stop >/dev/null
	sleep "${2:-0}"
	pg_start "$1"
}

# SIGTERM to multiwatch: it passes the graceful stop on, each worker finishes the request in
# hand, and multiwatch exits when they are gone. The socket file stays, as spawn-fcgi leaves it.
pool_stop() { # pool_stop DIR [N]
	local pidfile pid
	pidfile=$(pool_pidfile "$1" "${2:-1}")
	[ -f "$pidfile" ] || return 0
	pid=$(cat "$pidfile")
	kill -TERM "$pid" 2>/dev/null || true
	wait_for 30 bash -c "! kill -0 $pid" || die "the pool did not stop within 30 s"
	rm -f "$pidfile"
}

webhookd_stop() {
	local dir=$1 pid
	[ -f "$dir/webhookd.pid" ] || return 0
	pid=$(cat "$dir/webhookd.pid")
	kill -TERM "$pid" 2>/dev/null || true
	wait_for 15 bash -c "! kill -0 $pid" || die "webhookd did not stop within 15 s"
	rm -f "$dir/webhookd.pid"
}

case "${1:-}" in
pg-stop)  pg_stop "$2" ;;
pg-restart) pg_restart "$2" "${3:-0}" ;;
pool-stop) pool_stop "$2" "${3:-1}" ;;
pool-start) start_pool "$(cd "$2" && pwd)" "${3:-1}" ;;
webhookd-stop) webhookd_stop "$2" ;;
webhookd-start) start_webhookd "$(cd "$2" && pwd)" ;;
pg-start) pg_start "$2" ;;
pg-access) write_pg_access "$2" ;;
start) [ $# -ge 2 ] || die "usage: stack.sh start DIR [PORT]"; start "$2" "${3:-}" ;;
stop)  [ $# -ge 2 ] || die "usage: stack.sh stop DIR"; stop "$2" ;;
*)     die "usage: stack.sh start|stop DIR [PORT]" ;;
esac
