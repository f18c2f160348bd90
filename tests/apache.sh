#!/usr/bin/env bash
# The shipped Apache configuration (apache/marketpay-apache.conf) must be valid and must work:
#  1. the whole file, with a throwaway self-signed certificate, passes `apache2 -t`, has
#     the HTTP to HTTPS redirects, and HSTS on production only;
#  2. its MarketpayApp macro, the application part both virtual hosts use, serves a test
#     stack (tests/stack.sh) from an Apache instance of its own on a free loopback port,
#     over plain HTTP, and smoke cases go through it with curl.
# Apache and the stack are always stopped, also on failure or interruption.
# Environment: top_srcdir, top_builddir (as make check sets them; the build defaults to
# build/, or MP_BUILDDIR), MP_WORKERS (default 2), KEEP=1 keeps the temporary directory.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-${MP_BUILDDIR:-$srcdir/build}}
builddir=$(cd "$builddir" && pwd)
apache=/usr/sbin/apache2
conf_src="$srcdir/apache/marketpay-apache.conf"

die() { echo "apache.sh: $*" >&2; exit 1; }

if [ ! -x "$apache" ]; then
	[ "$(id -u)" = 0 ] || die "$apache is missing: install it with: sudo apt-get install apache2"
	echo "installing apache2"
	# The package must not start its own Apache on port 80: policy-rc.d says no.
	made_policy=0
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		made_policy=1
	fi
	rc=0
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends apache2 \
		>/dev/null || rc=$?
	[ $made_policy = 1 ] && rm -f /usr/sbin/policy-rc.d
	{ [ $rc = 0 ] && [ -x "$apache" ]; } || die "could not install apache2"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-apache.XXXXXX")
# PostgreSQL (run as postgres) and Apache's children (nobody) must reach into it.
chmod 755 "$dir"
stack="$dir/stack"
adir="$dir/apache"
mkdir -p "$adir/run" "$adir/check"
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=${MP_WORKERS:-2}
# The application's own body limit (max_body_bytes, 256 KiB by default) above Apache's
# LimitRequestBody (1 MiB), so that the 413 case shows Apache's backstop at work.
export MP_CONF_EXTRA="max_body_bytes = 4194304"

# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
fail() { not_ok "$@"; }
apache_started=0

# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
	local st=$?
	if [ $apache_started = 1 ] && [ -f "$adir/apache.pid" ]; then
		local pid
		pid=$(cat "$adir/apache.pid")
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	"$srcdir/tests/stack.sh" stop "$stack" >/dev/null 2>&1 || true
	if [ $st != 0 ] || [ $failed != 0 ]; then
		echo "--- last lines of the Apache error log ---" >&2
		tail -n 30 "$adir/error.log" >&2 2>/dev/null || true
		echo "--- last lines of the worker log ---" >&2
		tail -n 30 "$stack/fcgi.log" >&2 2>/dev/null || true
	fi
	[ -n "${KEEP:-}" ] || rm -rf "$dir"
	# A run that stopped before its end (die, interrupt) counts as one failure.
	[ $st = 0 ] || [ $failed != 0 ] || failed=1
	finish || exit 1
}
trap cleanup EXIT
trap 'exit 130' INT TERM

modules() { # LoadModule lines for the named modules (unixd, say, may be built in)
	local m
	for m in "$@"; do
		[ -f "/usr/lib/apache2/modules/mod_$m.so" ] || continue
		echo "LoadModule ${m}_module /usr/lib/apache2/modules/mod_$m.so"
	done
}

# ---- 1. the shipped file as a whole --------------------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-keyout "$adir/check/test.key" -out "$adir/check/test.crt" 2>/dev/null
sed -e "s|/etc/ssl/marketpay/[a-z]*\.crt|$adir/check/test.crt|" \
	-e "s|/etc/ssl/marketpay/[a-z]*\.key|$adir/check/test.key|" \
	"$conf_src" >"$adir/check/marketpay.conf"
{
	echo "ServerRoot /etc/apache2"
	echo "Define APACHE_LOG_DIR $adir/check"
	modules mpm_event authz_core unixd mime dir alias rewrite headers expires macro \
		reqtimeout socache_shmcb ssl http2 proxy proxy_fcgi
	echo "PidFile $adir/check/apache.pid"
	echo "ErrorLog $adir/check/error.log"
	echo "DefaultRuntimeDir $adir/check"
	echo "Listen 127.0.0.1:80"
	echo "Listen 127.0.0.1:443"
	echo "Include $adir/check/marketpay.conf"
} >"$adir/check/httpd.conf"
if out=$("$apache" -t -f "$adir/check/httpd.conf" 2>&1); then
	ok "apache/marketpay-apache.conf passes apache2 -t"
else
	fail "apache/marketpay-apache.conf passes apache2 -t"
	echo "$out" >&2
fi
n=$(grep -c '^ *Redirect permanent "/" "https://' "$conf_src" || true)
if [ "$n" = 2 ]; then
	ok "HTTP to HTTPS redirect in both port-80 hosts"
else
	fail "HTTP to HTTPS redirect in both port-80 hosts"
fi
n=$(grep -c '^ *Header always set Strict-Transport-Security' "$conf_src" || true)
hsts_host=$(awk '/^<VirtualHost/ { host = "" } /ServerName/ { host = $2 }
	/Strict-Transport-Security/ { print host }' "$conf_src")
if [ "$n" = 1 ] && [ "$hsts_host" = pay.example.com ]; then
	ok "HSTS on production only"
else
	fail "HSTS on production only"
fi

# ---- 2. the macro in front of a real stack -------------------------------------------------
"$srcdir/tests/stack.sh" start "$stack" >/dev/null
# shellcheck disable=SC1091
. "$stack/stack.env"

port=$(free_port)
base="http://127.0.0.1:$port"
sed -n '/^<Macro MarketpayApp /,/^<\/Macro>/p' "$conf_src" >"$adir/macro.conf"
grep -q '^</Macro>' "$adir/macro.conf" || die "no MarketpayApp macro in $conf_src"
{
	echo "ServerRoot /etc/apache2"
	echo "ServerName 127.0.0.1"
	modules mpm_event authz_core unixd mime dir alias rewrite expires macro reqtimeout \
		proxy proxy_fcgi
	[ "$(id -u)" = 0 ] && printf 'User nobody\nGroup nogroup\n'
	echo "PidFile $adir/apache.pid"
	echo "ErrorLog $adir/error.log"
	echo "LogLevel warn"
	echo "DefaultRuntimeDir $adir/run"
	echo "TypesConfig /etc/mime.types"
	echo "StartServers 1"
	echo "Listen 127.0.0.1:$port"
	echo "Include $adir/macro.conf"
	echo "<VirtualHost 127.0.0.1:$port>"
	echo "    ServerName 127.0.0.1"
	echo "    Use MarketpayApp $stack/fcgi.sock $srcdir/static"
	echo "</VirtualHost>"
} >"$adir/httpd.conf"
"$apache" -f "$adir/httpd.conf" -k start || die "Apache did not start"
apache_started=1
up=0
for _ in $(seq 1 100); do
	if curl -fsS -o /dev/null "$base/api/v1/health" 2>/dev/null; then up=1; break; fi
	sleep 0.1
done
[ $up = 1 ] || die "Apache does not answer on port $port"
ok "Apache answers /api/v1/health through the pool"

merchant=$("$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" merchant create --name "Apache Shop")
key=$("$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" key create "$merchant")
[ -n "$key" ] || die "no API key"

# req NAME METHOD PATH [curl args...]: sets code, body, headers
req() {
	local method=$1 path=$2; shift 2
	: >"$adir/body"; : >"$adir/headers"
	code=$(curl -sS -o "$adir/body" -D "$adir/headers" -w '%{http_code}' -X "$method" \
		"$@" "$base$path") || code=000
	body=$(cat "$adir/body")
	headers=$(tr -d '\r' <"$adir/headers")
}
json() { # json FIELD: a top-level field of $body
	python3 -c 'import json,sys; v=json.loads(sys.argv[1]).get(sys.argv[2]); print("" if v is None else v)' \
		"$body" "$1" 2>/dev/null || true
}
has() { grep -qF -- "$2" <<<"$1"; }

session_body='{"items":[{"id":"sku-1","name":"Apache Green Tea","price":12.50},
  {"id":"sku-2","name":"Cup","price":3}],"user_id":"order-ap-1","email":"buyer@example.com",
  "redirect_success_url":"https://shop.example/thanks"}'

req POST /api/v1/payment/create-session -H "Authorization: API-KEY $key" \
	-H 'Content-Type: application/json' -H 'Idempotency-Key: apache-order-1' \
	--data-binary "$session_body"
sid=$(json session_id)
url=$(json url)
if [ "$code" = 200 ] && [ "$(json success)" = True ] && [ -n "$sid" ] &&
	[ "$url" = "$MARKETPAY_BASE_URL/checkout/$sid" ]; then
	ok "create-session with the key: 200, url and session_id"
else
	fail "create-session with the key: 200, url and session_id"
fi

req POST /api/v1/payment/create-session -H "Authorization: API-KEY $key" \
	-H 'Content-Type: application/json' -H 'Idempotency-Key: apache-order-1' \
	--data-binary "$session_body"
if [ "$code" = 200 ] && [ "$(json session_id)" = "$sid" ]; then
	ok "Idempotency-Key is passed: the replay is the same session"
else
	fail "Idempotency-Key is passed: the replay is the same session"
fi
if has "$headers" "Idempotent-Replayed: true"; then
	ok "the replay says Idempotent-Replayed: true"
else
	fail "the replay says Idempotent-Replayed: true"
fi

req POST /api/v1/payment/create-session \
	-H 'Content-Type: application/json' --data-binary "$session_body"
if [ "$code" = 401 ] && [ "$(json detail)" = "Invalid or missing API key." ]; then
	ok "create-session without a key: 401"
else
	fail "create-session without a key: 401"
fi

req POST /api/v1/payment/create-session -H "Authorization: API-KEY mp_test_wrong" \
	-H 'Content-Type: application/json' --data-binary "$session_body"
if [ "$code" = 401 ]; then
	ok "create-session with a wrong key: 401"
else
	fail "create-session with a wrong key: 401"
fi

req POST /api/v1/payment/create-session -H "Authorization: API-KEY $key" \
	-H 'Content-Type: application/json' \
	--data-binary '{"items":[{"id":"a","name":"A","price":1.005}],"user_id":"u1","email":"b@example.com"}'
if [ "$code" = 400 ] && [ "$(json success)" = False ] &&
	[ "$(json message)" = "items[0].price must have at most two decimal places" ]; then
	ok "validation error: 400 naming the field and the rule"
else
	fail "validation error: 400 naming the field and the rule"
fi

req GET "/api/v1/payment/sessions/$sid?x=1" -H "Authorization: API-KEY $key"
if [ "$code" = 200 ] && [ "$(json status)" = open ]; then
	ok "GET the session through the API (path and query string)"
else
	fail "GET the session through the API (path and query string)"
fi

req GET "/checkout/$sid"
ctype=$(sed -n 's/^[Cc]ontent-[Tt]ype: *//p' <<<"$headers" | head -1)
if [ "$code" = 200 ] && [ "${ctype%%;*}" = text/html ] && has "$body" "Apache Green Tea"; then
	ok "checkout page: 200 HTML with the item name"
else
	fail "checkout page: 200 HTML with the item name"
fi
csrf=$(grep -o 'name="csrf" value="[0-9a-f]*"' <<<"$body" | head -1 | sed 's/.*value="\([0-9a-f]*\)"/\1/' || true)
if [ ${#csrf} = 64 ]; then
	ok "checkout page carries a CSRF token"
else
	fail "checkout page carries a CSRF token"
fi

req POST "/checkout/$sid" -H 'Content-Type: application/x-www-form-urlencoded' \
	--data-binary "csrf=bad&action=cancel"
if [ "$code" = 403 ]; then
	ok "cancel with a bad CSRF token: 403"
else
	fail "cancel with a bad CSRF token: 403"
fi

req POST "/checkout/$sid" -H 'Content-Type: application/x-www-form-urlencoded' \
	--data-binary "csrf=$csrf&action=cancel"
if [ "$code" = 303 ] || [ "$code" = 200 ]; then
	ok "cancel form POST: 303 or 200"
else
	fail "cancel form POST: 303 or 200"
fi
status=$(psql -qAtc "select status from payment_sessions where id='$sid'" 2>/dev/null || true)
if [ "$status" = canceled ]; then
	ok "the session is canceled in the database"
else
	fail "the session is canceled in the database"
fi

req GET /static/checkout.css
if [ "$code" = 200 ] && [ -n "$body" ]; then
	ok "static stylesheet through the Alias: 200"
else
	fail "static stylesheet through the Alias: 200"
fi

req GET /elsewhere
if [ "$code" = 404 ]; then
	ok "other paths: 404"
else
	fail "other paths: 404"
fi

head -c 1100000 /dev/zero | tr '\0' a >"$adir/big"
req POST /api/v1/payment/create-session -H "Authorization: API-KEY $key" \
	-H 'Content-Type: application/json' --data-binary @"$adir/big"
# Apache's own HTML 413 (the application's would be JSON): LimitRequestBody is in force.
if [ "$code" = 413 ] && has "$body" "Request Entity Too Large"; then
	ok "body over LimitRequestBody: 413 from Apache"
else
	fail "body over LimitRequestBody: 413 from Apache"
fi

# The EXIT trap stops everything and prints the summary line; it fails on any failure.
