# Sourced by tests/api-examples.sh after tests/api-examples-refunds.sh, not a test of its
# own: marketpay-api(7) on the lists (LISTS) and the balance, run against the same stack
# with the script's helpers, key and the sessions, refunds and transfers it made.
#
#   - LISTS: the page's example (the refunds, two a page) runs and answers the list form,
#     newest first; its next page by starting_after holds the rest; every refusal the
#     section names, with its message, each leaving the database as it was;
#   - ENDPOINTS: the balance-transactions CSV example runs and answers text/csv with the
#     section's header; the balance answers the fields its section lists.

lists_text=$(section LISTS)
[ -n "$lists_text" ] || die "the page has a LISTS section"
list_cmd=$(block LISTS 'refunds\?limit=2') && csv_cmd=$(block ENDPOINTS 'Accept: text/csv') ||
	die "LISTS shows a refunds list (limit=2), ENDPOINTS a balance-transactions CSV example"

nrefunds=$(sql "SELECT count(*) FROM refunds WHERE merchant_id = $merchant")
fill "$list_cmd" >"$dir/w/list.sh"
check "LISTS: the refunds list example runs" run_example list
listed=$(cat "$dir/w/list.out")
same "LISTS: the list answers 200 in the list form, two refunds of the merchant's $nrefunds" \
	"$(status_of "$(headers_of list | tail -1)") $(jq -c '[keys, .status_code, .success,
		(.data | length), .has_more]' <<<"$listed")" \
	"200 [[\"data\",\"has_more\",\"status_code\",\"success\"],10,true,2,$([ "$nrefunds" -gt 2 ] && echo true || echo false)]"
same "LISTS: newest first" "$(jq -r '[.data[].created_at] | . == (sort | reverse)' <<<"$listed")" true
last=$(jq -r '.data[1].id' <<<"$listed")
call GET "/api/v1/payment/refunds?starting_after=$last&limit=100" -H "$(auth "$key")"
same "LISTS: the next page starts after the last id: the rest, nothing twice" \
	"$code $(jq -r --argjson p "$listed" '(.data | length) as $n |
		([.data[].id] - [$p.data[].id] | length) == $n and $n + 2 == '"$nrefunds" <<<"$body")" \
	"200 true"

# Every refusal the section names.
before=$(footprint)
lists_refused() { # lists_refused QUERY MESSAGE
	call GET "/api/v1/payment/$1" -H "$(auth "$key")"
	expect_error "LISTS: 400 '$2'" 400 "$2"
}
lists_refused "refunds?limit=0" "limit must be a whole number from 1 to 100"
lists_refused "sessions?created_gte=2026-11-23" \
	"created_gte must be an ISO 8601 time with an offset, such as 2026-11-23T10:00:00+00:00"
lists_refused "sessions?status=paid&status=open" "status is given more than once"
lists_refused "refunds?page=2" "page is not a parameter of this list"
lists_refused "refunds?starting_after=$last&ending_before=$last" \
	"starting_after and ending_before cannot be given together"
lists_refused "refunds?starting_after=re_00000000000000000000000000000000" \
	"starting_after: no such refund"
lists_refused "transfers?ending_before=tr_00000000000000000000000000000000" \
	"ending_before: no such transfer"
same "LISTS: ... which store nothing" "$(footprint)" "$before"
while IFS= read -r m; do
	case "$m" in *"..."*) continue ;; esac
	check "LISTS: '$m' was provoked" grep -qxF -- "$m" "$seen_messages"
done < <(grep -E '^\.Ql ' <<<"$lists_text" | macro_text | grep ' ')

# The CSV example: the section's columns, one line per balance transaction.
fill "$csv_cmd" >"$dir/w/csv.sh"
check "ENDPOINTS: the balance-transactions CSV example runs" run_example csv
same "ENDPOINTS: the CSV answers 200 as text/csv with the header of the JSON's fields" \
	"$(status_of "$(headers_of csv | tail -1)") $(header_in "$(headers_of csv | tail -1)" Content-Type) $(head -1 "$dir/w/csv.out" | tr -d '\r')" \
	"200 text/csv; charset=utf-8 id,type,amount,balance_after,currency,source,transaction_id,created_at"
call GET "/api/v1/payment/balance" -H "$(auth "$key")"
same "ENDPOINTS: the balance answers its fields" \
	"$code $(jq -c '[keys, (.balance | keys)]' <<<"$body")" \
	'200 [["balance","status_code","success"],["account_number","available","currency"]]'
