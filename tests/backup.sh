#!/usr/bin/env bash
# Backups and point-in-time recovery as marketpay-backup(7) documents them, on a real stack
# (tests/stack.sh) whose PostgreSQL archives its WAL with the shipped settings
# (doc/backup/marketpay-archive.conf) into a pgBackRest repository configured by the shipped
# doc/backup/marketpay-pgbackrest.conf, paths pointed into a temporary directory:
#   - the key files backed up with the page's tar command; a full backup (the weekly timer's
#     command); tests/load/mpload (create-session, checkout payments, transfers with the PIN)
#     through nginx; a differential backup (the nightly one); the time T; more load; another
#     differential backup; the load stopped and every WAL segment archived (the webhook
#     daemon is stopped for the second before T, so some events are delivered after T);
#   - the disaster: the pool, the daemon and PostgreSQL stopped, the data directory and the
#     key files deleted; the keys restored from their tar, the cluster with
#     `pgbackrest restore --type=time --target=T` (which picks the backup before T), the
#     page's SQL run, the stack started again;
#   - checks: every create-session, payment and transfer acknowledged before T is there (the
#     payments paid), none sent after T is, nothing in the ledger or the sessions is newer
#     than T, `ledger verify` clean, `db status` exit 0, the keys byte-identical, the PIN key
#     the same, new payments and a transfer with the PIN served, their payment.succeeded
#     signed with the webhook secret given before the backup, their transaction ids new ones;
#     the events of before T that were delivered after it sent again with the same id.
# The shipped units are checked with systemd-analyze verify. One result line per check, then
# "N passed, N failed"; the figures (backup and restore times) as "# figures:" lines.
# Environment: KEEP=1 keeps the directory (own_stack removes it otherwise).
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-.}" && pwd)
export LC_ALL=C MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_WORKERS=3 \
	MP_CONF_EXTRA="webhook_poll_interval = 1"
conns=3 deposit=1000000 wallet_deposit=1000000
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
# shellcheck source=tests/load-checks.sh
. "$srcdir/tests/load-checks.sh"
examples=$srcdir/doc/backup
page=$srcdir/man/marketpay-backup.7

for bin in /usr/bin/pgbackrest "$mpload" "$builddir/marketpay-webhookd" /usr/bin/systemd-analyze; do
	[ -x "$bin" ] || bail "$bin is missing (dev/deps.sh installs pgbackrest and systemd)"
done

# As the postgres user when root (PostgreSQL and pgBackRest refuse root), as tests/stack.sh.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pgb() { as_pg pgbackrest --stanza=marketpay "$@"; }
# The page's one-line command that starts with $1 (tar), its paths pointed at this stack.
page_command() {
	local line
	line=$(grep -m1 -E "^$1 " "$page") || bail "marketpay-backup(7) shows no '$1' command"
	line=${line//\/etc\/marketpay\/ENV/$data}
	line=${line//\/root\/marketpay-keys-ENV.tar.gz/$dir/keys.tar.gz}
	printf '%s' "$line"
}
load_pid=""
own_cleanup() {
	[ -z "$load_pid" ] || kill -KILL "$load_pid" 2>/dev/null || true
	if [ "${KEEP:-0}" = 1 ]; then cp -a "$dir" "$dir.kept" && echo "backup: kept $dir.kept" >&2; fi
}
own_stack backup
data=$MARKETPAY_STACK_DIR
pgdata=$data/pg/data
pb=$dir/pgbackrest
say "figures: stack in $dir"

# --- The shipped units: the timers start the template's full and diff instances.
units=$dir/units
mkdir -p "$units"
for t in full diff; do
	sed "s/%i/$t/g" "$srcdir/systemd/marketpay-backup@.service" >"$units/marketpay-backup@$t.service"
	cp "$srcdir/systemd/marketpay-backup-$t.timer" "$units/"
	check "marketpay-backup-$t.timer starts marketpay-backup@$t.service" \
		grep -qx "Unit=marketpay-backup@$t.service" "$units/marketpay-backup-$t.timer"
done
out=$(cd "$units" && systemd-analyze verify --man=no ./*.timer ./*.service 2>&1) || true
check "systemd-analyze verify: the backup service and timers${out:+: $out}" [ -z "$out" ]
check "the service runs the backup of the instance's type as postgres" bash -c \
	"grep -qx 'ExecStart=/usr/bin/pgbackrest --stanza=marketpay --type=%i backup' \
	'$srcdir/systemd/marketpay-backup@.service' && grep -qx 'User=postgres' \
	'$srcdir/systemd/marketpay-backup@.service'"

# --- pgBackRest as shipped, its repository, logs and lock in $pb; the cluster archiving with
# the shipped settings (archive_mode needs a restart). PGBACKREST_CONFIG reaches the
# archive_command through PostgreSQL's environment, so archive_command stays as shipped.
mkdir -p "$pb/repo" "$pb/log" "$pb/lock"
conf=$pb/pgbackrest.conf
sed -e "s|^repo1-path=.*|repo1-path=$pb/repo|" -e "s|^pg1-path=.*|pg1-path=$pgdata|" \
	-e "s|^pg1-socket-path=.*|pg1-socket-path=$data/pg|" \
	-e "s|^\[global\]$|[global]\nlog-path=$pb/log\nlock-path=$pb/lock|" \
	"$examples/marketpay-pgbackrest.conf" >"$conf"
for want in "repo1-path=$pb/repo" "pg1-path=$pgdata" "pg1-socket-path=$data/pg" "log-path=$pb/log"; do
	grep -qx "$want" "$conf" || bail "cannot point marketpay-pgbackrest.conf's paths here ($want)"
done
[ "$(id -u)" = 0 ] && chown -R postgres: "$pb"
export PGBACKREST_CONFIG=$conf
"$stack" pg-stop "$data"
cp "$examples/marketpay-archive.conf" "$pgdata/marketpay-archive.conf"
echo "include 'marketpay-archive.conf'" >>"$pgdata/postgresql.conf"
[ "$(id -u)" = 0 ] && chown postgres: "$pgdata/marketpay-archive.conf"
"$stack" pg-start "$data"
check "PostgreSQL archives with the shipped settings" [ "$(sql -c 'SHOW archive_command')" = \
	"$(sed -n "s/^archive_command = '\(.*\)'$/\1/p" "$examples/marketpay-archive.conf")" ]
check "pgbackrest stanza-create" pgb stanza-create
check "pgbackrest check (a WAL segment archived)" pgb check

# --- What the restore must bring back: a merchant with a webhook secret (shown once), its
# PIN, wallets, vendors; the PIN public key; the key files, backed up with the page's tar.
setup_merchant "Backup Shop"
secret=$(ctl merchant webhook "$merchant" --url "$MARKETPAY_WEBHOOK_RECEIVER" | grep -oE 'whsec_[A-Za-z0-9+/=]+')
check "the merchant's webhook secret" [ -n "$secret" ]
pubkey() {
	curl -fsS -H "Authorization: API-KEY $key" "$MARKETPAY_BASE_URL/api/v1/payment/pin-public-key" |
		json public_key
}
pubkey >"$dir/pin-public.pem"
mapfile -t key_files < <(sed -nE 's/^(secrets_key_file|pepper_file|pin_key_file) = //p' "$MARKETPAY_CONFIG")
sha256sum "${key_files[@]}" >"$dir/keys.sha256"
backup_keys=$(page_command "tar -czf")
names_all() { # names_all COMMAND FILE...: COMMAND names the base name of each FILE
	local f
	for f in "${@:2}"; do grep -qw -- "$(basename "$f")" <<<"$1" || return 1; done
}
check "the page's key backup names every key file of the config" names_all "$backup_keys" "${key_files[@]}"
(umask 077; eval "$backup_keys")
check "the key files are backed up ($(tar -tzf "$dir/keys.tar.gz" | tr '\n' ' '))" \
	[ "$(tar -tzf "$dir/keys.tar.gz" | wc -l)" -ge 3 ]

t0=$(now_ms)
check "full backup (the weekly timer's command)" pgb --type=full backup
say "figures: full backup $(($(now_ms) - t0)) ms"

# --- Traffic, a differential backup, T, more traffic, another differential backup.
start_load
sleep 3
t0=$(now_ms)
check "differential backup under load (the nightly timer's command)" pgb --type=diff backup
before_t=$(pgb info --output=json | jq -r '.[0].backup[-1].label')
say "figures: differential backup $(($(now_ms) - t0)) ms"
sleep 1
# The daemon stopped across T: the events of the second before T are delivered after it.
"$stack" webhookd-stop "$data"
sleep 1
# T from PostgreSQL's clock (the one commit times come from), as ms and as --target.
IFS='|' read -r t_ms target < <(sql -c "SELECT (extract(epoch FROM c) * 1000)::bigint,
	to_char(c AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'
	FROM clock_timestamp() c")
say "figures: target time T = $target"
sleep 1
"$stack" webhookd-start "$data"
sleep 3
check "differential backup after T" pgb --type=diff backup
sleep 1
kill -TERM "$load_pid"
load_rc=0
wait "$load_pid" || load_rc=$?
load_pid=""
check "load: every operation reached its goal (mpload exit $load_rc)" [ "$load_rc" = 0 ]
cat "$dir/mpload.out"
# Every transaction id a merchant was told of, before the failure.
events_delivered 30 || true
seen_tx=$(jq -r 'select(.status == "204") | .body | fromjson? | select(.type == "payment.succeeded")
	| .data.transaction_id' "$data/webhooks.log" | sort -n | tail -1)
check "pgbackrest check: every WAL segment up to now archived" pgb check
journal_snap
cp "$dir/journal.snap" "$dir/journal.before"

# --- The disaster: programs and PostgreSQL stopped, data directory and key files gone.
"$stack" pool-stop "$data"
"$stack" webhookd-stop "$data"
"$stack" pg-stop "$data"
rm -rf "$pgdata"
rm -f "${key_files[@]}"

# --- The restore, as the page says: keys from their tar, the cluster to T, the SQL.
t0=$(now_ms)
eval "$(page_command "tar -xzf")"
check "the key files restored from their tar are byte-identical" sha256sum -c --quiet "$dir/keys.sha256"
as_pg install -d -m 0700 "$pgdata"
pgb --type=time "--target=$target" --target-action=promote restore >"$dir/restore.out" 2>&1 ||
	{ cat "$dir/restore.out" >&2; bail "pgbackrest restore --type=time failed"; }
check "the restore picked the differential backup before T ($before_t), not the one after" \
	grep -q "restore backup set $before_t" "$pb/log/marketpay-restore.log"
"$stack" pg-start "$data"
check "recovery reached T and promoted" wait_for 60 bash -c \
	"[ \"\$(psql -qAtX -c 'SELECT pg_is_in_recovery()')\" = f ]"
say "figures: restore to T until writable $(($(now_ms) - t0)) ms"
check "the page's SQL after a restore runs" sql -f "$examples/marketpay-after-restore.sql"
check "marketpayctl db status exits 0" ctl db status
check "marketpayctl ledger verify is clean" ledger_verify

# --- The database against the journal: acknowledged before T there, sent after T not.
out=$(sql <<SQL
$(journal_table)
CREATE TEMP TABLE b AS SELECT * FROM j WHERE start_ms + lat_us / 1000 < $t_ms;
CREATE TEMP TABLE a AS SELECT * FROM j WHERE start_ms > $t_ms;
SELECT 'every create-session answered 200 before T is stored',
    count(*) FILTER (WHERE s.id IS NULL), count(*)
FROM b LEFT JOIN payment_sessions s ON s.id = b.ids::uuid WHERE b.kind = 'create' AND b.status = 200;
SELECT 'every payment confirmed before T is a paid session',
    count(*) FILTER (WHERE s.status IS DISTINCT FROM 'paid'), count(*)
FROM b LEFT JOIN payment_sessions s ON s.id = b.ids::uuid
WHERE b.kind = 'pay' AND b.note IN ('paid', 'already_paid');
SELECT 'every transfer answered 200 before T is stored',
    count(*) FILTER (WHERE t.id IS NULL), count(*)
FROM b, unnest(string_to_array(b.ids, ',')) x(id) LEFT JOIN transfers t ON t.id = x.id
WHERE b.kind = 'transfer' AND b.status = 200;
SELECT 'no create-session sent after T is stored',
    count(*) FILTER (WHERE s.id IS NOT NULL), count(*)
FROM a LEFT JOIN payment_sessions s ON s.id = a.ids::uuid WHERE a.kind = 'create' AND a.status = 200;
SELECT 'no payment first tried after T is paid',
    count(*) FILTER (WHERE s.status = 'paid'), count(*)
FROM a LEFT JOIN payment_sessions s ON s.id = a.ids::uuid
WHERE a.kind = 'pay' AND a.note = 'paid' AND a.try = 1;
SELECT 'no transfer sent after T is stored', count(*) FILTER (WHERE t.id IS NOT NULL), count(*)
FROM a, unnest(string_to_array(a.ids, ',')) x(id) LEFT JOIN transfers t ON t.id = x.id
WHERE a.kind = 'transfer' AND a.status = 200;
SELECT 'no ledger transaction or session newer than T',
    (SELECT count(*) FROM ledger_transactions WHERE created_at > to_timestamp($t_ms / 1000.0))
    + (SELECT count(*) FROM payment_sessions WHERE created_at > to_timestamp($t_ms / 1000.0)), NULL;
SQL
) || bail "the check queries failed"
# none bad, and (where counted) some to check
none_of_some() { [ "$1" = 0 ] && [ "${2:-1}" != 0 ]; }
while IFS='|' read -r name bad total; do
	[ -n "$name" ] || continue
	check "restored: $name (${bad} bad${total:+ of $total})" none_of_some "$bad" "$total"
done <<<"$out"

# --- The stack again, on the restored database and keys.
"$stack" pool-start "$data"
"$stack" webhookd-start "$data"
check "the restored stack answers create-session" wait_for 20 probe
check "the PIN public key is the one from before the backup (pin-key.pem)" \
	[ "$(pubkey)" = "$(cat "$dir/pin-public.pem")" ]
mark_hooks=$(mark "$data/webhooks.log")
: >"$dir/journal.tsv"
start_load -m pay=2,transfer=1
sleep 4
kill -TERM "$load_pid"
load_rc=0
wait "$load_pid" || load_rc=$?
load_pid=""
journal_snap
check "after the restore: payments and transfers with the PIN (pin-pepper) all succeed (mpload exit $load_rc)" \
	[ "$load_rc" = 0 ]
check "after the restore: some transfers answered 200" \
	[ "$(awk -F'\t' '$2 == "transfer" && $3 == 200' "$dir/journal.snap" | wc -l)" -gt 0 ]
check "after the restore: every event delivered" events_delivered 30
# Each new payment.succeeded, signed with the secret of before the backup (secrets.key
# unsealed it), with a transaction id no merchant saw before the failure.
awk -F'\t' '$2 == "pay" && $10 == "paid" { print $7 }' "$dir/journal.snap" >"$dir/paid.after"
hexkey=$(printf %s "${secret#whsec_}" | base64 -d | xxd -p -c 256)
hmac() { printf '%s.%s.%s' "$1" "$2" "$3" | openssl dgst -sha256 -binary -mac HMAC -macopt "hexkey:$hexkey" | base64; }
since "$data/webhooks.log" "$mark_hooks" | jq -r 'select(.status == "204") | (.body | fromjson?) as $b
	| select($b.type == "payment.succeeded") | [.id, .timestamp, .signature, $b.data.session_id,
	$b.data.transaction_id, (.body | @base64)] | @tsv' >"$dir/hooks.after"
# Events delivered between T and the failure are pending again: delivered a second time.
head -c "$mark_hooks" "$data/webhooks.log" | jq -r 'select(.status == "204") | .id' | sort -u >"$dir/ids.before"
again=$(cut -f1 "$dir/hooks.after" | sort -u | comm -12 - "$dir/ids.before" | wc -l)
new=0 signed=0 fresh=0
while IFS=$'\t' read -r id ts sig _ tx body; do
	new=$((new + 1))
	grep -qF "v1,$(hmac "$id" "$ts" "$(base64 -d <<<"$body")")" <<<"$sig" && signed=$((signed + 1))
	[ "$tx" -gt "${seen_tx:-0}" ] && fresh=$((fresh + 1))
done < <(awk -F'\t' 'NR == FNR { paid[$1] = 1; next } $4 in paid' "$dir/paid.after" "$dir/hooks.after")
check "events made before T and delivered after it are sent again with the same webhook-id ($again)" \
	[ "$again" -gt 0 ]
check "after the restore: payment.succeeded delivered ($new)" [ "$new" -gt 0 ]
check "... each signed with the webhook secret of before the backup ($signed of $new)" [ "$signed" = "$new" ]
check "... each with a transaction id above any sent before the failure ($seen_tx) ($fresh of $new)" \
	[ "$fresh" = "$new" ]
check "after the restore: ledger verify is clean" ledger_verify
check "after the restore: archiving goes on (pgbackrest check)" pgb check
finish
