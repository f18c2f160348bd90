# Sourced by tests/api-examples.sh after tests/api-examples-event-api.sh, not a test of its
# own: marketpay-api(7) on POST /api/v1/payment/webhook-endpoint/rotate-secret, run against
# the same stack with the script's helpers and key (the merchant's endpoint is the stack's
# receiver, with the secret marketpayctl gave it; "Another shop", made by
# tests/api-examples-events.sh, has no secret).
#
#   - ENDPOINTS: the example runs and answers like the answer shown under it (the section's
#     message, a new whsec_ secret, the end of the window the section states, 24 hours, as the
#     database stores it); the replaced secret is kept as the previous one; its
#     Idempotency-Key replays the same secret and rotates nothing; the section's 400 (no
#     secret yet) and a 401 are provoked, each leaving the database as it was. Not provoked:
#     the 503 without the secrets key (the stack always has one; tests/integ/
#     check_webhook_rotate.c restarts the workers without it). That a delivery in the window
#     carries both signatures is tests/integ/check_webhook_rotate.c's and
#     tests/browser/webhook-rotate.test.mjs's to show.

rotate_text=$(subsection 'POST /api/v1/payment/webhook-endpoint/rotate-secret')
[ -n "$rotate_text" ] || die "ENDPOINTS has the rotate-secret section"
rotate_cmd=$(block ENDPOINTS '/rotate-secret') && rotate_ans=$(answer_of "$rotate_cmd") ||
	die "ENDPOINTS shows a rotate-secret example and its answer"
window_hours=$(tr '\n' ' ' <<<"$rotate_text" | grep -oE 'follows, [0-9]+ hours unless' |
	grep -oE '[0-9]+')
[ -n "$window_hours" ] || die "the rotate-secret section states the window in hours"
# The merchant's secret columns and the idempotency records: what a refusal must not change.
secret_footprint() {
	printf '%s %s' "$(footprint)" "$(sql "SELECT md5(string_agg(id || ':' ||
		coalesce(encode(webhook_secret_sealed, 'hex'), '-') || ':' ||
		coalesce(encode(webhook_secret_previous_sealed, 'hex'), '-') || ':' ||
		coalesce(webhook_secret_previous_until::text, '-'), ',' ORDER BY id)) FROM merchants")"
}
sealed_of() { sql "SELECT encode($2, 'hex') FROM merchants WHERE id = $1"; }

# --- The example ------------------------------------------------------------------------

was=$(sealed_of "$merchant" webhook_secret_sealed)
fill "$rotate_cmd" >"$dir/w/rotate.sh"
check "ENDPOINTS: the rotate-secret example runs" run_example rotate
rotated=$(cat "$dir/w/rotate.out")
like_page "ENDPOINTS: it answers like the page's answer" "$rotated" "$(tr -d '\n' <"$rotate_ans")"
same "ENDPOINTS: 200 with the section's message and a new whsec_ secret" \
	"$(status_of "$(headers_of rotate | tail -1)") $(jq -r .message <<<"$rotated") $(jq -r .secret <<<"$rotated" | grep -cE '^whsec_[A-Za-z0-9+/]{32}$') $([ "$(jq -r .secret <<<"$rotated")" != "$secret" ] && echo new)" \
	"200 $(reply_message <<<"$rotate_text") 1 new"
same "ENDPOINTS: the old secret signs until previous_secret_expires_at, $window_hours hours on, as stored" \
	"$(jq -r .previous_secret_expires_at <<<"$rotated") $(sql "SELECT round(extract(epoch FROM
		webhook_secret_previous_until - now()) / 3600) FROM merchants WHERE id = $merchant")" \
	"$(sql "SELECT mp_iso(webhook_secret_previous_until) FROM merchants WHERE id = $merchant") $window_hours"
same "... the replaced secret is the previous one, the new one is stored sealed" \
	"$(sealed_of "$merchant" webhook_secret_previous_sealed) $(sql "SELECT position(convert_to(
		'$(jq -r .secret <<<"$rotated" | cut -c7-)', 'UTF8') IN webhook_secret_sealed) FROM
		merchants WHERE id = $merchant")" \
	"$was 0"
now=$(secret_footprint)
rm -f "$dir"/w/rotate.*.h
check "ENDPOINTS: the rotate-secret example runs again" run_example rotate
same "... and its Idempotency-Key replays the same secret, rotating nothing" \
	"$(header_in "$(headers_of rotate | tail -1)" Idempotent-Replayed) $(cat "$dir/w/rotate.out") $(secret_footprint)" \
	"true $rotated $now"

# --- What the section refuses -------------------------------------------------------------

before=$(secret_footprint)
call POST /api/v1/payment/webhook-endpoint/rotate-secret -H "$(auth "$other_key")"
expect_error "rotate-secret: 400 without a secret yet" 400 \
	"no webhook signing secret to rotate: the operator sets the first one with your webhook URL"
call POST /api/v1/payment/webhook-endpoint/rotate-secret -H "Authorization: API-KEY mp_test_nope"
expect_deny "rotate-secret: 401 without a valid key" "Invalid or missing API key."
same "... none of which changed anything" "$(secret_footprint)" "$before"

# Every message of the section was met, but the 503's (see the top of this file).
while IFS= read -r m; do
	case "$m" in
	"$(reply_message <<<"$rotate_text")") continue ;;
	"webhook secrets are unavailable: "*)
		echo "not provoked: 503 '$m' (the stack has a secrets key)"
		continue ;;
	esac
	check "ENDPOINTS: '$m' was provoked" grep -qxF -- "$m" "$seen_messages"
done < <(grep -E '^\.Ql ' <<<"$rotate_text" | macro_text | grep ' ')
