#!/usr/bin/env bash
# The shipped nginx server blocks (production and sandbox) must be valid nginx: each is
# checked with `nginx -t` inside a minimal main config, with a throwaway self-signed
# certificate and the paths pointed into a temporary directory. One result per check, then
# "N passed, N failed" (tests/lib.sh).
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-nginx.XXXXXX")
trap 'rm -rf "$dir"' EXIT

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-keyout "$dir/test.key" -out "$dir/test.crt" 2>/dev/null || bail "a test certificate (openssl)"
cp /etc/nginx/fastcgi_params "$dir/fastcgi_params" || bail "nginx's fastcgi_params"
cp "$srcdir/nginx/marketpay-fastcgi.conf" "$dir/marketpay-fastcgi.conf"

# valid ENV: nginx -t accepts the server block of ENV; otherwise shows what it said.
valid() {
	local out
	out=$(nginx -t -q -p "$dir" -c "$dir/nginx-$1.conf" -e "$dir/error.log" 2>&1) && return 0
	echo "$out" >&2
	return 1
}

for env in production sandbox; do
	sed -e "s|/etc/ssl/marketpay/$env.crt|$dir/test.crt|" \
		-e "s|/etc/ssl/marketpay/$env.key|$dir/test.key|" \
		-e "s|/etc/marketpay/nginx/marketpay-fastcgi.conf|$dir/marketpay-fastcgi.conf|" \
		"$srcdir/nginx/marketpay-$env.conf" >"$dir/$env.conf"
	cat >"$dir/nginx-$env.conf" <<CONF
pid $dir/nginx.pid;
error_log $dir/error.log;
events {}
http {
    access_log off;
    client_body_temp_path $dir/tmp;
    include $srcdir/nginx/marketpay-limits.conf;
    include $dir/$env.conf;
}
CONF
	check "nginx/marketpay-$env.conf is valid nginx" valid "$env"
	check "$env: HTTP is redirected to HTTPS" grep -q 'return 301 https' "$dir/$env.conf"
done
check "production: HSTS" grep -q 'Strict-Transport-Security' "$srcdir/nginx/marketpay-production.conf"
finish
