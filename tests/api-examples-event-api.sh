# Sourced by tests/api-examples.sh after tests/api-examples-events.sh, not a test of its own:
# marketpay-api(7) on the events API, run against the same stack with the script's helpers,
# key and the events its earlier parts made (the merchant's endpoint is the stack's receiver;
# "Another shop", made by tests/api-examples-events.sh, has none).
#
#   - ENDPOINTS, GET events: the example (delivery_status=dead) runs, after one of the
#     merchant's events was marked dead from psql as if its schedule had run out, and lists
#     exactly the merchant's dead events with the fields the section names;
#   - GET events/{id}: the section's message and 404;
#   - POST events/{id}/redeliver: the example runs on that dead event and answers the
#     section's message; the receiver gets the event again with the same webhook-id and
#     body; every refusal the section names is provoked (404 unknown, malformed and another
#     merchant's id, 400 without an endpoint, 409 while psql holds the event's row as the
#     delivery daemon does, 429 past the rate with Retry-After), each leaving the database
#     as it was.

events_text=$(subsection 'GET /api/v1/payment/events')
get_text=$(subsection 'GET /api/v1/payment/events/ Ns Ar event_id')
redeliver_text=$(subsection 'POST /api/v1/payment/events/ Ns Ar event_id Ns /redeliver')
[ -n "$events_text" ] && [ -n "$get_text" ] && [ -n "$redeliver_text" ] ||
	die "ENDPOINTS has the events list, event lookup and redeliver sections"
events_cmd=$(block ENDPOINTS 'events\?delivery_status=dead') &&
	redeliver_cmd=$(block ENDPOINTS '/redeliver') ||
	die "ENDPOINTS shows a dead-events list and a redelivery example"
evt_re='evt_[0-9a-f]{32}'
# footprint, the redeliveries and the delivery of event $dead (the daemon changes others').
ev_footprint() {
	printf '%s %s %s' "$(footprint)" "$(sql "SELECT count(*) FROM webhook_redeliveries")" \
		"$(sql "SELECT status || attempts || next_attempt_at FROM webhook_events
			WHERE id = '$dead'")"
}

# --- GET events ---------------------------------------------------------------------------

dead=$(sql "SELECT id FROM webhook_events WHERE merchant_id = $merchant AND
	status = 'delivered' ORDER BY created_at DESC, id DESC LIMIT 1")
[ -n "$dead" ] || die "the merchant has a delivered event"
sql "UPDATE webhook_events SET status = 'dead' WHERE id = '$dead'" >/dev/null
fill "$events_cmd" >"$dir/w/events.sh"
check "ENDPOINTS: the dead-events list example runs" run_example events
listed=$(cat "$dir/w/events.out")
same "ENDPOINTS: it answers 200 in the list form: the merchant's dead events, newest first" \
	"$(status_of "$(headers_of events | tail -1)") $(jq -r '[.data[].id] | join(" ")' <<<"$listed")" \
	"200 $(sql "SELECT string_agg(id, ' ' ORDER BY created_at DESC, id DESC) FROM webhook_events
		WHERE merchant_id = $merchant AND status = 'dead'")"
same "ENDPOINTS: each event has the section's fields; its payload is the body as sent" \
	"$(jq -c '.data[0] | [keys, (.delivery | keys), .delivery.status, (.payload | keys)]' <<<"$listed") $(jq -c '.data[0].payload' <<<"$listed" | jq -cS .)" \
	"[[\"created_at\",\"delivery\",\"id\",\"payload\",\"type\"],[\"attempt_count\",\"attempts\",\"delivered_at\",\"last_error\",\"next_attempt_at\",\"redeliveries\",\"status\"],\"dead\",[\"created_at\",\"data\",\"id\",\"livemode\",\"type\"]] $(sql "SELECT body FROM webhook_events WHERE id = '$dead'" | jq -cS .)"

# --- GET events/{id} ----------------------------------------------------------------------

call GET "/api/v1/payment/events/$dead" -H "$(auth "$key")"
same "ENDPOINTS: the lookup answers 200 with the section's message and the same event" \
	"$code $(jq -r .message <<<"$body") $(jq -c .event <<<"$body")" \
	"200 $(reply_message <<<"$get_text") $(jq -c '.data[0]' <<<"$listed")"
before=$(ev_footprint)
for id in "$dead" evt_00000000000000000000000000000000 evt_nope; do
	call GET "/api/v1/payment/events/$id" \
		-H "$(auth "$([ "$id" = "$dead" ] && echo "$other_key" || echo "$key")")"
	expect_error "404 'event not found' ($([ "$id" = "$dead" ] && echo "another merchant's" ||
		echo "$id"))" 404 "event not found"
done

# --- POST events/{id}/redeliver -----------------------------------------------------------

redeliver() { # redeliver KEY EVENT [curl args]
	local k=$1 e=$2
	shift 2
	call POST "/api/v1/payment/events/$e/redeliver" -H "$(auth "$k")" "$@"
}
for id in "$dead" evt_00000000000000000000000000000000 evt_nope; do
	redeliver "$([ "$id" = "$dead" ] && echo "$other_key" || echo "$key")" "$id"
	expect_error "redeliver: 404 'event not found' ($([ "$id" = "$dead" ] &&
		echo "another merchant's" || echo "$id"))" 404 "event not found"
done
same "... none of which changed anything" "$(ev_footprint)" "$before"
# A merchant without an endpoint: its own event, refused.
call POST "$CS" -H "$(auth "$other_key")" -H "$JSON" -d '{"items":[{"id":"a","name":"b","price":1}]}'
so=$(jq -r '.session_id // empty' <<<"$body")
call POST "/api/v1/payment/sessions/$so/expire" -H "$(auth "$other_key")"
other_evt=$(sql "SELECT id FROM webhook_events WHERE body::json->'data'->>'session_id' = '$so'")
[ -n "$other_evt" ] || fail "the other merchant's session.expired is recorded"
before=$(ev_footprint)
redeliver "$other_key" "$other_evt"
expect_error "redeliver: 400 without a webhook endpoint" 400 \
	"no webhook endpoint is configured for this merchant: an event can be redelivered only to one"
# 409: the event's row held as marketpay-webhookd holds it while it sends.
psql -X -qAt -c "BEGIN; SELECT 1 FROM webhook_events WHERE id = '$dead' FOR UPDATE;
	SELECT pg_sleep(2); COMMIT;" >/dev/null 2>&1 &
held_row=$!
for _ in $(seq 1 100); do
	[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(2)%' AND
		pid <> pg_backend_pid()")" = 0 ] || break
	sleep 0.05
done
sleep 0.2
redeliver "$key" "$dead"
expect_error "redeliver: 409 while the event is being sent" 409 \
	"the event is being delivered right now: see its attempts, and ask again if it fails"
wait "$held_row" 2>/dev/null || true
same "... none of which changed anything" "$(ev_footprint)" "$before"

# The example, on the dead event: the section's 200, and the receiver gets it again.
sent_before=$(jq -c --arg e "$dead" 'select(.id == $e)' "$dir/webhooks.log" | wc -l)
fill "$redeliver_cmd" | sed -E "s/$evt_re/$dead/g" >"$dir/w/redeliver.sh"
check "ENDPOINTS: the redelivery example runs" run_example redeliver
again=$(cat "$dir/w/redeliver.out")
same "ENDPOINTS: the redelivery answers 200 with the section's message, the event pending" \
	"$(status_of "$(headers_of redeliver | tail -1)") $(jq -r '.message, .event.id, .event.delivery.status' <<<"$again" | tr '\n' ' ')" \
	"200 $(reply_message <<<"$redeliver_text") $dead pending "
for _ in $(seq 1 100); do
	[ "$(jq -c --arg e "$dead" 'select(.id == $e)' "$dir/webhooks.log" | wc -l)" -gt "$sent_before" ] && break
	sleep 0.1
done
same "WEBHOOKS: the receiver got the event again: the same webhook-id and body" \
	"$(jq -c --arg e "$dead" 'select(.id == $e) | .body' "$dir/webhooks.log" | sort -u | wc -l) $(jq -c --arg e "$dead" 'select(.id == $e)' "$dir/webhooks.log" | wc -l)" \
	"1 $((sent_before + 1))"

# 429: the rate (10 by default) used up; Retry-After in seconds; nothing changes.
limit=$(sql "SELECT redeliveries_per_minute FROM mp_settings")
used=$(sql "SELECT count(*) FROM webhook_redeliveries WHERE merchant_id = $merchant AND
	requested_at > clock_timestamp() - interval '60 s'")
# Distinct delivered events: none is pending, so none can be held by the daemon (a 409).
more=$(sql "SELECT string_agg(id, ' ') FROM (SELECT id FROM webhook_events WHERE
	merchant_id = $merchant AND status = 'delivered' AND id <> '$dead'
	ORDER BY created_at DESC LIMIT $((limit - used))) e")
[ "$(wc -w <<<"$more")" = $((limit - used)) ] ||
	die "the merchant has $((limit - used)) delivered events to redeliver" "$more"
codes=""
for e in $more; do
	redeliver "$key" "$e"
	codes+="$code "
done
same "redeliver: $limit in a minute are made" "$codes" "$(printf '200 %.0s' $more)"
before=$(ev_footprint)
redeliver "$key" "$dead"
expect_error "redeliver: 429 past the rate" 429 "*"
check "... its message is the section's, but for the seconds" grep -qxE \
	"too many redeliveries: at most $limit in any 60 seconds; retry after [0-9]+ seconds" \
	<<<"$(jq -r .message <<<"$body")"
check "... with Retry-After in seconds, as the message says" test \
	"$(header_in "$hdrs" Retry-After)" = "$(jq -r .message <<<"$body" | grep -oE '[0-9]+ seconds$' | cut -d' ' -f1)"
same "... which changes nothing" "$(ev_footprint)" "$before"

# Every message of the sections was met (the 200s' were compared above; the 429's by pattern).
while IFS= read -r m; do
	case "$m" in
	"$(reply_message <<<"$get_text")" | "$(reply_message <<<"$redeliver_text")") continue ;;
	"too many redeliveries"*)
		check "ENDPOINTS: '$m' was provoked (the seconds aside)" grep -qE \
			"^${m%%retry after*}retry after [0-9]+ seconds$" "$seen_messages" ;;
	*) check "ENDPOINTS: '$m' was provoked" grep -qxF -- "$m" "$seen_messages" ;;
	esac
done < <(printf '%s\n%s\n' "$get_text" "$redeliver_text" | grep -E '^\.Ql ' | macro_text |
	grep ' ')
