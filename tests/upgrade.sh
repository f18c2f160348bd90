#!/usr/bin/env bash
# Upgrading a database that holds data: the migrations up to 016 are applied to a database of
# their own on the stack's PostgreSQL, sessions (open, paid, with items) are stored, then
# marketpayctl db migrate applies the rest. Checks: every row is as it was; payment_sessions,
# session_items, the ledger's tables and their indexes were not rewritten (018 and 026 move
# columns to domains without a rewrite; PostgreSQL always rebuilds the partial indexes on
# such columns); no constraint is left NOT VALID; the rules moved into domains still refuse bad
# rows (check_violation), and so does each rule across columns that 029 folded into one CHECK,
# under its own constraint name; db status has nothing pending; statements a worker of before
# prepared still run after the migrations (a worker runs until it is restarted). Always
# stops the stack.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-$srcdir/build}
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=1
stack="$srcdir/tests/stack.sh"
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"

own_stack upgrade
q() { psql -X -qAt -v ON_ERROR_STOP=1 -d upgrade "$@"; }
psql -X -qAt -v ON_ERROR_STOP=1 -c "CREATE DATABASE upgrade"

# The migrations before the upgrade in a directory of their own, and a config that uses it.
mkdir "$dir/sql"
for f in "$srcdir"/sql/0*.sql; do
	n=$(basename "$f")
	[[ $n > 017 ]] || cp "$f" "$dir/sql/"
done
sed -e 's|dbname=[^ ]*|dbname=upgrade|' -e "s|^sql_dir = .*|sql_dir = $dir/sql|" \
	"$MARKETPAY_CONFIG" >"$dir/upgrade.conf"
ctl() { "$MARKETPAYCTL" -c "$dir/upgrade.conf" "$@"; }
ctl db migrate >/dev/null
merchant=$(ctl merchant create --name Upgrade --currency AFN)
key=$(ctl key create "$merchant")
digest='\x'$(printf '%s' "$key" | sha256sum | cut -d' ' -f1)
q -c "SELECT count(*) FROM (SELECT mp_create_session('$digest'::bytea, 'sandbox', 'u' || g,
	'c@example.com', 'https://shop.example/ok', NULL, 1800, '{sku-1,sku-2}', '{Tea,Cup}',
	'{1250,300}') FROM generate_series(1, 2000) g) s" >/dev/null
paid=$(q -c "SELECT count(*) FROM (SELECT mp_pay_test_card(id, 'visa', '4242', NULL)
	FROM payment_sessions ORDER BY created_at LIMIT 20) p")
# The columns the tables have before the upgrade (later migrations may add some).
columns() {
	q -c "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
		WHERE attrelid = '$1'::regclass AND attnum > 0 AND NOT attisdropped"
}
# The tables whose columns move to domains (018, 026): their rows and files are compared.
tables=(payment_sessions session_items accounts ledger_transactions ledger_entries transfers
	pin_nonces webhook_events)
list=$(IFS=,; echo "${tables[*]}")
declare -A cols
for t in "${tables[@]}"; do cols[$t]=$(columns "$t"); done
rows() {
	local t
	for t in "${tables[@]}"; do
		q -c "SELECT '$t ' || count(*) || ' ' || md5(coalesce(string_agg(x::text, '|'
			ORDER BY x::text), '')) FROM (SELECT ${cols[$t]} FROM $t) x"
	done
	q -c "SELECT count(*) FILTER (WHERE status = 'paid') FROM payment_sessions"
}
files() {
	q -c "SELECT string_agg(c.relname || '=' || pg_relation_filenode(c.oid), ' ' ORDER BY c.relname)
		FROM pg_class c WHERE c.oid = ANY ('{$list}'::regclass[])
		   OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indpred IS NULL
		       AND indrelid = ANY ('{$list}'::regclass[]))"
}
rows_before=$(rows)
files_before=$(files)

cp "$srcdir"/sql/0*.sql "$dir/sql/"
# The workers keep running through the migrations until they are restarted (README.md,
# Upgrades), their statements prepared: those must still run afterwards. A session prepares
# statements of the functions later migrations make again as a worker of before sends them,
# the migrations run from inside it (psql's \!), and it executes them: a function whose
# result type changed would fail them ("cached plan must not change result type").
cat >"$dir/held.sql" <<SQL
PREPARE session_expire AS SELECT mp_expire_session(\$1::bigint, \$2::uuid);
PREPARE transfer_send AS SELECT outcome, transfer_id, amount, transaction_date
    FROM mp_transfer_send(\$1::bigint, \$2::bytea, \$3::bytea, \$4::bigint, \$5, \$6::text[],
    \$7::bigint[], \$8);
\\! "$MARKETPAYCTL" -c "$dir/upgrade.conf" db migrate >"$dir/migrate.out" 2>&1 && echo migrated
EXECUTE session_expire(0, '00000000-0000-0000-0000-000000000000');
EXECUTE transfer_send(0, NULL, NULL, NULL, NULL, '{}', '{}', 'UTC');
SQL
held=$(psql -X -qAt -d upgrade -f "$dir/held.sql" 2>&1 || true)
grep -qx migrated <<<"$held" || { cat "$dir/migrate.out" >&2; not_ok "db migrate"; finish; }
check "a worker's statements prepared before the upgrade still run after it" \
	grep -q "payment session not found" <<<"$held"
check "  (the transfer's too)" grep -qx "not_enabled|||" <<<"$held"
grep -q "payment session not found" <<<"$held" && grep -qx "not_enabled|||" <<<"$held" ||
	printf '%s\n' "$held" >&2
check "the rows are as they were ($paid paid)" [ "$(rows)" = "$rows_before" ]
files_after=$(files)
check "no table or full index of the sessions or the ledger was rewritten" [ "$files_after" = "$files_before" ]
[ "$files_after" = "$files_before" ] ||
	printf 'before: %s\nafter:  %s\n' "$files_before" "$files_after" >&2
check "no constraint is left NOT VALID" \
	[ "$(q -c "SELECT count(*) FROM pg_constraint WHERE NOT convalidated")" = 0 ]
check "db status: nothing pending" ctl db status >/dev/null
id=$(q -c "SELECT id FROM payment_sessions WHERE status = 'open' LIMIT 1")
for bad in "UPDATE payment_sessions SET currency = 'afn' WHERE id = '$id'" \
	"UPDATE payment_sessions SET user_id = repeat('u', 51) WHERE id = '$id'" \
	"UPDATE payment_sessions SET status = 'lost' WHERE id = '$id'" \
	"UPDATE payment_sessions SET redirect_success_url = 'ftp://x' WHERE id = '$id'" \
	"UPDATE session_items SET price = 0 WHERE session_id = '$id'" \
	"UPDATE session_items SET name = '' WHERE session_id = '$id'" \
	"UPDATE accounts SET currency = 'afn' WHERE kind = 'system'" \
	"UPDATE accounts SET kind = 'alien' WHERE kind = 'system'"; do
	state=$(q -c "\\set VERBOSITY sqlstate" -c "$bad" 2>&1 || true)
	check "refused with check_violation: $bad" [ "$state" = "ERROR:  23514" ]
done
# The rules across columns, one CHECK since 029: each still refused, under its own name.
paid_id=$(q -c "SELECT id FROM payment_sessions WHERE status = 'paid' LIMIT 1")
for rule in "payment_sessions_check:SET expires_at = created_at WHERE id = '$id'" \
	"paid_has_payment:SET status = 'paid' WHERE id = '$id'" \
	"refunds_within_amount:SET amount_refunded = amount + 1 WHERE id = '$paid_id'" \
	"refunded_means_all:SET status = 'refunded' WHERE id = '$paid_id'" \
	"refunds_only_when_paid:SET amount_refunded = 1 WHERE id = '$id'" \
	"payment_sessions_locale_check:SET locale = 'EN' WHERE id = '$id'"; do
	name=${rule%%:*}
	said=$(q -c "\\set VERBOSITY verbose" -c "UPDATE payment_sessions ${rule#*:}" 2>&1 || true)
	check "refused as $name: ${rule#*:}" grep -q "^ERROR:  23514: .*check constraint \"$name\"" <<<"$said"
	grep -q "check constraint \"$name\"" <<<"$said" || printf '%s\n' "$said" >&2
done
check "and nothing changed" [ "$(rows)" = "$rows_before" ]
# 028: sessions made from now on have time-ordered (version 7) ids; the others keep theirs.
new=$(q -c "SELECT id FROM mp_create_session('$digest'::bytea, 'sandbox', 'after', NULL, NULL,
	NULL, 1800, '{sku-1}', '{Tea}', '{1250}', NULL)")
check "a session made after the upgrade has a version 7 id" \
	grep -qE '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' <<<"$new"
check "the sessions made before keep their version 4 ids" [ "$(q -c "SELECT count(*)
	FROM payment_sessions WHERE id <> '$new' AND substr(id::text, 15, 1) <> '4'")" = 0 ]
finish
