#!/usr/bin/env bash
# The shipped nginx files must be valid nginx and deployable one environment at a time:
# each TLS server block is checked with `nginx -t` beside marketpay-port80.conf, the zones
# and log format of marketpay-limits.conf and marketpay-errors.conf, with a throwaway
# self-signed certificate and the paths pointed into a temporary directory. With only one
# environment's certificate present, that environment alone passes `nginx -t` (and adding
# the other, whose certificate is missing, fails: why they are enabled one at a time).
# Then a real nginx serves marketpay-port80.conf on a loopback port: certbot's webroot
# challenge files are served, not redirected, everything else is redirected to HTTPS, and
# the Server header names no version. One result per check, then "N passed, N failed"
# (tests/lib.sh).
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-nginx.XXXXXX")
chmod 755 "$dir"
cleanup() {
	[ -f "$dir/run/nginx.pid" ] && kill -QUIT "$(cat "$dir/run/nginx.pid")" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-keyout "$dir/test.key" -out "$dir/test.crt" 2>/dev/null || bail "a test certificate (openssl)"
cp /etc/nginx/fastcgi_params "$dir/fastcgi_params" || bail "nginx's fastcgi_params"
cp "$srcdir/nginx/marketpay-fastcgi.conf" "$srcdir/nginx/marketpay-errors.conf" "$dir/"
mkdir -p "$dir/acme/.well-known/acme-challenge" "$dir/log" "$dir/tmp"

# The shipped files with their paths pointed into $dir; the certificate of ENV is
# $dir/ENV.crt and .key, present only when a check copies the test certificate there.
for f in port80 production sandbox metrics; do
	sed -e "s|/etc/ssl/marketpay/|$dir/|" \
		-e "s|/etc/marketpay/nginx/|$dir/|" \
		-e "s|/var/log/nginx/|$dir/log/|" \
		-e "s|/var/www/marketpay-acme|$dir/acme|" \
		"$srcdir/nginx/marketpay-$f.conf" >"$dir/$f.conf"
done

# nginx_t FILE... : nginx -t of an nginx with the zones file and these server files
# enabled (as linked into sites-enabled); otherwise shows what nginx said.
nginx_t() {
	local f out
	{
		echo "pid $dir/nginx.pid; error_log $dir/error.log; events {}"
		echo "http { client_body_temp_path $dir/tmp; include $srcdir/nginx/marketpay-limits.conf;"
		for f in "$@"; do echo "include $dir/$f.conf;"; done
		echo "}"
	} >"$dir/nginx-t.conf"
	out=$(nginx -t -q -p "$dir" -c "$dir/nginx-t.conf" -e "$dir/error.log" 2>&1) && return 0
	echo "$out" >&2
	return 1
}
# nginx_t_fails FILE... : nginx -t of these refuses them.
nginx_t_fails() { ! nginx_t "$@" 2>/dev/null; }
# no_port80 ENV: the server file of ENV has no port-80 block of its own.
no_port80() { ! grep -Eq 'listen (\[::\]:)?80;' "$srcdir/nginx/marketpay-$1.conf"; }
# certs ENV... : exactly these environments' certificates exist.
certs() {
	rm -f "$dir"/production.crt "$dir"/production.key "$dir"/sandbox.crt "$dir"/sandbox.key
	local env
	for env in "$@"; do cp "$dir/test.crt" "$dir/$env.crt"; cp "$dir/test.key" "$dir/$env.key"; done
}

certs
check "nginx -t: marketpay-port80.conf needs no certificate" nginx_t port80
check "nginx -t: marketpay-metrics.conf needs no certificate, beside port 80" \
	nginx_t port80 metrics
for env in production sandbox; do
	other=sandbox
	[ "$env" = sandbox ] && other=production
	certs "$env"
	check "nginx -t: only the $env certificate present, $env enabled" nginx_t port80 "$env"
	check "nginx -t: $other enabled without its certificate fails (negative control)" \
		nginx_t_fails port80 "$env" "$other"
	check "$env: no port-80 block of its own (marketpay-port80.conf is)" \
		no_port80 "$env"
	check "$env: server_tokens off" grep -q '^\s*server_tokens off;' "$srcdir/nginx/marketpay-$env.conf"
	# One write a second at most, not one a request (bench/README.md, "nginx's access log").
	check "$env: the access log is written in batches (buffer=, flush=)" grep -Eq \
		'^\s*access_log /var/log/nginx/marketpay-'"$env"'\.access\.log marketpay buffer=[0-9]+k flush=[0-9]+s;' \
		"$srcdir/nginx/marketpay-$env.conf"
done
certs production sandbox
check "nginx -t: both environments with their certificates" nginx_t port80 production sandbox
check "production: HSTS" grep -q 'Strict-Transport-Security' "$srcdir/nginx/marketpay-production.conf"

# --- marketpay-port80.conf served for real on a loopback port.
port=$(free_port)
mkdir -p "$dir/run"
sed -e "s|listen 80;|listen 127.0.0.1:$port;|" -e '/listen \[::\]:80;/d' "$dir/port80.conf" >"$dir/run/port80.conf"
cat >"$dir/run/nginx.conf" <<CONF
pid $dir/run/nginx.pid;
error_log $dir/run/error.log;
events { worker_connections 64; }
http {
    include /etc/nginx/mime.types;
    access_log off;
    client_body_temp_path $dir/tmp;
    include $dir/run/port80.conf;
}
CONF
nginx -p "$dir/run" -c "$dir/run/nginx.conf" -e "$dir/run/error.log" || bail "nginx did not start"
token=Zm9vYmFy-acme_token-0123456789
printf '%s.thumbprint' "$token" >"$dir/acme/.well-known/acme-challenge/$token"
chmod -R a+rX "$dir/acme"
base="http://127.0.0.1:$port"
hcurl() { curl -sS --max-time 10 -H 'Host: pay.example.com' "$@"; }
for _ in $(seq 50); do hcurl -o /dev/null "$base/" 2>/dev/null && break; sleep 0.1; done

code=$(hcurl -o "$dir/token.out" -D "$dir/token.hdr" -w '%{http_code}' \
	"$base/.well-known/acme-challenge/$token") || code=000
check "an ACME challenge is served from the webroot, not redirected (got $code)" [ "$code" = 200 ]
check "the challenge body is the token file's" [ "$(cat "$dir/token.out")" = "$token.thumbprint" ]
check "the challenge is text/plain" grep -qi '^Content-Type: text/plain' "$dir/token.hdr"
code=$(hcurl -o /dev/null -w '%{http_code}' "$base/.well-known/acme-challenge/missing") || code=000
check "a missing challenge answers 404, not a redirect (got $code)" [ "$code" = 404 ]
code=$(hcurl -o /dev/null -D "$dir/redirect.hdr" -w '%{http_code}' "$base/checkout/x?y=1") || code=000
check "anything else answers 301 (got $code)" [ "$code" = 301 ]
check "the redirect goes to https on the same host" \
	grep -qi '^Location: https://pay.example.com/checkout/x?y=1' "$dir/redirect.hdr"
for f in redirect token; do
	check "the Server header names no version (port 80, $f)" grep -qix 'Server: nginx'$'\r' "$dir/$f.hdr"
done
finish
