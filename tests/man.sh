#!/usr/bin/env bash
# Lints every man page with mandoc at warning level: any message is a failure.
set -euo pipefail

mandir="${top_srcdir:-.}/man"

if ! command -v mandoc >/dev/null 2>&1; then
	echo "man.sh: mandoc not found: apt-get install mandoc" >&2
	exit 1
fi

shopt -s nullglob
pages=("$mandir"/*.[1-9])
shopt -u nullglob
if [ "${#pages[@]}" -eq 0 ]; then
	echo "man.sh: no man pages in $mandir" >&2
	exit 1
fi

failed=0
for page in "${pages[@]}"; do
	status=0
	out=$(mandoc -Tlint -W warning "$page" 2>&1) || status=$?
	if [ "$status" -ne 0 ] || [ -n "$out" ]; then
		echo "man.sh: $page is not lint-clean (mandoc exit $status):" >&2
		[ -n "$out" ] && printf '%s\n' "$out" >&2
		failed=1
	fi
done

if [ "$failed" -ne 0 ]; then
	exit 1
fi
echo "man pages lint-clean"
