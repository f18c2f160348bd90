#!/usr/bin/env bash
# The shipped systemd units must be valid: each template, instantiated for "sandbox" and
# pointed at the programs of this build, passes `systemd-analyze verify` with no complaint.
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-.}" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-systemd.XXXXXX")
trap 'rm -rf "$dir"' EXIT

command -v systemd-analyze >/dev/null || { echo "systemd-analyze is missing (apt-get install systemd)" >&2; exit 1; }
units=()
for f in "$srcdir"/systemd/*@.*; do
	name=$(basename "$f")
	inst="${name/@./@sandbox.}"
	sed -e "s|/usr/sbin/marketpay-fcgi|$builddir/marketpay-fcgi|" \
		-e "s|/usr/sbin/marketpay-webhookd|$builddir/marketpay-webhookd|" \
		-e "s|/usr/bin/marketpayctl|$builddir/marketpayctl|" "$f" >"$dir/$inst"
	units+=("$dir/$inst")
done
[ ${#units[@]} -ge 4 ] || { echo "systemd: expected at least 4 unit templates" >&2; exit 1; }
out=$(cd "$dir" && systemd-analyze verify --man=no "${units[@]}" 2>&1) || true
if [ -n "$out" ]; then
	echo "$out" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
echo "${#units[@]} passed, 0 failed"
