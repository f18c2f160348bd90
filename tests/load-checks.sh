# Shared by the tests that run tests/load/mpload against a stack and check the database
# against its journal afterwards (tests/faults.sh, tests/ha.sh); sourced, after tests/lib.sh
# and the stack's stack.env.
#   setup_merchant NAME   a marketplace merchant (API key, webhook endpoint at the stack's
#                         receiver, settlement with PIN 2468, $deposit units), 6 vendors and
#                         $conns customer wallets of $wallet_deposit (PIN 1357): sets merchant,
#                         key, merchant_acct, vendors, wallets
#   start_load [ARGS]     mpload in the background (create=1,pay=2,transfer=1, retries for 40 s),
#                         journal in $dir/journal.tsv: sets load_pid
#   probe                 ms until a new create-session is answered 200 (up to 15 s)
#   journal_count A B S   requests of the journal started in [A, B] ms answered S ("0": none)
#   lost_writes           how many writes answered as done the database lacks
#   db_checks WHAT [1]    the database against the journal (1: also what holds once it stopped)
#   events_delivered SECS every event of the merchant made before the call delivered within SECS
#   show_tails DIR FILE...  the last lines of each file, for a failed run
#   receiver_got_events   the receiver logged a 204 for every payment.succeeded event
# Needs: srcdir, builddir, and then dir, conns, deposit, wallet_deposit. Sets stack (the
# stack's script) and mpload (MPLOAD, default the one built).

stack="$srcdir/tests/stack.sh"
mpload=${MPLOAD:-$builddir/tests/load/mpload}

say() { echo "# $*"; }
now_ms() { date +%s%3N; }
iso_of_ms() { date -u -d "@$(($1 / 1000)).$(printf %03d $(($1 % 1000)))" +%Y-%m-%dT%H:%M:%S.%3NZ; }
ctl() { "$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" "$@"; }
sql() { psql -qAtX -v ON_ERROR_STOP=1 "$@"; }
ledger_verify() { ctl ledger verify >/dev/null; }
count_words() { wc -w <<<"$1" | tr -d ' '; }
# Milliseconds until a new create-session is answered 200 (up to 15 s); fails after that.
probe() {
	local t0 code end
	t0=$(now_ms)
	end=$((t0 + 15000))
	while [ "$(now_ms)" -lt $end ]; do
		code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' -H "Authorization: API-KEY $key" \
			-H 'Content-Type: application/json' --data \
			'{"items":[{"id":"probe","name":"Probe","price":1.00}]}' \
			"$MARKETPAY_BASE_URL/api/v1/payment/create-session" || true)
		[ "$code" = 200 ] && { echo $(($(now_ms) - t0)); return 0; }
		sleep 0.1
	done
	echo 15000
	return 1
}

# Requests of the journal in [from, to] ms with the given status ("503"; "0": no answer).
journal_count() {
	head -n "$(wc -l <"$dir/journal.tsv")" "$dir/journal.tsv" |
		awk -F'\t' -v a="$1" -v b="$2" -v s="$3" '$1 >= a && $1 <= b && $3 == s { n++ }
			END { print n + 0 }'
}

# show_tails DIR FILE...: the last lines of each (a failed run's logs), on stderr.
show_tails() {
	local d=$1 f
	shift
	for f in "$@"; do
		echo "--- last lines of $d/$f ---" >&2
		tail -n 15 "$d/$f" >&2 2>/dev/null || true
	done
}

# Byte size of a log now, to read what a fault added to it later.
mark() { stat -c %s "$1"; }
since() { tail -c +$(($2 + 1)) "$1"; }

# SQL: the journal as of journal_snap, as the temporary table j.
journal_table() {
	cat <<SQL
CREATE TEMP TABLE j (start_ms bigint, kind text, status int, lat_us bigint, try int, key text,
    ids text, amount bigint, request_id text, note text, lag_us bigint);
\copy j FROM '$dir/journal.snap' (FORMAT text, NULL '-')
SQL
}

# The complete lines of the journal so far, in $dir/journal.snap.
journal_snap() { head -n "$(wc -l <"$dir/journal.tsv")" "$dir/journal.tsv" >"$dir/journal.snap"; }

# Writes the load was told succeeded (a 200 create-session or transfer, a payment confirmed to
# the customer) that the database lacks.
lost_writes() {
	journal_snap
	sql <<SQL
$(journal_table)
SELECT (SELECT count(*) FROM j LEFT JOIN payment_sessions s ON s.id = j.ids::uuid
        WHERE j.kind = 'create' AND j.status = 200 AND s.id IS NULL)
    + (SELECT count(*) FROM (SELECT DISTINCT ids FROM j WHERE kind = 'pay'
        AND note IN ('paid', 'already_paid')) p LEFT JOIN payment_sessions s
        ON s.id = p.ids::uuid WHERE s.status IS DISTINCT FROM 'paid')
    + (SELECT count(*) FROM j, unnest(string_to_array(j.ids, ',')) x(id)
        LEFT JOIN transfers t ON t.id = x.id
        WHERE j.kind = 'transfer' AND j.status = 200 AND t.id IS NULL);
SQL
}

# The database against the journal so far (final=1: also what holds only once the load has
# stopped). Each query prints "name|bad|total"; bad must be 0.
db_checks() {
	local what=$1 final=${2:-0} out more name bad total
	journal_snap
	out=$(sql <<SQL
-- One snapshot for every query: a payment committed meanwhile must not look half done.
BEGIN ISOLATION LEVEL REPEATABLE READ;
$(journal_table)
CREATE TEMP TABLE pt AS SELECT reference, count(*) AS n, min(id) AS tx FROM ledger_transactions
    WHERE kind = 'payment' GROUP BY reference;
CREATE TEMP TABLE ev AS SELECT body::json->'data'->>'session_id' AS sid, count(*) AS n
    FROM webhook_events WHERE merchant_id = $merchant AND type = 'payment.succeeded' GROUP BY 1;
-- Transfers the merchant's stored Idempotency-Key answers name, with their ledger transaction.
CREATE TEMP TABLE kt AS SELECT k.key, t.ledger_transaction_id AS tx
    FROM idempotency_keys k, json_array_elements(k.body::json->'transaction_detail') d,
         transfers t
    WHERE k.merchant_id = $merchant AND k.key LIKE 'tr-%' AND t.id = d->>'transaction_id'
    GROUP BY 1, 2;
CREATE TEMP TABLE tx AS SELECT id AS tx FROM ledger_transactions
    WHERE kind = 'transfer' AND merchant_id = $merchant;
-- Every 200 create-session names a stored session of this merchant with the amount sent.
SELECT 'every 200 create-session is a stored session with its amount',
    count(*) FILTER (WHERE s.id IS NULL OR s.amount <> j.amount OR s.merchant_id <> $merchant),
    count(*)
FROM j LEFT JOIN payment_sessions s ON s.id = j.ids::uuid
WHERE j.kind = 'create' AND j.status = 200;
-- One session per create operation (its user_id), also when it was sent again.
SELECT 'no session created twice by a retried create-session', count(*), NULL FROM (
    SELECT user_id FROM payment_sessions WHERE merchant_id = $merchant AND user_id LIKE 'u-%'
    GROUP BY user_id HAVING count(*) > 1) x;
SELECT 'every Idempotency-Key of create-session answered with one session', count(*), NULL FROM (
    SELECT key FROM j WHERE kind = 'create' AND status = 200 GROUP BY key
    HAVING count(DISTINCT ids) > 1) x;
-- A payment the customer saw succeed (303 to the success URL, or "Already paid" on a retry)
-- is a paid session with exactly one payment transaction, the one it names.
SELECT 'every confirmed payment is a paid session with one ledger transaction',
    count(*) FILTER (WHERE s.status IS DISTINCT FROM 'paid' OR pt.n IS DISTINCT FROM 1
        OR s.transaction_id IS DISTINCT FROM pt.tx),
    count(*)
FROM (SELECT DISTINCT ids AS sid FROM j WHERE kind = 'pay' AND note IN ('paid', 'already_paid')) p
LEFT JOIN payment_sessions s ON s.id = p.sid::uuid
LEFT JOIN pt ON pt.reference = 'session ' || p.sid;
SELECT 'no session paid twice (whole database)', count(*), NULL FROM pt WHERE n > 1;
SELECT 'every paid session has exactly one payment.succeeded event', count(*), NULL
FROM payment_sessions s LEFT JOIN ev ON ev.sid = s.id::text
WHERE s.merchant_id = $merchant AND s.status = 'paid' AND ev.n IS DISTINCT FROM 1;
SELECT 'no payment.succeeded event without a paid session', count(*), NULL
FROM ev LEFT JOIN payment_sessions s ON s.id::text = ev.sid
WHERE s.status IS DISTINCT FROM 'paid';
-- Every 200 transfer: its tr_ ids are stored, in one ledger transaction of this merchant,
-- adding up to the total sent.
WITH r AS (SELECT row_number() OVER () AS rn, key, ids, amount FROM j
           WHERE kind = 'transfer' AND status = 200),
     e AS (SELECT r.rn, r.amount, x.id FROM r, unnest(string_to_array(r.ids, ',')) AS x(id)),
     m AS (SELECT e.rn, count(t.id) AS found, count(*) AS n,
                  count(DISTINCT t.ledger_transaction_id) AS txs, sum(t.amount) AS total,
                  max(e.amount) AS want, bool_and(t.merchant_id = $merchant) AS mine
           FROM e LEFT JOIN transfers t ON t.id = e.id GROUP BY e.rn)
SELECT 'every 200 transfer is stored with its tr_ ids and amounts',
    count(*) FILTER (WHERE found <> n OR txs <> 1 OR total <> want OR mine IS NOT TRUE),
    count(*) FROM m;
SELECT 'every Idempotency-Key of a transfer answered with the same tr_ ids', count(*), NULL FROM (
    SELECT key FROM j WHERE kind = 'transfer' AND status = 200 GROUP BY key
    HAVING count(DISTINCT ids) > 1) x;
-- No transfer applied twice: each transfer transaction of the merchant belongs to exactly one
-- stored key, and no key to two transactions.
SELECT 'no transfer applied twice (one ledger transaction per Idempotency-Key)',
    (SELECT count(*) FROM tx WHERE tx NOT IN (SELECT tx FROM kt))
    + (SELECT count(*) FROM (SELECT tx FROM kt GROUP BY tx HAVING count(*) > 1) a)
    + (SELECT count(*) FROM (SELECT key FROM kt GROUP BY key HAVING count(*) > 1) b),
    (SELECT count(*) FROM tx);
-- Balances, in one snapshot: the merchant's = deposit + paid sessions - transfers; the
-- vendors hold what was transferred; the wallets lost what they paid.
SELECT 'merchant balance = deposit + payments - transfers',
    (SELECT balance FROM accounts WHERE account_number = '$merchant_acct')
    - ($deposit * 100 + (SELECT coalesce(sum(amount), 0) FROM payment_sessions
        WHERE merchant_id = $merchant AND status = 'paid')
      - (SELECT coalesce(sum(amount), 0) FROM transfers WHERE merchant_id = $merchant)), NULL;
SELECT 'vendor balances = transfers to them',
    (SELECT sum(balance) FROM accounts WHERE account_number = ANY(string_to_array('$vendors', ',')))
    - (SELECT coalesce(sum(amount), 0) FROM transfers WHERE merchant_id = $merchant), NULL;
SELECT 'wallets paid exactly the sessions paid by wallet',
    (SELECT sum($wallet_deposit * 100 - balance) FROM accounts
        WHERE account_number = ANY(string_to_array('$wallets', ',')))
    - (SELECT coalesce(sum(amount), 0) FROM payment_sessions
        WHERE merchant_id = $merchant AND status = 'paid' AND payment_method = 'wallet'), NULL;
COMMIT;
SQL
) || { not_ok "$what: the check queries failed"; return 0; }
	if [ "$final" = 1 ]; then
		more=$(sql <<SQL
$(journal_table)
-- With the load stopped, every operation has its last answer: nothing was applied that the
-- client did not see succeed, and the sums of the journal are the database's.
SELECT 'every paid session was confirmed to the customer', count(*), NULL
FROM payment_sessions s WHERE s.merchant_id = $merchant AND s.status = 'paid'
    AND s.user_id LIKE 'u-%'
    AND NOT EXISTS (SELECT 1 FROM j WHERE kind = 'pay' AND note IN ('paid', 'already_paid')
        AND j.ids = s.id::text);
SELECT 'every applied transfer was answered 200 to the client', count(*), NULL
FROM (SELECT DISTINCT key FROM idempotency_keys WHERE merchant_id = $merchant AND key LIKE 'tr-%') k
WHERE NOT EXISTS (SELECT 1 FROM j WHERE kind = 'transfer' AND status = 200 AND j.key = k.key);
SELECT 'merchant balance = deposit + payments - transfers, as the journal has them',
    (SELECT balance FROM accounts WHERE account_number = '$merchant_acct')
    - ($deposit * 100
       + (SELECT coalesce(sum(c.amount), 0) FROM (SELECT DISTINCT ids FROM j WHERE kind = 'pay'
            AND note IN ('paid', 'already_paid')) p
          JOIN (SELECT DISTINCT ids, amount FROM j WHERE kind = 'create' AND status = 200) c
          ON c.ids = p.ids)
       - (SELECT coalesce(sum(amount), 0) FROM (SELECT DISTINCT key, amount FROM j
            WHERE kind = 'transfer' AND status = 200) t)), NULL;
SQL
) || { not_ok "$what: the final check queries failed"; more=""; }
		out="$out
$more"
	fi
	while IFS='|' read -r name bad total; do
		[ -n "$name" ] || continue
		check "$what: $name (${bad} bad${total:+ of $total})" [ "$bad" = 0 ]
	done <<<"$out"
	check "$what: marketpayctl ledger verify" ledger_verify
}

# Waits up to secs for every event of the merchant created before the call to be delivered.
# The events made meanwhile are not waited for: with the load going on, each is on its way
# for a delivery's time, so some always are, and a cutoff moving with the clock is met only
# while a delivery takes less than a psql's start (tests/events-delivered.sh).
events_delivered() {
	local secs=$1 end left upto
	upto=$(now_ms)
	end=$((SECONDS + secs))
	while :; do
		left=$(sql -c "SELECT count(*) FROM webhook_events WHERE merchant_id = $merchant
			AND status <> 'delivered' AND created_at <= to_timestamp($upto / 1000.0)")
		[ "$left" = 0 ] && { say "events delivered $(($(now_ms) - upto)) ms into the wait"; return 0; }
		[ $SECONDS -lt $end ] || { echo "# $left events not delivered" >&2; return 1; }
		sleep 0.5
	done
}

setup_merchant() {
	local a
	merchant=$(ctl merchant create --name "$1")
	key=$(ctl key create "$merchant")
	ctl merchant webhook "$merchant" --url "$MARKETPAY_WEBHOOK_RECEIVER" >/dev/null
	printf 2468 | ctl merchant pin "$merchant" >/dev/null
	ctl merchant settlement "$merchant" on >/dev/null
	merchant_acct=$(ctl account create --kind merchant --merchant "$merchant")
	ctl account deposit "$merchant_acct" "$deposit" >/dev/null
	vendors="" wallets=""
	for _ in 1 2 3 4 5 6; do
		vendors="$vendors${vendors:+,}$(ctl account create --kind vendor)"
	done
	for _ in $(seq 1 "$conns"); do
		a=$(ctl account create --kind customer)
		ctl account deposit "$a" "$wallet_deposit" >/dev/null
		echo 1357 | ctl account pin "$a" >/dev/null
		wallets="$wallets${wallets:+,}$a"
	done
}

start_load() {
	MPLOAD_KEY=$key MPLOAD_PIN=2468 MPLOAD_VENDORS=$vendors MPLOAD_WALLETS=$wallets \
		MPLOAD_WALLET_PIN=1357 "$mpload" -c "$conns" -d 0 -m create=1,pay=2,transfer=1 -R 40 \
		-j "$dir/journal.tsv" "$@" >"$dir/mpload.out" 2>&1 &
	load_pid=$!
}

receiver_got_events() {
	local out missing events dup
	# The receiver's own log: each event's webhook-id answered 204 at least once.
	sed -n 's/^{"id":"\(evt_[0-9a-f]*\)".*"status":"\([0-9]*\)".*/\1\t\2/p' "$dir/webhooks.log" \
		>"$dir/received.tsv"
	out=$(sql <<SQL
CREATE TEMP TABLE got (id text, status int);
\copy got FROM '$dir/received.tsv'
SELECT count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM got WHERE got.id = e.id
    AND got.status = 204)), count(*),
    (SELECT count(*) FROM (SELECT id FROM got WHERE status = 204 GROUP BY id
        HAVING count(*) > 1) d)
FROM webhook_events e WHERE e.merchant_id = $merchant AND e.type = 'payment.succeeded';
SQL
	)
	IFS='|' read -r missing events dup <<<"$out"
	say "webhooks: $events payment.succeeded events, $dup delivered more than once"
	check "$1: the receiver got every payment.succeeded event ($missing of $events missing)" \
		test "$missing" = 0 -a "$events" -gt 0
}
