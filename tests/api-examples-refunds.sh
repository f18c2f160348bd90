# Sourced by tests/api-examples.sh, not a test of its own: marketpay-api(7) on refunds and
# transfer reversals, run against the same stack with the script's helpers and accounts.
#
#   - EXAMPLES: the refund (with a reversal of the first transfer of the transfer example),
#     its lookup, the reversal of the second transfer and the refund of the rest run on the
#     session the examples made and paid; each reply against the answer shown under it, the
#     money where the endpoint's section says it goes (the funding account for a test card,
#     the vendor, the merchant's net), the Idempotency-Key replays, the session read back
#     refunded, and the checkout page of a refunded session;
#   - WEBHOOKS: the refund.succeeded and transfer.reversed events of those, against the
#     page's example bodies, signed as the page's shell command computes;
#   - ENDPOINTS: every refusal the refund, refund lookup and reversal sections name, with its
#     message, provoked in a scenario whose numbers are the page's (a vendor's balance is
#     lowered by an operator's payout, accounts frozen from psql), each leaving the database
#     as it was; a wallet refund back to the wallet; a merchant whose balance covers only the
#     refund less what it takes back from a vendor; at the end every message of those
#     sections must have been met.

# subsection TITLE-START: the source lines of the .Ss whose title starts so, un-escaped.
subsection() {
	awk -v s=".Ss $1" '/^\.S[sh] /{ on = (index($0, s) == 1); next } on' "$page" | unescape
}
refund_text=$(subsection 'POST /api/v1/payment/sessions/ Ns Ar session_id Ns /refunds')
lookup_text=$(subsection 'GET /api/v1/payment/refunds/')
reversal_text=$(subsection 'POST /api/v1/payment/transfers/')
[ -n "$refund_text" ] && [ -n "$lookup_text" ] && [ -n "$reversal_text" ] ||
	die "ENDPOINTS has the refund, refund lookup and reversal sections"
# The 200's message a section names (the .Ql after .Li message).
reply_message() { grep -A1 -E '^\.Li message$' | grep -m1 -E '^\.Ql ' | macro_text; }
stored_status() { sql "SELECT status FROM payment_sessions WHERE id = '$1'"; }
uuid_re='[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
# Messages as the page writes them: a transfer id as tr_...
as_page() { sed -E 's/tr_[0-9a-f]{32}/tr_.../g'; }
minor() { sql "SELECT balance FROM accounts WHERE account_number = '$1'"; }
funding() { sql "SELECT coalesce(sum(balance), 0) FROM accounts WHERE kind = 'system' AND currency = '$currency'"; }
refund_call() { # refund_call KEY SESSION BODY [curl args]
	local k=$1 s=$2 b=$3
	shift 3
	call POST "/api/v1/payment/sessions/$s/refunds" -H "$(auth "$k")" -H "$JSON" "$@" -d "$b"
}
reverse_call() { # reverse_call KEY TRANSFER BODY [curl args]
	local k=$1 t=$2 b=$3
	shift 3
	call POST "/api/v1/payment/transfers/$t/reversals" -H "$(auth "$k")" -H "$JSON" "$@" -d "$b"
}

# --- EXAMPLES: a refund with a reversal, its lookup, a reversal, the rest ------------------

refund_cmd=$(block EXAMPLES 'refund-order-42-1') && refund_ans=$(answer_of "$refund_cmd") &&
	lookup_cmd=$(block EXAMPLES '/api/v1/payment/refunds/') &&
	reversal_cmd=$(block EXAMPLES '/reversals') && reversal_ans=$(answer_of "$reversal_cmd") &&
	rest_cmd=$(block EXAMPLES 'refund-order-42-2') &&
	refund_hook=$(block WEBHOOKS '"type":"refund.succeeded"') &&
	reversal_hook=$(block WEBHOOKS '"type":"transfer.reversed"') ||
	die "EXAMPLES shows a refund (key refund-order-42-1) and its answer, a refund lookup, a" \
		"reversal and its answer, the refund of the rest (key refund-order-42-2); WEBHOOKS a" \
		"refund.succeeded and a transfer.reversed body"
grep -qF '"amount":5.00' "$refund_cmd" && grep -qF '"amount":2.00' "$refund_cmd" &&
	grep -qF '"amount":3.00' "$reversal_cmd" ||
	die "the refund example refunds 5.00 taking 2.00 back, the reversal takes 3.00 back"
# The transfers of the transfer example: its first vendor's, its second vendor's.
tr0=$(jq -r '.transaction_detail[0].transaction_id' <<<"$moved") || true
tr1=$(jq -r '.transaction_detail[1].transaction_id' <<<"$moved") || true
# with_ids FILE TRANSFER [REFUND]: an example filled in, the page's ids made the real ones.
with_ids() {
	fill "$1" | sed -E "s/$uuid_re/$sid/g; s/tr_[0-9a-f]{32}/$2/g; s/re_[0-9a-f]{32}/${3:-re_}/g"
}

# The example session was paid with a test card: the funding account gets the money back.
fund0=$(funding) v0_0=$(minor "${vendors[0]}") m0=$(minor "$settlement")
with_ids "$refund_cmd" "$tr0" >"$dir/w/refund.sh"
check "EXAMPLES: the refund example runs" run_example refund
refunded=$(cat "$dir/w/refund.out")
same "EXAMPLES: the refund answers 200" "$(status_of "$(headers_of refund | tail -1)")" 200
like_page "EXAMPLES: the refund answer is the page's" "$refunded" "$(tr -d '\n' <"$refund_ans")"
same "the 200's message is the section's" "$(jq -r .message <<<"$refunded")" \
	"$(reply_message <<<"$refund_text")"
re1=$(jq -r '.refund.id // empty' <<<"$refunded") || true
same "a test-card refund credits the funding account, the vendor gives back 2.00, the merchant the net 3.00" \
	"$(($(funding) - fund0)) $((v0_0 - $(minor "${vendors[0]}"))) $((m0 - $(minor "$settlement")))" \
	"500 200 300"
before=$(footprint)
check "IDEMPOTENCY: the refund example run again" run_example refund
same "IDEMPOTENCY: ... gets the same refund, Idempotent-Replayed: true, and refunds nothing more" \
	"$(cat "$dir/w/refund.out") $(header_in "$(headers_of refund | tail -1)" Idempotent-Replayed) $(footprint)" \
	"$refunded true $before"

with_ids "$lookup_cmd" "$tr0" "$re1" >"$dir/w/lookup.sh"
check "EXAMPLES: the refund lookup example runs" run_example lookup
same "EXAMPLES: the lookup answers 200 with the refund and the section's message" \
	"$(status_of "$(headers_of lookup | tail -1)") $(jq -cS . "$dir/w/lookup.out")" \
	"200 $(jq -cS --arg m "$(reply_message <<<"$lookup_text")" '.message = $m' <<<"$refunded")"

v1_0=$(minor "${vendors[1]}") m0=$(minor "$settlement")
with_ids "$reversal_cmd" "$tr1" >"$dir/w/reversal.sh"
check "EXAMPLES: the reversal example runs" run_example reversal
reversed=$(cat "$dir/w/reversal.out")
like_page "EXAMPLES: the reversal answer is the page's" "$reversed" "$(tr -d '\n' <"$reversal_ans")"
same "the 200's message is the section's" "$(jq -r .message <<<"$reversed")" \
	"$(reply_message <<<"$reversal_text")"
same "a reversal moves 3.00 from the vendor to the merchant's settlement account" \
	"$((v1_0 - $(minor "${vendors[1]}"))) $(($(minor "$settlement") - m0))" "300 300"
before=$(footprint)
run_example reversal || true
same "IDEMPOTENCY: the reversal example run again gets the same reversal and moves nothing" \
	"$(cat "$dir/w/reversal.out") $(header_in "$(headers_of reversal | tail -1)" Idempotent-Replayed) $(footprint)" \
	"$reversed true $before"
reverse_call "$key" "$tr1" '{"amount":1.00}' -H "Idempotency-Key: $(grep -oE "Idempotency-Key: [^']+" \
	"$reversal_cmd" | cut -d' ' -f2)"
expect_error "IDEMPOTENCY: the reversal's key with another body: 422" 422 \
	"Idempotency-Key was already used with a different request"

with_ids "$rest_cmd" "$tr0" >"$dir/w/rest.sh"
check "EXAMPLES: the refund of the rest runs" run_example rest
same "... and refunds 7.50, everything left" "$(jq -r .refund.amount "$dir/w/rest.out")" 7.50
call GET "/api/v1/payment/sessions/$sid" -H "$(auth "$key")"
same "GET session: refunded, amount_refunded 12.50, both refunds oldest first" \
	"$(jq -c '[.status, .amount_refunded, [.refunds[].id]]' <<<"$body")" \
	"$(jq -nc --arg a "$re1" --arg b "$(jq -r .refund.id "$dir/w/rest.out")" '["refunded", "12.50", [$a, $b]]')"
call GET "/checkout/$sid"
if [ "$code" = 200 ] && grep -qF 'Payment refunded' <<<"$body" && ! grep -q '<form' <<<"$body"; then
	ok "HOSTED CHECKOUT: a refunded session's page says 'Payment refunded' and offers no form"
else
	fail "HOSTED CHECKOUT: a refunded session's page says 'Payment refunded' and offers no form" \
		"status $code: $(head -c 300 <<<"$body")"
fi
refund_call "$key" "$sid" '{}'
expect_error "400 once refunded in full" 400 \
	"amount: the payment session is refunded in full; nothing is left to refund"

# --- WEBHOOKS: the events of the examples ------------------------------------------------

expect_hook() { # expect_hook DESCRIPTION HOOK PAGE-BODY-FILE
	if [ -z "$2" ]; then
		fail "$1" "none in 10 s"
		return
	fi
	like_page "$1" "$(jq -r .body <<<"$2")" "$(fill "$3" | tr -d '\n')"
	same "$1: signed as the page's shell command computes" \
		"v1,$(page_signature "$2")" "$(jq -r .signature <<<"$2")"
}
expect_hook "WEBHOOKS: the refund's refund.succeeded is like the page's example" \
	"$(wait_hook refund.succeeded .data.refund.id "$re1")" "$refund_hook"
expect_hook "WEBHOOKS: the reversal's transfer.reversed is like the page's example" \
	"$(wait_hook transfer.reversed .data.reversal.id "$(jq -r .reversal.id <<<"$reversed")")" \
	"$reversal_hook"
hook=$(wait_hook transfer.reversed .data.reversal.refund_id "$re1")
[ -n "$hook" ] || hook='{"body":"{}"}'
same "WEBHOOKS: the refund's own reversal sends transfer.reversed too" \
	"$(jq -r '.body | fromjson | [.data.transfer_id, .data.reversal.amount, .data.amount_reversed] |
		map(. // "-") | join(" ")' <<<"$hook")" "$tr0 2.00 2.00"

# --- ENDPOINTS: every refusal, with the page's numbers ------------------------------------

# A shop of its own: 50.00, a session of 10.00 paid by card, transfers of 20.00 and 30.00.
new_shop on 50.00
rkey=$shop_key racct=$shop_acct
rv1=$(ctl account create --kind vendor --currency "$currency")
rv2=$(ctl account create --kind vendor --currency "$currency")
paid_session() { # paid_session KEY PRICE: a new session of KEY paid by test card, into s
	call POST "$CS" -H "$(auth "$1")" -H "$JSON" \
		-d "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":$2}]}"
	s=$(jq -r '.session_id // empty' <<<"$body") || true
	pay "$s"
}
paid_session "$rkey" 10.00
s1=$s
send "$rkey" "$(transfer_body "$(good)" "$rv1" 20.00 "$rv2" 30.00)"
expect_ok "the refund shop pays two vendors 20.00 and 30.00"
t1=$(jq -r '.transaction_detail[0].transaction_id' <<<"$body") || true
t2=$(jq -r '.transaction_detail[1].transaction_id' <<<"$body") || true
refund_call "$rkey" "$s1" '{"amount":5.99}'
expect_ok "a refund of 5.99 of 10.00"
refund_call "$rkey" "$s1" '{"amount":0.01}' -H 'Idempotency-Key: r-0.01'
expect_ok "a second refund of the same session, which leaves 4.00"
refund_call "$rkey" "$s1" '{"amount":0.02}' -H 'Idempotency-Key: r-0.01'
expect_error "422 for a refund's key with another body" 422 \
	"Idempotency-Key was already used with a different request"
before=$(footprint)
refund_call "$rkey" "$s1" '{"amount":6.00}'
expect_error "400 'amount 6.00 is above what is left to refund (4.00)'" 400 \
	"amount 6.00 is above what is left to refund (4.00)"
for t in tr_00000000000000000000000000000000 tr_x "$tr0"; do
	refund_call "$rkey" "$s1" "{\"amount\":1.00,\"reverse_transfers\":[{\"transfer_id\":\"$t\"}]}"
	expect_error "400 'no such transfer' for an unknown, malformed or another merchant's transfer (${t:0:12})" \
		400 "reverse_transfers[0].transfer_id: no such transfer"
done
refund_call "$rkey" "$s1" "{\"amount\":1.00,\"reverse_transfers\":[{\"transfer_id\":\"$t2\",\"amount\":1.00},{\"transfer_id\":\"$t1\",\"amount\":25.00}]}"
expect_error "400 'reverse_transfers[1].amount 25.00 is above what is left to reverse of transfer tr_... (20.00)'" \
	400 "reverse_transfers[1].amount 25.00 is above what is left to reverse of transfer $t1 (20.00)"
refund_call "$rkey" "$s1" "{\"reverse_transfers\":[{\"transfer_id\":\"$t1\"},{\"transfer_id\":\"$t1\"}]}"
expect_error "400 for a transfer named twice" 400 \
	"reverse_transfers[1].transfer_id repeats reverse_transfers[0].transfer_id"
refund_call "$rkey" "$s1" '{"amount":0}'
expect_error "400 'amount must be greater than 0'" 400 "amount must be greater than 0"
refund_call "$rkey" "$s1" "{\"reason\":\"$(printf '%0501d' 0)\"}"
expect_error "400 for a reason of 501 characters" 400 "reason must be at most 500 characters"
refund_call "$rkey" "$s1" '{"reverse_transfers":[]}'
expect_error "400 'reverse_transfers must not be empty'" 400 "reverse_transfers must not be empty"
many=$(jq -nc '[range(10; 27) | {transfer_id: ("tr_" + "0" * 30 + tostring)}]')
refund_call "$rkey" "$s1" "{\"reverse_transfers\":$many}"
expect_error "400 above max_vendors (16 by default) entries" 400 "reverse_transfers must have at most 16 entries"
refund_call "$rkey" "$s1" '{"currency":"USD"}'
expect_error "400 for a field not named" 400 "currency is not a known field"
same "the refused refunds store and move nothing" "$(footprint)" "$before"

# Reversals: all of a transfer with a reason of 500 characters; then refusals.
long=$(printf '%0500d' 0)
reverse_call "$rkey" "$t2" "{\"reason\":\"$long\"}"
same "a reversal with no amount takes back all of the transfer, a reason of 500 characters kept" \
	"$code $(jq -r '[.reversal.amount, (.reversal.reason | length), .reversal.refund_id] | join(" ")' <<<"$body")" \
	"200 30.00 500 "
before=$(footprint)
reverse_call "$rkey" "$t2" '{}'
expect_error "400 'amount: transfer tr_... is reversed in full; nothing is left to reverse'" 400 \
	"amount: transfer $t2 is reversed in full; nothing is left to reverse"
refund_call "$rkey" "$s1" "{\"amount\":1.00,\"reverse_transfers\":[{\"transfer_id\":\"$t2\"}]}"
expect_error "400 'reverse_transfers[0].amount: transfer tr_... is reversed in full; ...'" 400 \
	"reverse_transfers[0].amount: transfer $t2 is reversed in full; nothing is left to reverse"
same "... which move nothing" "$(footprint)" "$before"
reverse_call "$rkey" "$t1" '{"amount":14.00}'
expect_ok "a reversal of 14.00 of the 20.00 transfer"
before=$(footprint)
reverse_call "$rkey" "$t1" '{"amount":7.00}'
expect_error "400 'amount 7.00 is above what is left to reverse of transfer tr_... (6.00)'" 400 \
	"amount 7.00 is above what is left to reverse of transfer $t1 (6.00)"
same "... which moves nothing" "$(footprint)" "$before"
# The vendor spends: the operator pays 4.00 of its 6.00 out (a posting of the owner's).
sql "SELECT mp_post('adjustment', NULL, 'payout', '$currency', ARRAY[a.id, mp_funding_account('$currency')],
	ARRAY[-400, 400]::bigint[]) FROM accounts a WHERE a.account_number = '$rv1'" >/dev/null
before=$(footprint)
reverse_call "$rkey" "$t1" '{"amount":3.00}'
expect_error "400 'amount 3.00 is above the vendor account's available balance'" 400 \
	"amount 3.00 is above the vendor account's available balance"
refund_call "$rkey" "$s1" "{\"amount\":1.00,\"reverse_transfers\":[{\"transfer_id\":\"$t1\",\"amount\":3.00}]}"
expect_error "400 'reverse_transfers[0].amount 3.00 is above the vendor account's available balance'" \
	400 "reverse_transfers[0].amount 3.00 is above the vendor account's available balance"
same "... which move nothing" "$(footprint)" "$before"
# A second transfer to that vendor: 3.00 and 1.00 of the two are each within its 3.00, not
# together.
send "$rkey" "$(transfer_body "$(good)" "$rv1" 1.00)"
t4=$(jq -r '.transaction_detail[0].transaction_id' <<<"$body") || true
before=$(footprint)
refund_call "$rkey" "$s1" "{\"amount\":1.00,\"reverse_transfers\":[{\"transfer_id\":\"$t1\",\"amount\":3.00},{\"transfer_id\":\"$t4\",\"amount\":1.00}]}"
expect_error "400 'reverse_transfers[0].amount: 2 reversals from one vendor total 4.00, above its balance'" \
	400 "reverse_transfers[0].amount: 2 reversals from one vendor total 4.00, above its balance"
frozen() { sql "UPDATE accounts SET status = '$2' WHERE account_number = '$1'" >/dev/null; }
frozen "$rv1" frozen
reverse_call "$rkey" "$t1" '{"amount":1.00}'
expect_error "400 'transfer_id: the vendor account is frozen, and cannot be debited'" 400 \
	"transfer_id: the vendor account is frozen, and cannot be debited"
refund_call "$rkey" "$s1" "{\"amount\":1.00,\"reverse_transfers\":[{\"transfer_id\":\"$t1\",\"amount\":1.00}]}"
expect_error "400 'reverse_transfers[0].transfer_id: the vendor account is frozen, ...'" 400 \
	"reverse_transfers[0].transfer_id: the vendor account is frozen, and cannot be debited"
frozen "$rv1" active
# An account the operator relabelled to another currency is named, not a 500.
sql "UPDATE accounts SET currency = 'EUR' WHERE account_number = '$rv1'" >/dev/null
reverse_call "$rkey" "$t1" '{"amount":1.00}'
expect_error "400 'transfer_id: the vendor account holds EUR, not USD'" 400 \
	"transfer_id: the vendor account holds EUR, not USD"
refund_call "$rkey" "$s1" "{\"amount\":1.00,\"reverse_transfers\":[{\"transfer_id\":\"$t1\",\"amount\":1.00}]}"
expect_error "400 'reverse_transfers[0].transfer_id: the vendor account holds EUR, ...'" 400 \
	"reverse_transfers[0].transfer_id: the vendor account holds EUR, not USD"
sql "UPDATE accounts SET currency = '$currency' WHERE account_number = '$rv1'" >/dev/null
frozen "$racct" frozen
refund_call "$rkey" "$s1" '{"amount":1.00}'
expect_error "400 'the merchant's settlement account is frozen: no money can move' (refund)" 400 \
	"the merchant's settlement account is frozen: no money can move"
reverse_call "$rkey" "$t1" '{"amount":1.00}'
expect_error "... (reversal)" 400 "the merchant's settlement account is frozen: no money can move"
frozen "$racct" active
same "... which move nothing (the accounts frozen and thawed again)" "$(footprint)" "$before"

# 404 and 401.
for p in 00000000-0000-4000-8000-000000000000 not-a-uuid "$sid"; do
	refund_call "$rkey" "$p" '{}'
	expect_error "404 'payment session not found' for an unknown, malformed or another merchant's session (${p:0:12})" \
		404 "payment session not found"
done
for p in re_00000000000000000000000000000000 re_x "$re1"; do
	call GET "/api/v1/payment/refunds/$p" -H "$(auth "$rkey")"
	expect_error "404 'refund not found' for an unknown, malformed or another merchant's refund (${p:0:12})" \
		404 "refund not found"
done
for p in tr_00000000000000000000000000000000 tr_x "$tr1"; do
	reverse_call "$rkey" "$p" '{}'
	expect_error "404 'transfer not found' for an unknown, malformed or another merchant's transfer (${p:0:12})" \
		404 "transfer not found"
done
# Without a key: each with its endpoint group's text.
while read -r m p deny; do
	if [ "$m" = POST ]; then call "$m" "$p" -H "$JSON" -d '{}'; else call "$m" "$p"; fi
	expect_deny "401 $m $p without a key" "$deny"
done <<EOF
POST /api/v1/payment/sessions/$s1/refunds $deny_session
GET /api/v1/payment/refunds/$re1 $deny_session
POST /api/v1/payment/transfers/$t1/reversals $deny_transfer
EOF
same "... which change nothing" "$(footprint)" "$before"

# The rest of the session, then nothing is left; an open and a canceled session.
refund_call "$rkey" "$s1" '{}'
same "{} refunds everything left (4.00) and the session reads refunded" \
	"$code $(jq -r .refund.amount <<<"$body") $(stored_status "$s1")" "200 4.00 refunded"
before=$(footprint)
refund_call "$rkey" "$s1" '{"amount":0.01}'
expect_error "400 'amount: the payment session is refunded in full; nothing is left to refund'" 400 \
	"amount: the payment session is refunded in full; nothing is left to refund"
call POST "$CS" -H "$(auth "$rkey")" -H "$JSON" -d "$tea"
s=$(jq -r .session_id <<<"$body") || true
before=$(footprint)
refund_call "$rkey" "$s" '{}'
expect_error "400 'the payment session is open, not paid: only a paid session can be refunded'" 400 \
	"the payment session is open, not paid: only a paid session can be refunded"
pay "$s" "" cancel
before=$(footprint)
refund_call "$rkey" "$s" '{}'
expect_error "... canceled in place of open" 400 \
	"the payment session is canceled, not paid: only a paid session can be refunded"
same "... which store nothing" "$(footprint)" "$before"

# A wallet payment is refunded to the wallet, and not while the wallet is frozen.
wallet=$(ctl account create --kind customer --currency "$currency")
ctl account deposit "$wallet" 20.00 >/dev/null
printf '%s\n' "$page_pin" | ctl account pin "$wallet" >/dev/null
call POST "$CS" -H "$(auth "$rkey")" -H "$JSON" -d '{"items":[{"id":"a","name":"b","price":8}]}'
s=$(jq -r .session_id <<<"$body") || true
call POST "/checkout/$s" --data-urlencode "csrf=$(csrf_of "$s")" -d method=wallet -d action=pay \
	-d "account_number=$wallet" -d "pin=$page_pin"
same "a wallet pays 8.00" "$(stored_status "$s") $(minor "$wallet")" "paid 1200"
frozen "$wallet" frozen
before=$(footprint)
refund_call "$rkey" "$s" '{}'
expect_error "400 'the customer's wallet to refund is frozen: nothing can be refunded to it'" 400 \
	"the customer's wallet to refund is frozen: nothing can be refunded to it"
same "... which moves nothing" "$(footprint)" "$before"
frozen "$wallet" active
refund_call "$rkey" "$s" '{"amount":3.00}'
same "a wallet payment is refunded to the wallet" "$code $(minor "$wallet")" "200 1500"

# A merchant holding 2.00 cannot refund 5.00, but can when it takes 3.00 back from a vendor.
new_shop on 2.00
paid_session "$shop_key" 5.00
rv3=$(ctl account create --kind vendor --currency "$currency")
send "$shop_key" "$(transfer_body "$(good)" "$rv3" 5.00)"
t3=$(jq -r '.transaction_detail[0].transaction_id' <<<"$body") || true
before=$(footprint)
refund_call "$shop_key" "$s" '{"amount":5.00}'
expect_error "400 'amount 5.00: the merchant's available balance is 2.00, short by 3.00'" 400 \
	"amount 5.00: the merchant's available balance is 2.00, short by 3.00"
same "... which moves nothing" "$(footprint)" "$before"
refund_call "$shop_key" "$s" "{\"amount\":5.00,\"reverse_transfers\":[{\"transfer_id\":\"$t3\",\"amount\":3.00}]}"
same "... but 5.00 taking 3.00 back from the vendor: the merchant pays the net 2.00" \
	"$code $(minor "$shop_acct") $(minor "$rv3") $(stored_status "$s")" "200 0 200 refunded"

# Every message of the three sections was met (a 200's message was compared above).
oks=$(printf '%s\n' "$(reply_message <<<"$refund_text")" "$(reply_message <<<"$lookup_text")" \
	"$(reply_message <<<"$reversal_text")" 'Payment refunded')
while IFS= read -r m; do
	grep -qxF -- "$m" <<<"$oks" && continue
	check "ENDPOINTS: '$m' was provoked" grep -qxF -- "$m" <(as_page <"$seen_messages")
done < <(printf '%s\n' "$refund_text" "$lookup_text" "$reversal_text" | grep -E '^\.Ql ' |
	macro_text | grep ' ')
check "marketpayctl ledger verify, after the refunds and reversals" eval 'ctl ledger verify >/dev/null'
