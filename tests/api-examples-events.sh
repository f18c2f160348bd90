# Sourced by tests/api-examples.sh, not a test of its own: marketpay-api(7) on the expire
# endpoint and the lifecycle events, run against the same stack with the script's helpers
# (after tests/api-examples-refunds.sh, whose subsection it uses).
#
#   - EXAMPLES: the expire example, run on a session made like its answer (its item and
#     user_id), against the answer shown; the 200's message is the section's; the session
#     is stored expired, its page answers 410; the Idempotency-Key replays;
#   - ENDPOINTS: every message the expire section names, provoked (400 for a paid and an
#     expired session, 404 for an unknown, a malformed and another merchant's id, 401),
#     each leaving the database as it was;
#   - WEBHOOKS: the session.expired of that session, a payment.failed (the declining test
#     card) and a session.canceled (the page's cancel) of sessions made like the page's
#     examples, and the transfer.succeeded of the transfer example, against the page's
#     example bodies.

expire_text=$(subsection 'POST /api/v1/payment/sessions/ Ns Ar session_id Ns /expire')
[ -n "$expire_text" ] || die "ENDPOINTS has the expire section"
expire_cmd=$(block EXAMPLES '/expire') && expire_ans=$(answer_of "$expire_cmd") &&
	failed_hook=$(block WEBHOOKS '"type":"payment.failed"') &&
	canceled_hook=$(block WEBHOOKS '"type":"session.canceled"') &&
	expired_hook=$(block WEBHOOKS '"type":"session.expired"') &&
	transfer_hook=$(block WEBHOOKS '"type":"transfer.succeeded"') ||
	die "EXAMPLES shows an expiry and its answer; WEBHOOKS a payment.failed, a" \
		"session.canceled, a session.expired and a transfer.succeeded body"
expire_call() { # expire_call KEY SESSION [curl args]
	local k=$1 s=$2
	shift 2
	call POST "/api/v1/payment/sessions/$s/expire" -H "$(auth "$k")" "$@"
}
# like_example SESSION_FILE: a session created with the data of a page's example body.
like_example() {
	call POST "$CS" -H "$(auth "$key")" -H "$JSON" -d "$(tr -d '\n' <"$1" | jq -c \
		'.data // . | {items: (.items | map(.price |= tonumber)), user_id, email}')"
	jq -r '.session_id // empty' <<<"$body" 2>/dev/null || true
}
# hook_like DESCRIPTION TYPE JQ-PATH VALUE PAGE_TEXT: the webhook of TYPE whose body has VALUE
# at JQ-PATH arrived and has the page's example's shape and numbers.
hook_like() {
	local h
	h=$(wait_hook "$2" "$3" "$4")
	if [ -z "$h" ]; then
		fail "$1" "no $2 webhook in 10 s"
	else
		like_page "$1" "$(jq -r .body <<<"$h")" "$5"
	fi
}

# --- EXAMPLES: the expiry ------------------------------------------------------------------

se=$(like_example "$expire_ans")
[ -n "$se" ] || fail "a session like the expire example's answer" "$body"
fill "$expire_cmd" | sed -E "s/$uuid_re/$se/g" >"$dir/w/expire.sh"
check "EXAMPLES: the expire example runs" run_example expire
expired=$(cat "$dir/w/expire.out")
same "EXAMPLES: the expiry answers 200" "$(status_of "$(headers_of expire | tail -1)")" 200
like_page "EXAMPLES: the expiry's answer is the page's" "$expired" "$(tr -d '\n' <"$expire_ans")"
same "the 200's message is the section's" "$(jq -r .message <<<"$expired")" \
	"$(reply_message <<<"$expire_text")"
same "the session is stored expired; its page answers 410" \
	"$(stored_status "$se") $(curl -s -o /dev/null -w '%{http_code}' "$base/checkout/$se")" \
	"expired 410"
rm -f "$dir"/w/expire.*.h
check "EXAMPLES: the expire example runs again" run_example expire
same "... and its Idempotency-Key replays the same 200" \
	"$(header_in "$(headers_of expire | tail -1)" Idempotent-Replayed) $(cat "$dir/w/expire.out")" \
	"true $expired"
hook_like "WEBHOOKS: the expiry's session.expired is like the page's example" session.expired \
	.data.session_id "$se" "$(tr -d '\n' <"$expired_hook")"

# --- ENDPOINTS: what the expire section refuses ------------------------------------------

before=$(footprint)
expire_call "$key" "$se"
expect_error "400 'the payment session is expired, not open: ...'" 400 \
	"the payment session is expired, not open: only an open session can be expired"
same "... which changes nothing" "$(footprint)" "$before"
new_session
pay "$s"
before=$(footprint)
expire_call "$key" "$s"
expect_error "400 'the payment session is paid, not open: ...'" 400 \
	"the payment session is paid, not open: only an open session can be expired"
same "... which changes nothing" "$(footprint)" "$before"
new_session
other=$(ctl merchant create --name 'Another shop') && other_key=$(ctl key create "$other") ||
	die "another merchant"
before=$(footprint)
for id in "$s" 00000000-0000-4000-8000-000000000000 not-a-session; do
	expire_call "$([ "$id" = "$s" ] && echo "$other_key" || echo "$key")" "$id"
	expect_error "404 'payment session not found' ($([ "$id" = "$s" ] &&
		echo "another merchant's" || echo "$id"))" 404 "payment session not found"
done
call POST "/api/v1/payment/sessions/$s/expire" -H "Authorization: API-KEY mp_test_nope"
expect_deny "401 without a valid key" "Invalid or missing API key."
same "... and none of those changed anything" "$(footprint) $(stored_status "$s")" "$before open"
expire_call "$key" "$s"
same "... the same session, by its merchant, expires" "$code $(stored_status "$s")" "200 expired"

# Every message of the section was met (the 200's was compared above).
while IFS= read -r m; do
	[ "$m" = "$(reply_message <<<"$expire_text")" ] && continue
	check "ENDPOINTS: '$m' was provoked" grep -qxF -- "$m" "$seen_messages"
done < <(grep -E '^\.Ql ' <<<"$expire_text" | macro_text | grep ' ')

# --- WEBHOOKS: the other lifecycle events ------------------------------------------------

sf=$(like_example "$failed_hook")
pay "$sf" "$(section 'TEST CARDS' | awk -F' Ta ' '/^\.It [0-9]/ && $2 ~ /declined/ {
	sub(/^\.It /, "", $1); print $1; exit }')"
hook_like "WEBHOOKS: a declined card's payment.failed is like the page's example" \
	payment.failed .data.session_id "$sf" "$(tr -d '\n' <"$failed_hook")"
sc=$(like_example "$canceled_hook")
pay "$sc" "" cancel
hook_like "WEBHOOKS: the page's cancel sends a session.canceled like the page's example" \
	session.canceled .data.session_id "$sc" "$(tr -d '\n' <"$canceled_hook")"
hook_like "WEBHOOKS: the transfer example's transfer.succeeded is like the page's example" \
	transfer.succeeded '.data.transfers[0].id' "$tr0" "$(fill "$transfer_hook" | tr -d '\n')"
