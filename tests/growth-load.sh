#!/usr/bin/env bash
# The growth benchmark's loader (bench/growth-load, bench/growth-load.sql) at a small scale,
# so that it cannot silently rot: a stack of its own, GROWTH_SESSIONS (default 20000)
# sessions loaded with every trigger and foreign key firing, then what bench/growth relies
# on: marketpayctl ledger verify and db status accept the database, the counts and shares
# the loader promises, the merchants' settlement balances equal to their payments, and
# through the API (a key made for a loaded merchant) the sessions, events and
# balance-transactions lists, GET of a loaded session and of its event, and the balance.
# Then the same load with the triggers off (session_replication_role = replica, as
# bench/growth loads its 10 million) into a second database state gives the same verdicts.
# One result line per check, then "N passed, N failed". Environment: KEEP=1.
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-.}" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
export LC_ALL=C MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1
export stack="$srcdir/tests/stack.sh"
sessions=${GROWTH_SESSIONS:-20000}
[ $((sessions % 20)) = 0 ] || bail "GROWTH_SESSIONS must be a multiple of 20"
# shellcheck disable=SC2154 # dir and failed: tests/lib.sh's
own_cleanup() { [ "$failed" = 0 ] || cat "$dir/load.log" >&2 2>/dev/null || true; }
own_stack growth-load
ctl() { "$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" "$@"; }
quiet() { "$@" >>"$dir/load.log" 2>&1; }
q() { psql -X -qAt -v ON_ERROR_STOP=1 -c "$1"; }
api() { # api PATH: the JSON reply of a GET with the loaded merchant's key (fails on non-2xx)
	curl -fsS -H "Authorization: API-KEY $key" "$MARKETPAY_BASE_URL/api/v1/payment/$1"
}

# load TRIGGERS: the loader into the stack's database; the checks of the loaded state.
load() {
	local what="triggers $1" m top paid first mine
	# This load's merchants: those made after the ones already there.
	first=$(q "SELECT coalesce(max(id), 0) FROM merchants")
	mine="merchant_id > $first"
	check "$what: $sessions sessions load" quiet env GROWTH_TRIGGERS="$1" \
		GROWTH_BATCH=$((sessions / 4)) "$srcdir/bench/growth-load" "$dir/stack" "$sessions" 40
	check "$what: marketpayctl ledger verify" quiet ctl ledger verify
	check "$what: marketpayctl db status" quiet ctl db status
	paid=$((sessions * 13 / 20))
	check "$what: sessions, items, payments and their entries" test \
		"$(q "SELECT count(*), sum((SELECT count(*) FROM session_items i WHERE i.session_id = s.id)),
			count(*) FILTER (WHERE status = 'paid'), count(*) FILTER (WHERE status = 'open')
			FROM payment_sessions s WHERE $mine")" \
		= "$sessions|$((sessions * 2))|$paid|0"
	check "$what: one payment transaction with 2 entries per paid session" test \
		"$(q "SELECT count(DISTINCT t.id), count(e.id) FROM ledger_transactions t
			JOIN payment_sessions s ON s.transaction_id = t.id JOIN ledger_entries e ON e.transaction_id = t.id
			WHERE s.$mine")" = "$paid|$((paid * 2))"
	check "$what: an event per session, 3 in 10 with an Idempotency-Key record" test \
		"$(q "SELECT (SELECT count(*) FROM webhook_events WHERE $mine AND status IN ('delivered', 'dead')),
			(SELECT count(*) FROM idempotency_keys WHERE $mine)")" = "$sessions|$((sessions * 3 / 10))"
	check "$what: a webhook endpoint row for each merchant (their insert trigger)" test \
		"$(q "SELECT count(*) FROM webhook_endpoints WHERE $mine")" = 40
	check "$what: each settlement balance is the sum of its merchant's payments" test \
		"$(q "SELECT count(*) FROM accounts a WHERE a.kind = 'merchant' AND a.balance <>
			(SELECT coalesce(sum(amount), 0) FROM payment_sessions s WHERE s.merchant_id = a.merchant_id
			AND s.status = 'paid')")" = 0
	# The API, for the merchant with the most sessions.
	top=$(q "SELECT merchant_id FROM payment_sessions WHERE $mine GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
	key=$(ctl key create "$top")
	m=$(api "sessions?limit=3")
	check "$what: sessions list, newest first" test \
		"$(jq -r '[.success, (.data | length), .has_more, (.data[0].created_at > .data[1].created_at)] | @tsv' <<<"$m")" \
		= "$(printf 'true\t3\ttrue\ttrue')"
	local sid
	sid=$(q "SELECT id FROM payment_sessions WHERE merchant_id = $top AND status = 'paid' ORDER BY created_at LIMIT 1")
	check "$what: GET of a loaded paid session" test \
		"$(api "sessions/$sid" | jq -r '[.session_id, .status, (.items | length)] | @tsv')" = "$(printf '%s\tpaid\t2' "$sid")"
	check "$what: events list and GET of an event" test "$(api "events?limit=2" |
		jq -r '.data[0].id' | { read -r e; api "events/$e" | jq -r .success; })" = true
	check "$what: balance-transactions list" test "$(api "balance-transactions?limit=5" | jq -r '.data | length')" = 5
	check "$what: GET balance: the merchant's payments" test "$(api balance | jq -r .balance.available)" \
		= "$(q "SELECT mp_money_text(sum(amount)::bigint) FROM payment_sessions WHERE merchant_id = $top AND status = 'paid'")"
}

load on
load off
finish
