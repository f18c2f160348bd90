#!/usr/bin/env bash
# Who can reach the stack's PostgreSQL (tests/stack.sh): peer authentication over a unix
# socket whose directory only the stack's users may enter, no TCP. Starts a stack, then checks
# that root with the stack's settings, the workers' user (nobody) and postgres get in as the
# roles they are mapped to and no others; that another local user (daemon, and a throwaway
# user of nobody's group, which gets past the directory) cannot connect at all; and that a
# worker request that needs the database (health) answers 200. As a normal user only the
# checks that need no other user run. Always stops the stack and removes the user it made.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-$srcdir/build}
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=2
stack="$srcdir/tests/stack.sh"
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-pgaccess.XXXXXX")
chmod 755 "$dir"
probe=""
cleanup() {
	local code=$?
	"$stack" stop "$dir/stack" >/dev/null 2>&1 || true
	[ -z "$probe" ] || userdel "$probe" 2>/dev/null || true
	rm -rf "$dir"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$stack" start "$dir/stack" >"$dir/stack.log" 2>&1 || { cat "$dir/stack.log" >&2; exit 1; }
# shellcheck disable=SC1091
. "$dir/stack/stack.env"

# as USER ROLE: connects to the stack's database as ROLE, run as OS user USER ("" = us);
# succeeds when the server says it is ROLE.
as() {
	local who=(runuser -u "$1" --)
	[ -n "$1" ] || who=()
	[ "$(cd / && "${who[@]}" psql -X -qAt -h "$PGHOST" -p "$PGPORT" -d "$PGDATABASE" -U "$2" \
		-c 'SELECT current_user' 2>>"$dir/refused.log")" = "$2" ]
}
refused() { ! as "$@"; }

code=$(curl -s -o /dev/null -w '%{http_code}' "$MARKETPAY_BASE_URL/api/v1/health")
check "a worker reaches the database: health answers 200 (got $code)" [ "$code" = 200 ]
check "the stack's own settings (PGUSER=$PGUSER) get in" as "" "$PGUSER"
check "pg_hba.conf: peer on the unix socket, no host lines" bash -c "[ \"\$(grep -v '^#' \
	'$dir/stack/pg/data/pg_hba.conf' | grep -v '^\$')\" = 'local all all peer map=marketpay' ]"
check "no TCP port: listen_addresses is empty" \
	test -z "$(psql -X -qAtc 'SHOW listen_addresses')"

if [ "$(id -u)" = 0 ]; then
	me=root
	check "the socket directory is postgres:nogroup, mode 750" \
		test "$(stat -c '%U:%G %a' "$PGHOST")" = "postgres:nogroup 750"
	for role in postgres mp_worker mp_webhookd mp_dba; do
		check "root gets in as $role" as root "$role"
	done
	for role in mp_worker mp_webhookd; do
		check "nobody (the workers) gets in as $role" as nobody "$role"
	done
	check "nobody does not get in as postgres" refused nobody postgres
	check "nobody does not get in as mp_dba" refused nobody mp_dba
	check "postgres gets in as postgres" as postgres postgres
	check "postgres does not get in as mp_worker" refused postgres mp_worker
	# Another local user: stopped at the socket's directory.
	for role in postgres mp_worker daemon; do
		check "daemon cannot connect as $role" refused daemon "$role"
	done
	check "  (refused at the socket: permission denied)" \
		grep -q 'Permission denied' "$dir/refused.log"
	# A user of nobody's group gets through the directory; peer authentication stops it.
	probe=mpprobe$$
	if useradd -M -N -g nogroup -s /usr/sbin/nologin -d /nonexistent "$probe" 2>/dev/null; then
		: >"$dir/refused.log"
		for role in postgres mp_worker mp_webhookd mp_dba "$probe"; do
			check "$probe (group nogroup) cannot connect as $role" refused "$probe" "$role"
		done
		check "  (refused by peer authentication)" \
			grep -q 'Peer authentication failed' "$dir/refused.log"
	else
		probe=""
		not_ok "useradd could not make a throwaway user"
	fi
else
	me=$(id -un)
	check "the socket directory is ours alone, mode 700" \
		test "$(stat -c '%U %a' "$PGHOST")" = "$me 700"
	for role in postgres mp_worker mp_webhookd mp_dba; do
		check "$me gets in as $role" as "" "$role"
	done
fi
check "after all that, health still answers 200" \
	test "$(curl -s -o /dev/null -w '%{http_code}' "$MARKETPAY_BASE_URL/api/v1/health")" = 200
finish
