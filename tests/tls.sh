#!/usr/bin/env bash
# TLS smoke test: starts a stack (tests/stack.sh), then a second nginx of its own in front of
# the same FastCGI pool with the TLS settings of nginx/marketpay-production.conf and a
# certificate for 127.0.0.1 from a throwaway CA, plus a plain-HTTP server that redirects to
# HTTPS as production does. With certificate verification on (curl --cacert, never -k) it
# creates a session, opens and pays its checkout page with a wallet, makes a multi-vendor
# transfer, and checks HSTS, the 301 to https, that TLSv1.1 is refused and that a client
# without the CA refuses the certificate. Always stops its nginx and the stack.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-$srcdir/build}
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1
stack="$srcdir/tests/stack.sh"

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-tls.XXXXXX")
chmod 755 "$dir"
sdir="$dir/stack"
tdir="$dir/tls"
cleanup() {
	local code=$?
	if [ -f "$tdir/nginx.pid" ]; then
		kill -QUIT "$(cat "$tdir/nginx.pid")" 2>/dev/null || true
	fi
	"$stack" stop "$sdir" >/dev/null 2>&1 || true
	if [ "$code" != 0 ]; then
		echo "--- last lines of the TLS nginx error log ---" >&2
		tail -n 20 "$tdir/error.log" >&2 2>/dev/null || true
		echo "--- last lines of the worker log ---" >&2
		tail -n 20 "$sdir/fcgi.log" >&2 2>/dev/null || true
	fi
	rm -rf "$dir"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"

"$stack" start "$sdir" >/dev/null
# shellcheck disable=SC1091
. "$sdir/stack.env"
ctl() { "$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" "$@"; }

# --- A throwaway CA and a server certificate for IP 127.0.0.1 signed by it.
mkdir -p "$tdir/tmp"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=marketpay test CA" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
	-keyout "$tdir/ca.key" -out "$tdir/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 \
	-keyout "$tdir/server.key" -out "$tdir/server.csr" 2>/dev/null
printf '%s\n' subjectAltName=IP:127.0.0.1 basicConstraints=CA:FALSE \
	keyUsage=digitalSignature,keyEncipherment extendedKeyUsage=serverAuth >"$tdir/server.ext"
openssl x509 -req -in "$tdir/server.csr" -CA "$tdir/ca.crt" -CAkey "$tdir/ca.key" \
	-CAcreateserial -days 1 -sha256 -extfile "$tdir/server.ext" -out "$tdir/server.crt" 2>/dev/null

# --- nginx with the production TLS directives in front of the stack's pool.
cp /etc/nginx/fastcgi_params "$tdir/fastcgi_params"
cp "$srcdir/nginx/marketpay-fastcgi.conf" "$tdir/marketpay-fastcgi.conf"
prod="$srcdir/nginx/marketpay-production.conf"
# The TLS lines exactly as deployed (protocols, ciphers, HSTS, sessions).
tls_lines=$(grep -E '^\s*(ssl_protocols|ssl_ciphers|ssl_prefer_server_ciphers|ssl_session_tickets|add_header Strict-Transport-Security)\b' "$prod")
grep -q 'ssl_protocols TLSv1.2 TLSv1.3;' <<<"$tls_lines" || { echo "tls: production ssl_protocols changed" >&2; exit 1; }
grep -q 'Strict-Transport-Security' <<<"$tls_lines" || { echo "tls: production has no HSTS" >&2; exit 1; }
hport=$(free_port)
sport=$(free_port)
while [ "$sport" = "$hport" ]; do sport=$(free_port); done
cat >"$tdir/nginx.conf" <<CONF
worker_processes 1;
pid $tdir/nginx.pid;
error_log $tdir/error.log warn;
events { worker_connections 256; }
http {
    include /etc/nginx/mime.types;
    access_log $tdir/access.log;
    client_body_temp_path $tdir/tmp/body;
    fastcgi_temp_path $tdir/tmp/fastcgi;
    proxy_temp_path $tdir/tmp/proxy;
    uwsgi_temp_path $tdir/tmp/uwsgi;
    scgi_temp_path $tdir/tmp/scgi;
    server_tokens off;
    server {
        listen 127.0.0.1:$hport;
        return 301 https://127.0.0.1:$sport\$request_uri;
    }
    server {
        listen 127.0.0.1:$sport ssl;
        ssl_certificate     $tdir/server.crt;
        ssl_certificate_key $tdir/server.key;
$tls_lines
        ssl_session_cache shared:marketpay_tls_test:1m;
        client_max_body_size 1m;
        location /api/v1/ {
            include marketpay-fastcgi.conf;
            fastcgi_pass unix:$MARKETPAY_STACK_DIR/fcgi.sock;
        }
        location /checkout/ {
            include marketpay-fastcgi.conf;
            fastcgi_pass unix:$MARKETPAY_STACK_DIR/fcgi.sock;
        }
        location / {
            return 404;
        }
    }
}
CONF
nginx -t -q -p "$tdir" -c "$tdir/nginx.conf" -e "$tdir/error.log"
nginx -p "$tdir" -c "$tdir/nginx.conf" -e "$tdir/error.log"
base="https://127.0.0.1:$sport"
tcurl() { curl -sS --cacert "$tdir/ca.crt" --max-time 20 "$@"; }
end=$((SECONDS + 10))
until tcurl -o /dev/null "$base/api/v1/health" 2>/dev/null; do
	[ $SECONDS -lt $end ] || { echo "tls: nginx does not answer on $sport" >&2; exit 1; }
	sleep 0.1
done

# --- Set up: a merchant with a key, settlement on, transfer PIN 2468 and a funded
# settlement account (made before the payment, which would otherwise open it); a vendor;
# a funded customer wallet with PIN 1234.
merchant=$(ctl merchant create --name "TLS Shop")
key=$(ctl key create "$merchant")
ctl merchant settlement "$merchant" on >/dev/null
echo 2468 | ctl merchant pin "$merchant" >/dev/null
settle=$(ctl account create --kind merchant --merchant "$merchant")
ctl account deposit "$settle" 20 >/dev/null
vendor=$(ctl account create --kind vendor)
customer=$(ctl account create --kind customer)
ctl account deposit "$customer" 50 >/dev/null
echo 1234 | ctl account pin "$customer" >/dev/null

# --- create-session over HTTPS.
code=$(tcurl -o "$dir/session.json" -D "$dir/session.hdr" -w '%{http_code}' \
	"$base/api/v1/payment/create-session" \
	-H "Authorization: API-KEY $key" -H 'Content-Type: application/json' \
	-d '{"items":[{"id":"sku-1","name":"Green tea","price":12.50}],"user_id":"order-tls-1","email":"buyer@example.com"}') || code=000
check "create-session over HTTPS answers 200 (got $code)" [ "$code" = 200 ]
check "HSTS header on the API reply" grep -qi '^Strict-Transport-Security: max-age=63072000' "$dir/session.hdr"
url=$(json url <"$dir/session.json" 2>/dev/null || true)
check "create-session gives a checkout url ($url)" grep -q '/checkout/' <<<"$url"

# --- The checkout page, its url rewritten to the HTTPS port.
path="/checkout/${url##*/checkout/}"
code=$(tcurl -o "$dir/checkout.html" -D "$dir/checkout.hdr" -w '%{http_code}' "$base$path") || code=000
check "checkout page over HTTPS answers 200 (got $code)" [ "$code" = 200 ]
check "checkout page is HTML" grep -qi '^Content-Type: text/html' "$dir/checkout.hdr"
check "HSTS header on the checkout page" grep -qi '^Strict-Transport-Security:' "$dir/checkout.hdr"
csrf=$(grep -o 'name="csrf" value="[0-9a-f]*"' "$dir/checkout.html" | head -n 1 | sed 's/.*value="\([0-9a-f]*\)"/\1/' || true)
check "checkout page has a CSRF token" [ ${#csrf} = 64 ]

# --- Pay it with the wallet.
code=$(tcurl -o "$dir/paid.html" -w '%{http_code}' "$base$path" \
	--data-urlencode "csrf=$csrf" -d method=wallet -d action=pay \
	--data-urlencode "account_number=$customer" -d pin=1234) || code=000
paid=no
if [ "$code" = 303 ] || { [ "$code" = 200 ] && grep -q 'Payment received' "$dir/paid.html"; }; then paid=yes; fi
check "wallet payment over HTTPS (got $code)" [ "$paid" = yes ]
status=$(tcurl "$base/api/v1/payment/sessions/$(json session_id <"$dir/session.json")" \
	-H "Authorization: API-KEY $key" | json status 2>/dev/null || true)
check "the session is paid (status $status)" [ "$status" = paid ]

# --- A multi-vendor transfer over HTTPS.
tcurl "$base/api/v1/payment/pin-public-key" -H "Authorization: API-KEY $key" |
	json public_key >"$dir/pub.pem" 2>/dev/null || true
check "PIN public key over HTTPS" grep -q 'BEGIN PUBLIC KEY' "$dir/pub.pem"
# The PIN block of marketpay-api(7): PIN:UNIX_TIME:NONCE, a fresh nonce for each request.
pin=$(printf %s:%s:%s 2468 "$(date +%s)" "$(openssl rand -hex 16)" |
	openssl pkeyutl -encrypt -pubin -inkey "$dir/pub.pem" \
	-pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256 -pkeyopt rsa_mgf1_md:sha256 |
	base64 -w0) || pin=""
code=$(tcurl -o "$dir/transfer.json" -w '%{http_code}' \
	"$base/api/v1/payment/send-money-MultiVendor" \
	-H "Authorization: API-KEY $key" -H 'Content-Type: application/json' \
	-H 'Idempotency-Key: tls-payout-1' \
	-d "{\"pin\":\"$pin\",\"vendors\":[{\"account_number\":\"$vendor\",\"amount\":5.00}]}") || code=000
success=$(json success <"$dir/transfer.json" 2>/dev/null || true)
check "multi-vendor transfer over HTTPS answers 200 success true (got $code, $success)" \
	[ "$code:$success" = 200:true ]
check "the vendor received 5.00" grep -q '5\.00' <<<"$(ctl account show "$vendor")"

# --- Plain HTTP answers 301 to https.
code=$(curl -sS -o /dev/null -D "$dir/redirect.hdr" -w '%{http_code}' --max-time 10 \
	"http://127.0.0.1:$hport/checkout/x?y=1") || code=000
check "plain HTTP answers 301 (got $code)" [ "$code" = 301 ]
check "the redirect goes to https" grep -qi "^Location: https://127.0.0.1:$sport/checkout/x?y=1" "$dir/redirect.hdr"

# --- Only TLSv1.2 and TLSv1.3.
s_client_ok() { openssl s_client -connect "127.0.0.1:$sport" -CAfile "$tdir/ca.crt" "$@" </dev/null >/dev/null 2>&1; }
check "a TLSv1.2 handshake succeeds" s_client_ok -tls1_2
check "a TLSv1.3 handshake succeeds" s_client_ok -tls1_3
# The client offers TLSv1.1 at security level 0, so the refusal is the server's: a handshake
# that fails with a TLS alert from nginx, not one the client never sent.
tls11_refused_openssl() {
	local out
	if out=$(openssl s_client -connect "127.0.0.1:$sport" -CAfile "$tdir/ca.crt" -tls1_1 \
		-cipher 'DEFAULT@SECLEVEL=0' </dev/null 2>&1); then
		return 1
	fi
	grep -Eqi 'alert (protocol version|handshake failure)' <<<"$out"
}
tls11_refused_curl() {
	! curl -sS -o /dev/null --max-time 10 --cacert "$tdir/ca.crt" --tlsv1.0 --tls-max 1.1 \
		"$base/api/v1/health" 2>/dev/null
}
check "a TLSv1.1 handshake is refused (openssl s_client -tls1_1)" tls11_refused_openssl
check "a TLSv1.1 handshake is refused (curl --tls-max 1.1)" tls11_refused_curl

# --- Verification is real: without the CA the certificate is refused (curl exit 60).
rc=0
curl -sS -o /dev/null --max-time 10 "$base/api/v1/health" 2>/dev/null || rc=$?
check "curl without --cacert refuses the certificate (exit $rc)" [ "$rc" = 60 ]
rc=0
curl -sS -o /dev/null --max-time 10 --cacert "$tdir/ca.crt" \
	"https://localhost:$sport/api/v1/health" 2>/dev/null || rc=$?
check "a name the certificate does not carry is refused (exit $rc)" [ "$rc" = 60 ]

finish
