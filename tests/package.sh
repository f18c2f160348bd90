#!/usr/bin/env bash
# The Debian package (debian/). Builds it with `dpkg-buildpackage -us -uc -b` from a copy of
# the distribution's files (make distdir: what the release tarball, the package's orig,
# holds), runs lintian on it (any error or warning fails; overrides carry their reason),
# installs it on this machine with apt-get and checks what it placed and made (users, key
# directories, conffiles; again after a reinstall), then serves from the installed files
# alone: a PostgreSQL cluster of tests/stack.sh, `db migrate` and `db roles` by the installed
# marketpayctl with the installed migrations, the installed marketpay-fcgi started as the
# installed units start it (the socket unit's socket held by systemd-socket-activate, the
# service's User=, Group=, Environment= and ExecStart= for the instance sandbox), nginx with
# the installed sandbox server block (TLS with a certificate of its own; only its ports and
# paths changed) and the installed snippets under /etc/marketpay/nginx; a create-session and
# its checkout page through it. `systemd-analyze verify` on the installed units. Last,
# `dpkg --purge` and checks that the users, /etc/marketpay and the files are gone.
# Needs root (CI's throwaway machine); refuses to run where marketpay is installed, where
# /etc/marketpay exists or where a marketpay-ENV user exists (the purge would remove them).
# 1 to 2 minutes, most of it the package's compile and unit tests. KEEP=1 keeps a copy of
# the directory (the package, its build and lintian logs).
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-.}" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
# shellcheck disable=SC2034  # own_stack (tests/lib.sh) runs it
stack="$srcdir/tests/stack.sh"
env=sandbox units=/lib/systemd/system ex=/usr/share/doc/marketpay/examples

[ "$(id -u)" = 0 ] || bail "package: run as root (it installs and purges the package)"
for t in dpkg-buildpackage dh lintian apt-get systemd-socket-activate systemd-analyze; do
	command -v "$t" >/dev/null || bail "package: $t is missing (dev/deps.sh installs it)"
done
installed() { dpkg-query -W -f='${Status}' marketpay 2>/dev/null | grep -q 'ok installed'; }
! installed || bail "package: marketpay is installed on this machine; the test would purge it"
[ ! -e /etc/marketpay ] || bail "package: /etc/marketpay exists; the purge would remove it"
for e in production sandbox; do
	getent passwd "marketpay-$e" >/dev/null &&
		bail "package: user marketpay-$e exists; the purge would remove it"
done

# The pool and nginx of the package's files, stopped before the purge (userdel refuses a
# user with processes) and on any exit.
stop_served() {
	[ ! -f "$dir/nginx/nginx.pid" ] || kill -QUIT "$(cat "$dir/nginx/nginx.pid")" 2>/dev/null || true
	if [ -f "$dir/holder.pid" ]; then
		kill -TERM -- "-$(cat "$dir/holder.pid")" 2>/dev/null || true
		wait_for 15 bash -c "! pgrep -u marketpay-$env >/dev/null" ||
			pkill -KILL -u "marketpay-$env" 2>/dev/null || true
		rm -f "$dir/holder.pid"
	fi
	return 0
}
# shellcheck disable=SC2317  # called by own_stack's EXIT trap
own_cleanup() {
	stop_served
	if installed; then dpkg --purge marketpay >/dev/null 2>&1 || true; fi
	[ "${KEEP:-0}" != 1 ] || { cp -a "$dir" "$dir.kept"; echo "package: kept $dir.kept" >&2; }
}

# The PostgreSQL cluster (and a stack of this build, unused): root logs in as mp_admin, as
# README.md's step 3 has it.
MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=1 MP_PG_ROLES=mp_admin \
	own_stack package

# Build: the distribution's files, as the release tarball has them.
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$builddir/Makefile")
top="$dir/pkg/marketpay-$version"
mkdir -p "$dir/pkg"
(unset MAKEFLAGS MFLAGS MAKELEVEL; make -s -C "$builddir" distdir distdir="$top") \
	>"$dir/pkg/dist.log" 2>&1 || { cat "$dir/pkg/dist.log" >&2; bail "make distdir failed"; }
chmod -R u+w "$top"
debver=$(cd "$top" && dpkg-parsechangelog -S Version)
check "debian/changelog's version $debver is configure.ac's $version" [ "${debver%-*}" = "$version" ]
start=$SECONDS
if (cd "$top" && unset MAKEFLAGS MFLAGS MAKELEVEL top_srcdir top_builddir &&
	DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -us -uc -b) >"$dir/pkg/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b ($((SECONDS - start)) s)"
else
	tail -n 40 "$dir/pkg/build.log" >&2
	bail "dpkg-buildpackage failed (log above)"
fi
check "the build ran the unit tests, and they passed" grep -q '^# FAIL:  0$' "$dir/pkg/build.log"
arch=$(dpkg --print-architecture)
deb="$dir/pkg/marketpay_${debver}_$arch.deb"
check "built $(basename "$deb")" test -s "$deb"

# lintian, everything it has to say (info, pedantic and the overridden tags) in the log. With
# --show-overrides, --fail-on counts the overridden tags too: its E: and W: lines judge.
lintian --fail-on error,warning --display-info --pedantic --show-overrides \
	"$dir/pkg/marketpay_${debver}_$arch.changes" >"$dir/pkg/lintian.log" 2>&1 && lint=0 || lint=$?
sed 's/^/lintian: /' "$dir/pkg/lintian.log"
check "lintian ran (exit $lint)" bash -c "[ $lint = 0 ] || [ $lint = 2 ]"
check "lintian: no error, no warning" bash -c "! grep -q '^[EW]: ' '$dir/pkg/lintian.log'"
check "lintian: every override has its reason" bash -c "! grep -q '^O: ' '$dir/pkg/lintian.log' ||
	grep -q '^N: ' '$dir/pkg/lintian.log'"

DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$deb" \
	>"$dir/pkg/install.log" 2>&1 || { cat "$dir/pkg/install.log" >&2; bail "apt-get install failed"; }
ok "apt-get install $(basename "$deb")"

# What it placed: make install's layout (README.md, "Deploying for real", step 1).
for f in /usr/bin/marketpayctl /usr/sbin/marketpay-fcgi /usr/sbin/marketpay-webhookd; do
	check "$f --version says $version" test "$("$f" --version)" = "${f##*/} $version"
done
for f in "$srcdir"/man/*.[1-8]; do
	n=${f##*/}
	check "man page $n" test -s "/usr/share/man/man${n##*.}/$n.gz"
done
for f in "$srcdir"/sql/[0-9][0-9][0-9]_*.sql "$srcdir"/static/*; do
	d=${f%/*}
	check "${d##*/}/${f##*/} in /usr/share/marketpay" cmp -s "$f" "/usr/share/marketpay/${d##*/}/${f##*/}"
done
for l in $(sed -e 's/#.*//' "$srcdir/po/LINGUAS"); do
	check "catalog $l" test -s "/usr/share/locale/$l/LC_MESSAGES/marketpay.mo"
done
for f in "$srcdir"/systemd/*@.* "$srcdir"/systemd/marketpay-backup-*.timer; do
	check "unit ${f##*/} in $units" cmp -s "$f" "$units/${f##*/}"
	check "example ${f##*/}" test -s "$ex/${f##*/}"
done
for f in marketpay.conf.example marketpay-sandbox.conf marketpay-limits.conf; do
	check "example $f" test -s "$ex/$f"
done
conffiles=$(dpkg-query -W -f='${Conffiles}' marketpay | awk '{print $1}' | sort | xargs)
check "conffiles: the nginx snippets the server blocks include ($conffiles)" test "$conffiles" = \
	"/etc/marketpay/nginx/marketpay-errors.conf /etc/marketpay/nginx/marketpay-fastcgi.conf"
check "no unit enabled by the package" bash -c "! ls /etc/systemd/system/*.wants 2>/dev/null |
	grep -q marketpay"

# What it made: per environment a system user and group, and the key directory.
made() {
	local e
	for e in production sandbox; do
		getent passwd "marketpay-$e" | awk -F: -v g="$(getent group "marketpay-$e" | cut -d: -f3)" \
			'$3 < 1000 && $4 == g && $6 == "/nonexistent" && $7 ~ /nologin$/ { print $1, $3 }'
		stat -c '%n %U:%G %a' "/etc/marketpay/$e"
	done
}
before=$(made)
echo "$before" | sed 's/^/made: /'
check "system users marketpay-production and marketpay-sandbox (own group, no home, no shell)" \
	test "$(grep -c '^marketpay-' <<<"$before")" = 2
check "/etc/marketpay/ENV: root:marketpay-ENV 0750" test "$(grep -c ' root:marketpay-.* 750$' <<<"$before")" = 2

# The unit's user and database role for the instance, and the command it runs.
unit_key() { sed -n "s/^$2=//p" "$units/$1" | sed "s/%i/$env/g"; }
user=$(unit_key marketpay-fcgi@.service User)
group=$(unit_key marketpay-fcgi@.service Group)
if ! grep -q "^$user " <<<"$before" || [ "$group" != "$user" ]; then
	bail "marketpay-fcgi@$env runs as $user:$group, which the package does not make"
fi
ok "marketpay-fcgi@$env runs as a user the package made ($user:$group)"
mapfile -t unit_env < <(unit_key marketpay-fcgi@.service Environment)
cmd=$(unit_key marketpay-fcgi@.service ExecStart)
for e in "${unit_env[@]}"; do cmd=${cmd//\$\{${e%%=*}\}/${e#*=}}; done
worker_role=$(printf '%s\n' "${unit_env[@]}" | sed -n 's/^PGUSER=//p')
webhookd_role=$(unit_key marketpay-webhookd@.service Environment | sed -n 's/^PGUSER=//p')

# The environment's keys and configuration, as README.md's step 4 writes them; only the
# database's socket directory and the page's address (a port of this test) differ.
kd=/etc/marketpay/$env
(umask 027; head -c 32 /dev/urandom >"$kd/secrets.key"; head -c 32 /dev/urandom >"$kd/pin-pepper")
port=$(free_port)
cat >/etc/marketpay/$env.conf <<CONF
environment = $env
database = host=$PGHOST dbname=marketpay_$env
checkout_base_url = https://$env.pay.example.com:$port
log_file = stderr
secrets_key_file = $kd/secrets.key
pepper_file = $kd/pin-pepper
pin_key_file = $kd/pin-key.pem
metrics_dir = $dir/run/marketpay/metrics/$env
CONF
ctl() { PGUSER=mp_admin /usr/bin/marketpayctl -c "/etc/marketpay/$env.conf" "$@"; }
quiet() { "$@" >/dev/null; }

# The database, as README.md's steps 3 and 4 make it, by the installed marketpayctl with the
# installed migrations (no sql_dir: the built-in /usr/share/marketpay/sql). The roles are the
# units' PGUSER; the unit's user logs in as its worker role (pg_ident.conf, step 3), through
# the cluster's socket directory (opened to it: the stack's admits only the stack's users).
psql -qc 'CREATE ROLE mp_admin LOGIN CREATEROLE'
createdb -O mp_admin "marketpay_$env"
check "db migrate (installed marketpayctl and migrations)" quiet ctl db migrate
n=$(find /usr/share/marketpay/sql -name '*.sql' | wc -l)
check "db migrate applied the $n installed migrations" test "$(psql -d "marketpay_$env" -qAtc \
	'SELECT count(*) FROM schema_migrations')" = "$n"
check "db roles --app $worker_role --webhookd $webhookd_role" \
	quiet ctl db roles --app "$worker_role" --webhookd "$webhookd_role"
ctl pin-key generate >/dev/null
chgrp "marketpay-$env" "$kd"/* && chmod 0640 "$kd"/*
echo "marketpay $user $worker_role" >>"$PGHOST/data/pg_ident.conf"
psql -qAtc 'SELECT pg_reload_conf()' >/dev/null
chmod o+x "$PGHOST"

# Installed again: the users, directories and key files are as they were.
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall "$deb" >>"$dir/pkg/install.log" 2>&1 ||
	{ cat "$dir/pkg/install.log" >&2; bail "apt-get install --reinstall failed"; }
check "reinstalled: users, groups and key directories unchanged" test "$(made)" = "$before"
check "reinstalled: the key files are still there" test "$(cd "$kd" && echo *)" = \
	"pin-key.pem pin-pepper secrets.key"

# The pool as marketpay-fcgi@sandbox.socket and .service run it: systemd-socket-activate
# holds the socket (at ListenStream= under $dir, with the socket unit's owner and mode) and
# starts the service's ExecStart= with its Environment= as its User= and Group= (setpriv,
# which execs in place: LISTEN_PID stays right) at the first connection.
skey() { unit_key marketpay-fcgi@.socket "$1"; }
mapfile -t listens < <(skey ListenStream)
[ "${#listens[@]}" = 2 ] || bail "marketpay-fcgi@.socket: two ListenStream= expected"
sock=$dir${listens[0]} rsock=$dir${listens[1]}
install -d -m "$(skey DirectoryMode)" "$dir/run" "${sock%/*}"
install -d -o "$user" -g "$group" -m 0750 "$dir/run/marketpay/metrics" \
	"$dir/run/marketpay/metrics/$env"
echo "pool: $cmd (as $user:$group, ${unit_env[*]})"
# shellcheck disable=SC2086  # the unit's command line, split into words as systemd does
(exec setsid systemd-socket-activate -l "$sock" -l "$rsock" -- /usr/bin/setpriv --reuid="$user" \
	--regid="$group" --init-groups -- /usr/bin/env "${unit_env[@]}" $cmd) \
	</dev/null >"$dir/pool.log" 2>&1 &
echo $! >"$dir/holder.pid"
wait_for 10 test -S "$sock" || bail "systemd-socket-activate made no socket"
chown "$(skey SocketUser | grep . || echo root):$(skey SocketGroup | grep . || echo root)" \
	"$sock" "$rsock"
chmod "$(skey SocketMode)" "$sock" "$rsock"

# nginx: the installed server block, its listen lines, certificate, log and socket paths
# changed, nothing else; it includes the installed /etc/marketpay/nginx snippets, which
# include nginx's fastcgi_params from nginx's configuration directory (here, a copy).
mkdir -p "$dir/ssl" "$dir/nginx"
cp /etc/nginx/fastcgi_params "$dir/nginx/"
host=$env.pay.example.com
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$host" \
	-addext "subjectAltName=DNS:$host" -keyout "$dir/ssl/$env.key" -out "$dir/ssl/$env.crt" \
	2>/dev/null
sed -E -e "s|^(\s*)listen 443 ssl http2;|\1listen 127.0.0.1:$port ssl http2;|" \
	-e '/^\s*listen \[::\]:443/d' -e "s|/etc/ssl/marketpay/|$dir/ssl/|" \
	-e "s|/var/log/nginx/|$dir/nginx/|" -e "s|/run/marketpay/|$dir/run/marketpay/|" \
	"$ex/marketpay-$env.conf" >"$dir/nginx/site.conf"
check "the server block: one listen line, on the test's port" \
	test "$(grep -c '^\s*listen ' "$dir/nginx/site.conf")" = 1
# The zones and log format: the installed marketpay-limits.conf. Workers as www-data, as
# Debian's nginx.conf has them: the socket unit lets that group in.
printf 'events {}\nhttp {\n include /etc/nginx/mime.types;\n include %s;\n include %s;\n%s\n}\n' \
	"$ex/marketpay-limits.conf" "$dir/nginx/site.conf" \
	" client_body_temp_path $dir/nginx/body; fastcgi_temp_path $dir/nginx/fastcgi;" \
	>"$dir/nginx/nginx.conf"
/usr/sbin/nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log" \
	-g "user www-data; worker_processes 1; pid $dir/nginx/nginx.pid;" || bail "nginx did not start"

api() { # api PATH OUT [CURL ARGS...]: prints the status
	local path=$1 out=$2
	shift 2
	curl -sS --cacert "$dir/ssl/$env.crt" --resolve "$host:$port:127.0.0.1" -o "$out" \
		-w '%{http_code}' "https://$host:$port$path" "$@"
}
merchant=$(ctl merchant create --name 'Packaged shop')
key=$(ctl key create "$merchant")
code=$(api /api/v1/payment/create-session "$dir/session.json" -H "Authorization: API-KEY $key" \
	-H 'Content-Type: application/json' \
	-d '{"items":[{"id":"sku-1","name":"Tea","price":12.50}],"user_id":"u-1","email":"a@example.com"}')
check "create-session through the installed server block and pool: 200 (got $code)" [ "$code" = 200 ]
sid=$(json session_id <"$dir/session.json")
check "create-session: a session_id ($sid)" test -n "$sid"
url=$(json url <"$dir/session.json")
check "its url is the configured checkout_base_url's" test "${url%/checkout/*}" = "https://$host:$port"
code=$(api "/checkout/${url##*/checkout/}" "$dir/page.html")
check "its checkout page: 200 (got $code)" [ "$code" = 200 ]
check "its checkout page is HTML with the installed stylesheet" bash -c \
	"grep -q '<html' '$dir/page.html' && grep -q '/static/checkout.css' '$dir/page.html'"
code=$(api /static/checkout.css "$dir/page.css")
check "the installed stylesheet (got $code)" cmp -s "$dir/page.css" /usr/share/marketpay/static/checkout.css
# The server block's map: GET and HEAD to the second socket's READ_WORKERS, the rest to the
# first's. Each worker logs "worker ready (reads socket)" or "worker ready", then its requests.
reads=$(printf '%s\n' "${unit_env[@]}" | sed -n 's/^READ_WORKERS=//p')
pids_of() { sed -n "s|^[^ ]* [a-z]* pid=\([0-9]*\) [^ ]* $1.*|\1|p" "$dir/pool.log" | sort -u; }
rpids=$(pids_of 'worker ready (reads socket)')
check "the pool started READ_WORKERS=$reads workers on the reads socket" \
	test "$(grep -c . <<<"$rpids")" = "$reads"
check "the page (GET) was served by a worker of the reads socket" \
	test -n "$(comm -12 <(pids_of 'GET /checkout/') - <<<"$rpids")"
check "create-session (POST) was served by a worker of the other socket" \
	test -z "$(comm -12 <(pids_of 'POST /api/v1/payment/create-session') - <<<"$rpids")"
check "create-session was logged by the worker that served it" \
	test -n "$(pids_of 'POST /api/v1/payment/create-session')"
# systemd-socket-activate (Accept=no) became the pool: its process group is the pool's.
procs=$(pgrep -g "$(cat "$dir/holder.pid")" | xargs -r ps -o user:32=,comm= -p | sort | uniq -c)
echo "$procs" | sed 's/^ */processes: /'
check "the pool and its workers run as $user, and nothing else runs there" \
	test "$(awk '{ print $2, $3 }' <<<"$procs")" = "$user marketpay-fcgi"

# The installed units (each template's instance for this environment) as systemd reads them.
mapfile -t inst < <(cd "$units" && ls marketpay-*@.* | sed "s/@\./@$env./")
out=$(systemd-analyze verify --man=no "${inst[@]}" 2>&1) || true
[ -z "$out" ] || echo "$out" >&2
check "systemd-analyze verify ${inst[*]}: no complaint" test -z "$out"

# The purge: everything the package placed or made is gone.
stop_served
check "dpkg --purge marketpay" bash -c "dpkg --purge marketpay >'$dir/pkg/purge.log' 2>&1"
if installed; then not_ok "purged: still installed"; else ok "purged: not installed"; fi
for e in production sandbox; do
	check "purged: no user or group marketpay-$e" bash -c "! getent passwd marketpay-$e &&
		! getent group marketpay-$e"
done
check "purged: no /etc/marketpay" test ! -e /etc/marketpay
check "purged: no programs, units, /usr/share/marketpay or examples" bash -c "! ls -d \
	/usr/sbin/marketpay-* /usr/bin/marketpayctl $units/marketpay-* /usr/share/marketpay \
	/usr/share/doc/marketpay 2>/dev/null | grep -q ."
finish
