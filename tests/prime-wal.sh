#!/usr/bin/env bash
# The benchmarks' WAL priming (mp_prime_wal in bench/lib.sh) against a real stack:
#   - on the stack as it starts, writing into the next WAL segment makes a new file, which
#     PostgreSQL fills with zeros and flushes while every commit's flush waits (the stalls
#     bench/README.md measures under "New WAL segments");
#   - after mp_prime_wal, min_wal_size of segments wait past the insert position, and
#     writing into the next ones renames nothing new into pg_wal: no file is made;
#   - MP_PRIME_WAL=0 leaves the database as it was.
# A segment is entered with mp_wal_enter, as the priming itself does.
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-.}" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
export LC_ALL=C MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=1
stack="$srcdir/tests/stack.sh"
own_stack prime-wal
# shellcheck source=bench/lib.sh
. "$srcdir/bench/lib.sh"
pgbin=${MP_PGBIN:-/usr/lib/postgresql/15/bin}
me=prime-wal
unset MP_PRIME_WAL
# The stack's cluster commits asynchronously (MP_FAST_PG=1): this test's commits write their
# WAL at once, so that a segment's file exists once a statement has entered it.
export PGOPTIONS='-c synchronous_commit=on'

# The WAL segment files in pg_wal, and those past the one being written.
files() { psql -c "SELECT count(*) FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}\$'"; }
ahead() {
	psql -c "SELECT count(*) FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}\$'
		AND name > pg_walfile_name(pg_current_wal_lsn())"
}
segs=$(mp_min_wal_segments)

# Past whatever segments the stack's start left ready, each segment entered is a new file.
a=$(ahead) f=$(files)
mp_wal_enter $((a + 3))
check "unprimed: the 3 segments past those ready ($a) are new files" test "$(files)" -ge $((f + 3))

MP_PRIME_WAL=0 mp_prime_wal
check "MP_PRIME_WAL=0: no segment made ready" test "$(ahead)" -lt 3

mp_prime_wal
a=$(ahead) f=$(files)
check "primed: at least min_wal_size less one ($((segs - 1)) segments) past the insert position ($a)" \
	test "$a" -ge $((segs - 1))
mp_wal_enter 3
check "primed: entering 3 segments makes no file ($f before, $(files) after)" test "$(files)" = "$f"
check "primed: those 3 were taken from the ready ones" test "$(ahead)" = $((a - 3))
check "the priming's table is gone" test "$(psql -c "SELECT to_regclass('mp_wal_enter') IS NULL")" = t

finish
