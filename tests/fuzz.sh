#!/usr/bin/env bash
# Fuzzes the request-parsing and validation code with libFuzzer under ASan and UBSan. Each
# target tests/fuzz/fuzz_<name>.c first runs once over its seeds in tests/fuzz/corpus/<name>,
# then fuzzes for MP_FUZZ_SECONDS seconds (default 60 with CI=true, else 10; 0 = the seeds
# only) from a scratch copy of them: the source tree is never written. Two targets fuzz at a
# time. Any crash, leak, sanitizer report, failed property or timeout fails the test; the
# failing input is kept in $top_builddir/tests/fuzz-build/artifacts. Installs nothing:
# dev/deps.sh does.
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-$srcdir}" && pwd)
out="$builddir/tests/fuzz-build"
fuzzdir="$srcdir/tests/fuzz"
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
if [ -n "${MP_FUZZ_SECONDS:-}" ]; then
	seconds=$MP_FUZZ_SECONDS
elif [ "${CI:-}" = true ]; then
	seconds=60
else
	seconds=10
fi
case $seconds in
'' | *[!0-9]*) bail "fuzz.sh: MP_FUZZ_SECONDS must be a whole number of seconds" ;;
esac

# The longest input each target tries, in bytes: well past every limit the code enforces
# (a 128-character key, 128-byte form fields, 512-byte messages) without slowing it down.
declare -A max_len=([auth]=512 [form]=2048 [jtext]=4096 [route]=2048 [session]=4096 [transfer]=4096)

command -v clang >/dev/null 2>&1 ||
	bail "fuzz.sh: clang not found: apt-get install clang libclang-rt-14-dev"
major=$(clang -dumpversion | cut -d. -f1)
for pc in json-c libpq libcrypto inih; do
	pkg-config --exists "$pc" || bail "fuzz.sh: pkg-config cannot find $pc (see dev/deps.sh)"
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-fuzz.XXXXXX")
fuzzing=() # the targets fuzzing in the background: "target pid seeds" each
stop_fuzzing() {
	local f pid
	for f in "${fuzzing[@]}"; do
		read -r _ pid _ <<<"$f"
		kill "$pid" 2>/dev/null || true
	done
	wait
	rm -rf "$scratch"
}
trap stop_fuzzing EXIT
mkdir -p "$out/obj" "$out/artifacts"

# The code under test gets the fuzzer's coverage instrumentation (fuzzer-no-link) and the
# sanitizers; any undefined behaviour aborts (-fno-sanitize-recover) so it counts as a crash.
read -r -a pkg_cflags <<<"$(pkg-config --cflags json-c libpq libcrypto inih)"
read -r -a pkg_libs <<<"$(pkg-config --libs json-c libpq libcrypto inih)"
cflags=(-g -O1 -fno-omit-frame-pointer "-fsanitize=address,undefined" -fno-sanitize-recover=all
	-Wall -Wextra -std=gnu11 -D_GNU_SOURCE "-DPKGDATADIR=\"/nonexistent\"" -I"$srcdir/src"
	"${pkg_cflags[@]}")

# Debian's clang comes without the libFuzzer runtime: that is libclang-rt-<major>-dev.
probe='int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; return (int)(n & 0); }'
if ! echo "$probe" | clang -x c -fsanitize=fuzzer,address,undefined -o "$scratch/probe" - \
	>"$scratch/probe.log" 2>&1; then
	cat "$scratch/probe.log" >&2
	bail "fuzz.sh: clang cannot link libFuzzer: apt-get install libclang-rt-$major-dev"
fi

# Every module of the workers' libraries (libmpcore, libmpworker) except fcgi.c (only the
# programs talk FastCGI): not the programs, marketpayctl's or the delivery daemon's; an
# archive, so each target links just the objects it reaches.
objs=()
pids=()
cc_failed=0
for c in "$srcdir"/src/*.c; do
	case ${c##*/} in
	main_*.c | ctl*.c | fcgi.c | webhook.c | webhook_expire.c | webhook_post.c | \
		webhook_schedule.c | webhook_sql.c | webhook_url.c) continue ;;
	esac
	o="$out/obj/$(basename "$c" .c).o"
	clang "${cflags[@]}" -fsanitize=fuzzer-no-link -c "$c" -o "$o" &
	objs+=("$o")
	pids+=($!)
	# Two compilers at a time: the machine is shared.
	if [ "${#pids[@]}" -ge 2 ]; then
		wait "${pids[0]}" || cc_failed=1
		pids=("${pids[@]:1}")
	fi
done
for pid in "${pids[@]}"; do
	wait "$pid" || cc_failed=1
done
[ "$cc_failed" -eq 0 ] || bail "fuzz.sh: compiling src/*.c with clang failed"
rm -f "$out/libmp-fuzz.a"
ar rcs "$out/libmp-fuzz.a" "${objs[@]}"

# As dev/test's sanitizer build, plus stack use after return; options already set come last
# and win. strict_string_checks: a (buffer, length) must never go to a str* function.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
asan=strict_string_checks=1:detect_stack_use_after_return=1
# Stack traces name functions and lines only through llvm-symbolizer (Debian package llvm).
if ! command -v llvm-symbolizer >/dev/null 2>&1; then
	if command -v "llvm-symbolizer-$major" >/dev/null 2>&1; then
		asan="$asan:external_symbolizer_path=$(command -v "llvm-symbolizer-$major")"
	else
		echo "fuzz.sh: no llvm-symbolizer (apt-get install llvm): traces will be addresses" >&2
	fi
fi
export ASAN_OPTIONS="$asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

# $1: target, $2: what failed, $3: libFuzzer's log. Shows the trace and keeps the reproducer.
report() {
	local t=$1 what=$2 log=$3 f
	not_ok "fuzz.sh: $t: $what"
	grep -a -v -e '^#[0-9]' -e '^INFO: ' -e '^Executed ' "$log" | tail -n 80 >&2 || true
	for f in "$scratch/art-$t-"*; do
		[ -e "$f" ] || continue
		cp "$f" "$out/artifacts/"
		echo "fuzz.sh: $t: reproducer $out/artifacts/${f##*/}" >&2
		echo "fuzz.sh: $t: replay with: $out/fuzz_$t $out/artifacts/${f##*/}" >&2
	done
}

# The number after "stat::$1: " in a -print_final_stats log.
final_stat() {
	sed -n "s/^stat::$1: *//p" "$2" | tail -n 1
}

# fuzzed: waits for the first target still fuzzing and reports it.
fuzzed() {
	local t pid n log
	read -r t pid n <<<"${fuzzing[0]}"
	fuzzing=("${fuzzing[@]:1}")
	log="$scratch/$t.log"
	if wait "$pid"; then
		ok "fuzz_$t: fuzzed for ${seconds}s"
		echo "fuzz_$t: $n seeds ok; $(final_stat number_of_executed_units "$log") runs" \
			"in ${seconds}s ($(final_stat average_exec_per_sec "$log") exec/s)," \
			"corpus $(find "$scratch/corpus-$t" -type f | wc -l) inputs," \
			"peak rss $(final_stat peak_rss_mb "$log") MB"
	else
		report "$t" "fuzzing" "$log"
	fi
}

for h in "$fuzzdir"/fuzz_*.c; do
	t=$(basename "$h" .c)
	t=${t#fuzz_}
	bin="$out/fuzz_$t"
	seeds="$fuzzdir/corpus/$t"
	if [ -z "${max_len[$t]:-}" ] || [ ! -d "$seeds" ]; then
		not_ok "fuzz.sh: $t: no max_len in fuzz.sh or no seed corpus in $seeds"
		continue
	fi
	clang "${cflags[@]}" -Werror -Wshadow -Wmissing-prototypes -fsanitize=fuzzer \
		-I"$fuzzdir" "$h" "$fuzzdir/fuzz.c" "$out/libmp-fuzz.a" \
		"${pkg_libs[@]}" -lm -o "$bin" || { not_ok "fuzz.sh: $t: compiling the harness"; continue; }
	opts=(-detect_leaks=1 -rss_limit_mb=1024 -timeout=10 -max_len="${max_len[$t]}"
		-artifact_prefix="$scratch/art-$t-")

	# The seeds alone, one process each so that a failure names its seed.
	shopt -s nullglob
	files=("$seeds"/*)
	shopt -u nullglob
	if [ "${#files[@]}" -eq 0 ]; then
		not_ok "fuzz.sh: $t: $seeds is empty"
		continue
	fi
	bad_seed=
	for f in "${files[@]}"; do
		if ! "$bin" "${opts[@]}" "$f" >"$scratch/$t-seeds.log" 2>&1; then
			bad_seed=$f
			break
		fi
	done
	if [ -n "$bad_seed" ]; then
		report "$t" "the seed $bad_seed" "$scratch/$t-seeds.log"
		echo "fuzz.sh: $t: replay with: $bin $bad_seed" >&2
		continue
	fi
	ok "fuzz_$t: ${#files[@]} seeds"

	# MP_FUZZ_SECONDS=0: the seeds only (libFuzzer would take -max_total_time=0 as no limit).
	if [ "$seconds" -eq 0 ]; then
		echo "fuzz_$t: ${#files[@]} seeds ok; not fuzzed (MP_FUZZ_SECONDS=0)"
		continue
	fi
	# Fuzzing from a scratch copy: new corpus entries never reach the source tree. Two
	# targets at a time, each its whole time on one core of two: make check runs its tests
	# one after another, so nothing else needs them meanwhile.
	mkdir -p "$scratch/corpus-$t"
	cp "${files[@]}" "$scratch/corpus-$t/"
	(cd "$scratch" && exec "$bin" "${opts[@]}" -max_total_time="$seconds" -print_final_stats=1 \
		"$scratch/corpus-$t") >"$scratch/$t.log" 2>&1 &
	fuzzing+=("$t $! ${#files[@]}")
	[ "${#fuzzing[@]}" -lt 2 ] || fuzzed
done
while [ "${#fuzzing[@]}" -gt 0 ]; do
	fuzzed
done

finish
