# Shared by the script tests (sourced, not run): result counting, free ports, JSON fields.
#   check "what" command...   runs command; counts and prints ok/FAIL with the description
#   finish                    prints "N passed, N failed" (dev/test adds these up); status
#   bail "what"               counts what as failed, prints the totals, exits 1 (a test that
#                             cannot go on)
#   wait_for SECS command...  runs command every 0.2 s until it succeeds (status 0) or SECS
#                             have passed (status 1)
#   free_port                 a loopback TCP port nothing listens on (below the ephemeral range)
#   json FIELD                a top-level field of the JSON object on stdin ("" when absent)
#   node_project DIR PKG WHAT checks for node 20 or newer and npm (bails naming WHAT when not),
#                             sets nodedir to the node project DIR, or to a copy of its files in
#                             $builddir/tests/NAME-run when DIR is read-only (make distcheck),
#                             and runs npm ci there when node_modules lacks PKG or is older
#                             than the lock
#   own_stack NAME            a stack (tests/stack.sh, $stack) in a fresh temporary directory
#                             $dir/stack, its stack.env sourced; on exit the stack is stopped,
#                             the caller's own_cleanup run (when defined) and $dir removed

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
not_ok() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
bail() {
	not_ok "$*"
	finish || true
	exit 1
}

wait_for() { # wait_for SECONDS command...
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

listening() { # listening PORT: something accepts connections on 127.0.0.1:PORT
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

wait_listening() { # wait_listening PORT WHAT: up to 5 s, else says WHAT does not listen
	wait_for 5 listening "$1" || { echo "$2 does not listen on port $1" >&2; return 1; }
}

free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((15000 + RANDOM % 17000))
		if ! listening "$p"; then
			echo "$p"
			return 0
		fi
	done
	echo "no free port found" >&2
	return 1
}

json() {
	jq -r --arg k "$1" '.[$k] | if . == null then "" else tostring end'
}

node_project() {
	local src=$1 pkg=$2 what=$3 major
	command -v node >/dev/null || bail "node is missing: $what need node 20 or newer and npm"
	command -v npm >/dev/null || bail "npm is missing: $what need node 20 or newer and npm"
	major=$(node -p 'process.versions.node.split(".")[0]')
	[ "$major" -ge 20 ] || bail "node $(node --version) is too old: $what need node 20 or newer"
	nodedir=$src
	if [ ! -w "$src" ]; then
		nodedir="${builddir:?}/tests/$(basename "$src")-run"
		mkdir -p "$nodedir"
		find "$src" -maxdepth 1 -type f -exec cp {} "$nodedir/" \;
		chmod -R u+w "$nodedir"
	fi
	if [ ! -f "$nodedir/node_modules/$pkg/package.json" ] ||
		[ "$nodedir/package-lock.json" -nt "$nodedir/node_modules/.package-lock.json" ]; then
		(cd "$nodedir" && npm ci --no-audit --no-fund >&2) || bail "npm ci in $nodedir failed"
	fi
}

own_stack() {
	dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-$1.XXXXXX")
	chmod 755 "$dir"
	trap own_stack_exit EXIT
	trap 'exit 130' INT TERM
	"${stack:?}" start "$dir/stack" >"$dir/stack.log" 2>&1 || { cat "$dir/stack.log" >&2; exit 1; }
	# shellcheck disable=SC1091
	. "$dir/stack/stack.env"
}
own_stack_exit() {
	local code=$?
	"$stack" stop "$dir/stack" >/dev/null 2>&1 || true
	if declare -F own_cleanup >/dev/null; then own_cleanup || true; fi
	rm -rf "$dir"
	exit "$code"
}
