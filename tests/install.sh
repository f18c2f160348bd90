#!/usr/bin/env bash
# The installed tree: configures the sources with a prefix and sysconfdir of its own (as
# `--prefix=/usr --sysconfdir=/etc` would, under a temporary directory), runs `make install`,
# checks that everything a sysadmin needs is there, then runs a stack from the installed
# programs alone: `marketpayctl db migrate` with no sql_dir in the config finds the installed
# migrations, nginx serves the installed page assets, and a session is created and its
# checkout page shown. Also checks `--version`, `marketpay-fcgi -v` and `log_level = debug`.
# Always stops what it started.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"

if [ -f "$srcdir/config.status" ]; then
	echo "install.sh: the source tree is configured in place; build out of tree" \
		"(dev/test does: mkdir build && cd build && ../configure)" >&2
	exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-install.XXXXXX")
chmod 755 "$dir"
root="$dir/root"
cleanup() {
	local code=$?
	"$srcdir/tests/stack.sh" stop "$dir/stack" >/dev/null 2>&1 || true
	if [ "$code" != 0 ]; then
		tail -n 20 "$dir/build.log" >&2 2>/dev/null || true
		tail -n 20 "$dir/stack/fcgi.log" >&2 2>/dev/null || true
	fi
	rm -rf "$dir"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A build of its own: the flags of an enclosing `make check` are not this build's.
mkdir -p "$dir/build"
(
	cd "$dir/build"
	unset MAKEFLAGS MFLAGS MAKELEVEL
	"$srcdir/configure" -q --prefix="$root/usr" --sysconfdir="$root/etc" &&
		make -s -j2 && make -s install
) >"$dir/build.log" 2>&1 || { echo "install.sh: build or install failed" >&2; exit 1; }
ok "configure --prefix --sysconfdir, make, make install"

usr="$root/usr"
share="$usr/share/marketpay"
for f in bin/marketpayctl sbin/marketpay-fcgi sbin/marketpay-webhookd; do
	check "installed: $f" test -x "$usr/$f"
done
for f in man1/marketpayctl.1 man5/marketpay.conf.5 man7/marketpay-api.7 \
	man7/marketpay-ledger.7 man8/marketpay-fcgi.8 man8/marketpay-webhookd.8; do
	check "installed man page: $f" test -s "$usr/share/man/$f"
done
for f in "$srcdir"/sql/[0-9][0-9][0-9]_*.sql; do
	check "installed migration: ${f##*/}" cmp -s "$f" "$share/sql/${f##*/}"
done
# Every language of po/LINGUAS, and at least the two shipped.
langs=$(sed -e 's/#.*//' "$srcdir/po/LINGUAS" | xargs)
check "po/LINGUAS names the shipped catalogs ($langs)" [ "$(wc -w <<<"$langs")" -ge 2 ]
for l in $langs; do
	check "installed catalog: share/locale/$l/LC_MESSAGES/marketpay.mo" \
		test -s "$usr/share/locale/$l/LC_MESSAGES/marketpay.mo"
done
check "installed page assets: static/checkout.css" cmp -s "$srcdir/static/checkout.css" \
	"$share/static/checkout.css"
for f in marketpay.conf.example marketpay-production.conf marketpay-sandbox.conf \
	marketpay-fastcgi.conf marketpay-limits.conf marketpay-errors.conf marketpay-port80.conf \
	marketpay-apache.conf marketpay-fcgi@.service \
	marketpay-webhookd@.service marketpay-purge@.service marketpay-purge@.timer; do
	check "installed example: $f" test -s "$usr/share/doc/marketpay/examples/$f"
done

# --version and -V: "<program> <version>" on stdout, exit 0, no configuration read.
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$dir/build/Makefile")
for f in bin/marketpayctl sbin/marketpay-fcgi sbin/marketpay-webhookd; do
	for opt in --version -V; do
		check "${f#*/} $opt prints '${f#*/} $version' and exits 0" bash -c \
			"test \"\$(MARKETPAY_CONFIG=/nonexistent '$usr/$f' $opt)\" = '${f#*/} $version'"
	done
done

# -v raises the log level by one step: the configuration line is a debug line.
printf 'database = host=%s/nowhere\nlog_file = stderr\nlog_level = info\n' "$dir" >"$dir/v.conf"
"$usr/sbin/marketpay-fcgi" -c "$dir/v.conf" </dev/null >"$dir/plain.out" 2>&1 || true
"$usr/sbin/marketpay-fcgi" -v -c "$dir/v.conf" </dev/null >"$dir/v.out" 2>&1 || true
check "log_level = info: no debug lines" bash -c "! grep -q ' debug ' '$dir/plain.out'"
check "-v: the configuration is logged at debug" grep -q " debug .*config $dir/v.conf: " "$dir/v.out"
check "not started by spawn-fcgi: says how to start it" grep -q 'start it with spawn-fcgi' \
	"$dir/plain.out"

# A stack of the installed programs: no sql_dir line, so the built-in default is used.
mkdir -p "$dir/bin"
ln -s "$usr/bin/marketpayctl" "$usr/sbin/marketpay-fcgi" "$usr/sbin/marketpay-webhookd" "$dir/bin/"
# MP_PG_ROLES: the owner role made below, which we log in as too (peer authentication).
MP_SRCDIR="$srcdir" MP_BUILDDIR="$dir/bin" MP_SQL_DIR='' MP_LOCALE_DIR='' MP_STATIC_DIR="$share/static" \
	MP_FAST_PG=1 MP_WORKERS=2 MP_CONF_EXTRA="log_level = debug" MP_PG_ROLES=mp_admin \
	"$srcdir/tests/stack.sh" start "$dir/stack" >/dev/null
# shellcheck disable=SC1091
. "$dir/stack/stack.env"
ctl() { "$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" "$@"; }

check "the config has no sql_dir" bash -c "! grep -q '^sql_dir' '$MARKETPAY_CONFIG'"
n=$(ls "$share"/sql/*.sql | wc -l)
applied=$(psql -qAtc 'SELECT count(*) FROM schema_migrations')
check "db migrate applied the $n installed migrations (recorded: $applied)" [ "$applied" = "$n" ]
check "db migrate again has nothing to do" test -z "$(ctl db migrate)"

# The README's database steps: an owner that may create roles but is no superuser runs the
# migrations and db roles; the config names no user, PGUSER does.
psql -qc 'CREATE ROLE mp_admin LOGIN CREATEROLE'
createdb -O mp_admin marketpay_production
sed -e 's/^database = .*/database = host='"${PGHOST//\//\\/}"' dbname=marketpay_production/' \
	-e 's/^environment = .*/environment = production/' "$MARKETPAY_CONFIG" >"$dir/production.conf"
check "db migrate as a non-superuser owner (PGUSER=mp_admin)" \
	env PGUSER=mp_admin "$MARKETPAYCTL" -c "$dir/production.conf" db migrate
check "db roles as that owner" env PGUSER=mp_admin "$MARKETPAYCTL" -c "$dir/production.conf" \
	db roles --app mp_worker --webhookd mp_webhookd --readonly mp_dba
check "the production schema is owned by mp_admin" test "$(psql -d marketpay_production -qAtc \
	"SELECT tableowner FROM pg_tables WHERE tablename = 'ledger_entries'")" = mp_admin
# Production has no default currency: the config sets none, so --currency is required.
check "production: merchant create without --currency is refused" bash -c "! PGUSER=mp_admin \
	'$MARKETPAYCTL' -c '$dir/production.conf' merchant create --name Live 2>'$dir/cur.err' &&
	grep -q 'production has no default currency' '$dir/cur.err' &&
	test -z \"\$(psql -d marketpay_production -qAtc 'SELECT id FROM merchants')\""
check "production: account create --kind customer without --currency is refused" bash -c "! \
	PGUSER=mp_admin '$MARKETPAYCTL' -c '$dir/production.conf' account create --kind customer \
	2>/dev/null"
check "a production key is made there (mp_live_)" bash -c "PGUSER=mp_admin '$MARKETPAYCTL' \
	-c '$dir/production.conf' key create \$(PGUSER=mp_admin '$MARKETPAYCTL' -c \
	'$dir/production.conf' merchant create --name Live --currency USD) | grep -q '^mp_live_'"
check "the production merchant has the currency it was given" test "$(psql -d \
	marketpay_production -qAtc 'SELECT currency FROM merchants')" = USD

merchant=$(ctl merchant create --name 'Installed shop')
key=$(ctl key create "$merchant")
create_session() { # create_session OUT BODY [curl args...]: the status
	local out=$1 body=$2
	shift 2
	curl -sS -o "$out" -w '%{http_code}' "$MARKETPAY_BASE_URL/api/v1/payment/create-session" \
		-H "Authorization: API-KEY $key" -H 'Content-Type: application/json' -d "$body" "$@"
}
code=$(create_session "$dir/session.json" \
	'{"items":[{"id":"sku-1","name":"Tea","price":12.50}],"user_id":"u-1","email":"a@example.com"}')
check "create-session from the installed worker answers 200 (got $code)" [ "$code" = 200 ]
url=$(json url <"$dir/session.json")
code=$(curl -sS -o "$dir/page.html" -w '%{http_code}' "$MARKETPAY_BASE_URL/checkout/${url##*/checkout/}")
check "its checkout page answers 200 (got $code)" [ "$code" = 200 ]
check "the page links the stylesheet" grep -q '/static/checkout.css' "$dir/page.html"
# The built-in locale_dir finds the installed catalogs; no ps locale is generated here.
curl -sS -o "$dir/page-ps.html" -H 'Accept-Language: ps-AF, ps;q=0.9, en;q=0.5' \
	"$MARKETPAY_BASE_URL/checkout/${url##*/checkout/}"
check "Accept-Language: ps gets the page in Pashto from the installed catalog" bash -c \
	"grep -q '<html lang=\"ps\" dir=\"rtl\">' '$dir/page-ps.html' &&
	grep -qF 'لغوه کړئ او هټۍ ته ستانه شئ' '$dir/page-ps.html'"
code=$(curl -sS -o "$dir/page.css" -w '%{http_code}' "$MARKETPAY_BASE_URL/static/checkout.css")
check "nginx serves the installed stylesheet (got $code)" cmp -s "$dir/page.css" \
	"$share/static/checkout.css"

# log_level = debug: statement names and timings, never their parameters; an
# Idempotency-Key's pipelines as one line each.
code=$(create_session /dev/null '{"items":[{"id":"sku-1","name":"Tea","price":1}]}' \
	-H 'Idempotency-Key: install-keyed-1')
check "a keyed create-session answers 200 (got $code)" [ "$code" = 200 ]
check "log_level = debug logs the statements" grep -q ' debug .* sql [a-z_]* PGRES_' \
	"$dir/stack/fcgi.log"
check "log_level = debug logs a keyed request's pipelines" bash -c \
	"grep -q ' debug .* sql pipeline of 4, BEGIN to idem_get_key: ok ms=' '$dir/stack/fcgi.log' &&
	grep -q ' debug .* sql pipeline of 2, idem_put to COMMIT: ok ms=' '$dir/stack/fcgi.log'"
check "the debug log holds no Idempotency-Key" bash -c "! grep -qF 'install-keyed-1' '$dir/stack/fcgi.log'"
check "the debug log holds no API key" bash -c "! grep -qF '$key' '$dir/stack/fcgi.log'"
check "the debug log holds no customer email" \
	bash -c "! grep -qF 'a@example.com' '$dir/stack/fcgi.log'"

finish
