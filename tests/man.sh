#!/usr/bin/env bash
# Lints every man page with mandoc at warning level: any message is a failure. One result per
# page, then "N passed, N failed" (tests/lib.sh).
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
mandir="$srcdir/man"
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"

command -v mandoc >/dev/null 2>&1 || bail "man.sh: mandoc not found: apt-get install mandoc"

shopt -s nullglob
pages=("$mandir"/*.[1-9])
shopt -u nullglob
[ "${#pages[@]}" -gt 0 ] || bail "man.sh: no man pages in $mandir"

# lint_clean PAGE: mandoc says nothing about it and exits 0; otherwise shows what it said.
lint_clean() {
	local out status=0
	out=$(mandoc -Tlint -W warning "$1" 2>&1) || status=$?
	[ "$status" -eq 0 ] && [ -z "$out" ] && return 0
	echo "man.sh: $1 is not lint-clean (mandoc exit $status):" >&2
	[ -z "$out" ] || printf '%s\n' "$out" >&2
	return 1
}

for page in "${pages[@]}"; do
	check "${page##*/} is lint-clean" lint_clean "$page"
done
finish
