#!/usr/bin/env bash
# The shipped systemd units must be valid: each template, instantiated for "sandbox" and
# pointed at the programs of this build, passes `systemd-analyze verify` with no complaint.
# One result per unit (a complaint naming none counts once more), then "N passed, N failed"
# (tests/lib.sh).
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-.}" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-systemd.XXXXXX")
trap 'rm -rf "$dir"' EXIT

command -v systemd-analyze >/dev/null || bail "systemd-analyze is missing (apt-get install systemd)"
units=()
for f in "$srcdir"/systemd/*@.*; do
	name=$(basename "$f")
	inst="${name/@./@sandbox.}"
	sed -e "s|/usr/sbin/marketpay-fcgi|$builddir/marketpay-fcgi|" \
		-e "s|/usr/sbin/marketpay-webhookd|$builddir/marketpay-webhookd|" \
		-e "s|/usr/bin/marketpayctl|$builddir/marketpayctl|" "$f" >"$dir/$inst"
	units+=("$dir/$inst")
done
[ ${#units[@]} -ge 5 ] || bail "systemd: expected at least 5 unit templates"
# All together: a timer is verified with the service it starts.
out=$(cd "$dir" && systemd-analyze verify --man=no "${units[@]}" 2>&1) || true
[ -z "$out" ] || echo "$out" >&2
named=0
for unit in "${units[@]}"; do
	if grep -qF "${unit##*/}" <<<"$out"; then
		named=1
		not_ok "${unit##*/}: systemd-analyze verify complains"
	else
		ok "${unit##*/}: systemd-analyze verify"
	fi
done
[ -z "$out" ] || [ "$named" = 1 ] || not_ok "systemd-analyze verify complains (naming no unit)"
# The daily timer runs the whole purge (idempotency records and retention), as the workers'
# role, for the instance's configuration.
purge="$srcdir/systemd/marketpay-purge@.service"
check "marketpay-purge@.service runs marketpayctl purge" \
	grep -qx 'ExecStart=/usr/bin/marketpayctl -c /etc/marketpay/%i.conf purge' "$purge"
check "marketpay-purge@.service runs as the environment's workers' role" \
	grep -qx 'Environment=PGUSER=mp_worker_%i' "$purge"
# Each environment's programs run as its own OS user and group (tests/envs.sh logs them in).
for f in "$srcdir"/systemd/marketpay-{fcgi,webhookd,purge}@.service; do
	check "${f##*/} runs as marketpay-%i:marketpay-%i" bash -c \
		"grep -qx 'User=marketpay-%i' '$f' && grep -qx 'Group=marketpay-%i' '$f'"
done
# The backup is the cluster's, not an environment's: pgBackRest runs as postgres.
check "marketpay-backup@.service runs as postgres:postgres" bash -c \
	"grep -qx 'User=postgres' '$srcdir/systemd/marketpay-backup@.service' &&
	 grep -qx 'Group=postgres' '$srcdir/systemd/marketpay-backup@.service'"
check "marketpay-webhookd@.service logs in as mp_webhookd_%i" \
	grep -qx 'Environment=PGUSER=mp_webhookd_%i' "$srcdir/systemd/marketpay-webhookd@.service"
# The pool: systemd holds its socket (a restart refuses no connection) and passes it on;
# reload is SIGHUP to the pool, which starts new workers (tests/restart.sh runs both).
fsock="$srcdir/systemd/marketpay-fcgi@.socket"
fsvc="$srcdir/systemd/marketpay-fcgi@.service"
check "marketpay-fcgi@.socket listens on /run/marketpay/%i.sock, then %i-reads.sock" \
	test "$(sed -n 's/^ListenStream=//p' "$fsock" | paste -sd' ')" = \
	'/run/marketpay/%i.sock /run/marketpay/%i-reads.sock'
check "marketpay-fcgi@.socket: nginx's www-data may connect, nobody else" bash -c \
	"grep -qx 'SocketGroup=www-data' '$fsock' && grep -qx 'SocketMode=0660' '$fsock'"
check "marketpay-fcgi@.service requires its socket" \
	grep -qx 'Requires=marketpay-fcgi@%i.socket' "$fsvc"
check "marketpay-fcgi@.service runs the pool on the inherited socket" grep -qx \
	'ExecStart=/usr/sbin/marketpay-fcgi --workers ${WORKERS} --read-workers ${READ_WORKERS} -c /etc/marketpay/%i.conf' "$fsvc"
check "marketpay-fcgi@.service: reload is SIGHUP to the pool" \
	grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$fsvc"
check "marketpay-fcgi@.service binds no socket of its own" bash -c "! grep -q spawn-fcgi '$fsvc'"
finish
