#!/usr/bin/env bash
# Environments kept apart, and the DBA's read-only login, as the README's "Deploying for
# real" (steps 2-4) and the units set them up, on a real PostgreSQL. As root: makes the OS
# users marketpay-production, marketpay-sandbox and the DBA alice (those that do not exist
# yet; removed again at the end), a cluster of its own (unix socket in a temporary
# directory) whose pg_hba.conf and pg_ident.conf are Debian's with the README's own commands
# applied (the lines come from doc/postgresql/, installed as examples), the two databases
# migrated and `db roles` run as the README runs them, the key directories made with the
# README's modes under a temporary root. Then checks: each environment's OS user logs in as
# its own roles, only to its own database, never as the other's; the unit's user and PGUSER
# run the unit's command (the purge, the webhook daemon with its metrics directory made as
# RuntimeDirectory= makes it); neither user reads the other's keys; alice runs the
# command of marketpay-ledger(7) and gets rows, and is refused every write. Needs root
# (exit 77, skipped, otherwise). Always stops the cluster and removes what it made.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-$srcdir/build}" && pwd)
pgbin=${MP_PGBIN:-/usr/lib/postgresql/15/bin}
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"

[ "$(id -u)" = 0 ] || { echo "envs.sh: needs root (OS users, runuser): skipped"; exit 77; }

envs=(production sandbox)
dba=alice
# shellcheck disable=SC2034 # the README's commands name $ex
ex="$srcdir/doc/postgresql"
dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-envs.XXXXXX")
chmod 755 "$dir"
made=()
cleanup() {
	local code=$? u
	[ ! -f "$dir/pg/data/postmaster.pid" ] ||
		runuser -u postgres -- "$pgbin/pg_ctl" -D "$dir/pg/data" -m immediate stop >/dev/null 2>&1 || true
	for u in "${made[@]}"; do
		userdel "$u" >/dev/null 2>&1 || true
		groupdel "$u" >/dev/null 2>&1 || true
	done
	[ "$code" = 0 ] || tail -n 20 "$dir/pg/server.log" >&2 2>/dev/null || true
	rm -rf "$dir"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Step 2's users (a system user and group of the same name each) and a DBA's login; users
# that exist already (an installed package's) are used and left alone.
adduser_system() {
	if command -v adduser >/dev/null; then
		adduser --quiet --system --group --no-create-home --home /nonexistent "$1"
	else
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$1"
	fi
}
for u in marketpay-production marketpay-sandbox "$dba"; do
	id "$u" >/dev/null 2>&1 && continue
	if [ "$u" = "$dba" ]; then
		useradd --no-create-home --home-dir /nonexistent --shell /bin/sh "$u"
	else
		adduser_system "$u"
	fi
	made+=("$u")
done
own_group() { [ "$(id -gn "$1")" = "$1" ]; }
for u in marketpay-production marketpay-sandbox; do
	check "step 2: $u exists, with its own group" own_group "$u"
done

# Step 3 on a cluster of our own: Debian's pg_hba.conf (when this machine has one), then
# the README's two commands, as written, on this cluster's files.
data="$dir/pg/data"
mkdir -p "$dir/pg"
chown postgres: "$dir/pg"
runuser -u postgres -- "$pgbin/initdb" -D "$data" -U postgres --auth-local=peer \
	--auth-host=reject -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 ||
	{ cat "$dir/initdb.log" >&2; bail "initdb failed"; }
[ ! -f /etc/postgresql/15/main/pg_hba.conf ] || cp /etc/postgresql/15/main/pg_hba.conf "$data/"
readme_cmd() { # the README's line that contains $1, its paths pointed at this cluster
	grep -F -- "$1" "$srcdir/README.md" | sed "s|/etc/postgresql/15/main/|$data/|g"
}
ident_cmd=$(readme_cmd 'marketpay-pg_ident.conf >>')
# shellcheck disable=SC2016 # the README's text, $ex unexpanded
hba_cmd=$(readme_cmd '/r $ex/marketpay-pg_hba.conf')
check "README step 3 adds doc/postgresql/marketpay-pg_ident.conf" test -n "$ident_cmd"
check "README step 3 inserts doc/postgresql/marketpay-pg_hba.conf" test -n "$hba_cmd"
eval "$ident_cmd"
eval "$hba_cmd"
check "pg_hba.conf: marketpay's lines come before Debian's \"local all all\"" bash -c "
	grep -v '^#' '$data/pg_hba.conf' | grep -m1 -E '^local +(all +all|marketpay)' | grep -q marketpay"
chown postgres: "$data/pg_hba.conf" "$data/pg_ident.conf"
runuser -u postgres -- "$pgbin/pg_ctl" -D "$data" -l "$dir/pg/server.log" -w -o \
	"-k $dir/pg -c listen_addresses='' -c fsync=off" start >/dev/null ||
	bail "PostgreSQL did not start"
export PGHOST="$dir/pg"
runuser -u postgres -- psql -X -qAt -U postgres -d postgres -c 'CREATE ROLE mp_admin LOGIN CREATEROLE' \
	>/dev/null

# Step 4, per environment, under a temporary root: database, config, keys, roles.
etc="$dir/etc/marketpay"
mkdir -p "$etc"
chmod 755 "$dir/etc" "$etc"
export PGUSER=mp_admin
for env in "${envs[@]}"; do
	runuser -u postgres -- psql -X -qAt -U postgres -d postgres -c \
		"CREATE DATABASE marketpay_$env OWNER mp_admin" >/dev/null
	install -d -m 0750 -g "marketpay-$env" "$etc/$env"
	(umask 027; head -c 32 /dev/urandom >"$etc/$env/secrets.key"
	 head -c 32 /dev/urandom >"$etc/$env/pin-pepper")
	cat >"$etc/$env.conf" <<CONF
environment = $env
database = host=$dir/pg dbname=marketpay_$env
checkout_base_url = https://$env.example
log_file = stderr
secrets_key_file = $etc/$env/secrets.key
pepper_file = $etc/$env/pin-pepper
pin_key_file = $etc/$env/pin-key.pem
sql_dir = $srcdir/sql
metrics_dir = $dir/run/metrics/$env
CONF
	# As the units' RuntimeDirectory=marketpay/metrics/%i makes it.
	install -d -m 0755 "$dir/run" "$dir/run/metrics"
	install -d -o "marketpay-$env" -g "marketpay-$env" -m 0750 "$dir/run/metrics/$env"
	ctl=("$builddir/marketpayctl" -c "$etc/$env.conf")
	"${ctl[@]}" db migrate >/dev/null
	check "$env: db roles as the README runs it" "${ctl[@]}" db roles --app "mp_worker_$env" \
		--webhookd "mp_webhookd_$env" --readonly "$dba"
	"${ctl[@]}" pin-key generate >/dev/null
	chgrp "marketpay-$env" "$etc/$env"/* && chmod 0640 "$etc/$env"/*
	"${ctl[@]}" merchant create --name "Tea $env" --currency EUR >/dev/null
done
unset PGUSER

# as OSUSER ROLE DB: succeeds when OSUSER, connecting as ROLE to DB, is let in as ROLE.
as() {
	[ "$(cd / && runuser -u "$1" -- psql -X -qAt -h "$PGHOST" -U "$2" -d "$3" \
		-c 'SELECT current_user' 2>>"$dir/refused.log")" = "$2" ]
}
refused() { ! as "$@"; }
refused_both() { refused "$1" "$2" "$3" && refused "$1" "$2" "$4"; } # USER ROLE DB1 DB2
other() { [ "$1" = production ] && echo sandbox || echo production; }
for env in "${envs[@]}"; do
	o=$(other "$env")
	u=marketpay-$env
	for r in "mp_worker_$env" "mp_webhookd_$env"; do
		check "$u logs in as $r to marketpay_$env" as "$u" "$r" "marketpay_$env"
		check "$u is refused as $r on marketpay_$o" refused "$u" "$r" "marketpay_$o"
	done
	for r in "mp_worker_$o" "mp_webhookd_$o"; do
		check "$u cannot log in as $r (its own database or the other's)" \
			refused_both "$u" "$r" "marketpay_$env" "marketpay_$o"
	done
	for r in mp_admin "$dba"; do
		check "$u cannot log in as $r" refused_both "$u" "$r" "marketpay_$env" "marketpay_$o"
	done
	# Whatever pg_hba.conf says: CONNECT is no longer PUBLIC's.
	check "marketpay_$env: PUBLIC may not connect, mp_worker_$o may not, mp_worker_$env may" \
		test "$(runuser -u postgres -- psql -X -qAt -U postgres -d postgres -c "SELECT
			has_database_privilege('public', 'marketpay_$env', 'CONNECT'),
			has_database_privilege('mp_worker_$o', 'marketpay_$env', 'CONNECT'),
			has_database_privilege('mp_worker_$env', 'marketpay_$env', 'CONNECT')")" = "f|f|t"
done
check "  (refused by pg_hba.conf and peer authentication)" bash -c \
	"grep -q 'pg_hba.conf rejects connection' '$dir/refused.log' &&
	 grep -q 'Peer authentication failed' '$dir/refused.log'"

# The units: their user and PGUSER for an instance (%i), as the purge runs its command.
unit_value() { # unit_value UNIT KEY ENV: KEY= (or Environment=KEY=) of UNIT, %i = ENV
	sed -n -e "s/^$2=//p" -e "s/^Environment=$2=//p" "$srcdir/systemd/$1" | sed "s/%i/$3/g"
}
for env in "${envs[@]}"; do
	for unit in marketpay-fcgi@.service marketpay-webhookd@.service marketpay-purge@.service; do
		uu=$(unit_value "$unit" User "$env")
		ug=$(unit_value "$unit" Group "$env")
		ur=$(unit_value "$unit" PGUSER "$env")
		check "${unit/@/@$env}: User=$uu Group=$ug is marketpay-$env" \
			test "$uu:$ug" = "marketpay-$env:marketpay-$env"
		check "${unit/@/@$env}: it logs in as PGUSER=$ur to marketpay_$env" \
			as "$uu" "$ur" "marketpay_$env"
	done
	uu=$(unit_value marketpay-purge@.service User "$env")
	ur=$(unit_value marketpay-purge@.service PGUSER "$env")
	check "marketpay-purge@$env's command runs as $uu with PGUSER=$ur" bash -c "cd / &&
		runuser -u '$uu' -- env PGUSER='$ur' '$builddir/marketpayctl' -c '$etc/$env.conf' \
		purge >/dev/null 2>>'$dir/purge.log'"
	o=$(other "$env")
	check "the other environment's unit user ($uu, PGUSER=$ur) cannot purge marketpay_$o" \
		bash -c "! (cd / && runuser -u '$uu' -- env PGUSER='$ur' '$builddir/marketpayctl' \
			-c '$etc/$o.conf' purge >/dev/null 2>>'$dir/purge.log')"
done

# The webhook daemon as its unit runs it: it reads its keys, logs in and counts in its own
# metrics directory; the other environment's user, with this environment's config, stops
# at the keys.
webhookd_runs() { # webhookd_runs ENV: up for 2 s as the unit's user, then a clean SIGTERM
	local u r pid
	u=$(unit_value marketpay-webhookd@.service User "$1")
	r=$(unit_value marketpay-webhookd@.service PGUSER "$1")
	(cd / && exec runuser -u "$u" -- env PGUSER="$r" "$builddir/marketpay-webhookd" \
		-c "$etc/$1.conf" 2>>"$dir/webhookd-$1.log") &
	pid=$!
	sleep 2
	kill -0 "$pid" 2>/dev/null || return 1
	kill -TERM "$(pgrep -P "$pid")" # the daemon, runuser's child; runuser passes on its status
	wait "$pid" && grep -q 'started' "$dir/webhookd-$1.log" &&
		test -s "$dir/run/metrics/$1/$1-webhookd.metrics"
}
webhookd_stops_at_keys() { # webhookd_stops_at_keys USER-ENV CONFIG-ENV: exit 1, the key named
	local rc=0
	(cd / && runuser -u "marketpay-$1" -- env PGUSER="mp_webhookd_$1" timeout 10 \
		"$builddir/marketpay-webhookd" -c "$etc/$2.conf") >/dev/null 2>"$dir/keys-$1.log" || rc=$?
	[ "$rc" = 1 ] && grep -qF "secrets_key_file $etc/$2/secrets.key: cannot read" "$dir/keys-$1.log"
}
for env in "${envs[@]}"; do
	o=$(other "$env")
	check "marketpay-webhookd@$env runs as its unit's user and role, counts in metrics/$env" \
		webhookd_runs "$env"
	check "marketpay-$o cannot run marketpay-webhookd with $env's config (its keys)" \
		webhookd_stops_at_keys "$o" "$env"
done

# Step 4's keys: root:marketpay-ENV 0750, files 0640.
for env in "${envs[@]}"; do
	o=$(other "$env")
	check "$etc/$env is root:marketpay-$env 0750" \
		test "$(stat -c '%U:%G %a' "$etc/$env")" = "root:marketpay-$env 750"
	for f in secrets.key pin-pepper pin-key.pem; do
		check "$env/$f is root:marketpay-$env 0640, marketpay-$env reads it" bash -c "
			[ \"\$(stat -c '%U:%G %a' '$etc/$env/$f')\" = 'root:marketpay-$env 640' ] &&
			runuser -u marketpay-$env -- cat '$etc/$env/$f' >/dev/null"
		check "marketpay-$o cannot read $env/$f" bash -c \
			"! runuser -u marketpay-$o -- cat '$etc/$env/$f' >/dev/null 2>&1"
	done
done

# The DBA: the command of marketpay-ledger(7), EXAMPLES, as the DBA's own OS user.
dbacmd=$(grep -m1 '^psql -d marketpay_production -c ' "$srcdir/man/marketpay-ledger.7" || true)
check "marketpay-ledger(7) documents the DBA's psql command" test -n "$dbacmd"
dba_rows() { # the lines with a column separator (header and rows) that $dbacmd prints
	cd / || return
	runuser -u "$dba" -- env PGHOST="$PGHOST" bash -c "$dbacmd" -- 2>>"$dir/dba.log" | grep -c '|'
}
rows=$(dba_rows || true)
check "$dba runs it and gets rows (header + $((rows - 1)))" test "$rows" -ge 2 ||
	cat "$dir/dba.log" >&2
dba_sql() { # dba_sql DB SQL: runs SQL as the DBA; prints the error
	# shellcheck disable=SC2069 # the error to the pipe, the result away
	(cd / && runuser -u "$dba" -- psql -X -qAt -h "$PGHOST" -d "$1" -c "$2" 2>&1 >/dev/null) || true
}
dba_denied() { dba_sql marketpay_production "$1" | grep -q 'permission denied'; }
check "$dba reads marketpay_sandbox too" \
	test -z "$(dba_sql marketpay_sandbox 'SELECT count(*) FROM account_balances')"
for sql in "INSERT INTO merchants (name) VALUES ('x')" "UPDATE accounts SET balance = 0" \
	"DELETE FROM idempotency_keys"; do
	check "$dba is refused: ${sql%% *} (permission denied)" dba_denied "$sql"
done
for r in mp_admin mp_worker_production; do
	check "$dba cannot log in as $r" refused "$dba" "$r" marketpay_production
done
finish
