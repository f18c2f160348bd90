#!/usr/bin/env bash
# Runs the examples of marketpay-api(7) against a real stack, as a merchant would, and holds
# the replies to what the page says. The examples are read from the page itself (its
# .Bd -literal displays), so an edited example is the one that runs:
#
#   - EXAMPLES: the create-session curl (then again, as its Idempotency-Key retry), the
#     session lookup, the pin-public-key + openssl + transfer script, the health check; each
#     reply against the answer shown under it (same keys, types and values; ids, dates and
#     times by pattern; numbers as written);
#   - PIN ENCRYPTION: its shell recipe (printf of the block PIN:UNIX_TIME:NONCE | openssl)
#     and its Node.js code (when node is installed), whose outputs must each pay a real
#     transfer; and what the section claims: an undecryptable or malformed pin (not base64,
#     random bytes, OAEP with SHA-1, PKCS#1 v1.5, a bare PIN, a short nonce, a newline) gets
#     the 400 saying how to encrypt and is not counted (merchants.pin_failures), a block
#     older or newer than pin_max_age and a nonce used before are refused and not counted, a
#     right PIN after pin_max_attempts - 1 wrong ones resets the count, pin_max_attempts
#     wrong ones lock with "until <time>" and Retry-After, the locks escalate (the lock's end
#     is moved into the past from psql in place of waiting) up to the hard lock that only
#     marketpayctl merchant unlock lifts;
#   - WEBHOOKS: the worked signature example must print the documented signature (also
#     with the od(1) replacement for xxd(1)); the same command must verify a real
#     payment.succeeded webhook of the stack, whose body must have the fields, types and
#     values of the page's example webhook;
#   - HOSTED CHECKOUT and TEST CARDS: the redirect example, every row of the card table,
#     another number, cancel, expiry (GET reads expired, the page answers 410);
#   - ENDPOINTS: the session lookup's fields and values, the health bodies, the field rules
#     and defaults the page states (prices, lengths, max_items, max_vendors, max_body_bytes,
#     session_lifetime, pin_max_attempts, the key's scheme word in any case);
#   - refunds and transfer reversals: their examples, events and every refusal their
#     sections name, in tests/api-examples-refunds.sh (it says what it runs);
#   - the expire endpoint and the lifecycle events: the same, in
#     tests/api-examples-events.sh;
#   - the lists' and balance's examples and refusals, in tests/api-examples-lists.sh;
#   - the events API's examples and every refusal of its sections, in
#     tests/api-examples-event-api.sh;
#   - the webhook secret rotation's example and refusals, in
#     tests/api-examples-webhook-secret.sh;
#   - ERROR RESPONSES and IDEMPOTENCY: every (status, message) the page names that can be
#     provoked over HTTP is provoked and compared, the checking order is probed, and a
#     rejected request must leave the database as it was. The rows not provoked, and why:
#       500 "internal error"        no request makes the code fail on purpose;
#       400 "body shorter than its length"  nginx reads the whole body before the worker
#                                   sees the request: a short body never reaches it;
#       503 of pin-public-key and transfers when no PIN key is configured: the stack always
#                                   has one (the outage 503 is provoked, last);
#     409 is provoked by holding, from psql, the very lock a request in flight with that
#     Idempotency-Key holds.
#
# Placeholders are filled in: {sandbox_base_url} with the stack's URL, mp_test_... with a
# key made by marketpayctl, the page's vendor account numbers with vendor accounts made by
# marketpayctl (which draws account numbers at random: they cannot be made as printed), the
# sample session id with the real one. The merchant's PIN is set to the page's. Every
# encrypted PIN is made afresh (a nonce is accepted once): with the section's recipe for
# the page's PIN or another, or, for a crafted block, with the recipe's openssl stages.
#
# Needs jq, openssl, xxd and curl; node for the Node.js example (skipped, and said so,
# without it). Prints one line per check and "N passed, N failed".
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-.}
builddir=$(cd "$builddir" && pwd)
# MP_API_PAGE: another page to hold the code to (to see that a wrong page fails).
page=${MP_API_PAGE:-$srcdir/man/marketpay-api.7}
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=${MP_WORKERS:-4}
# A short wait makes the in-flight Idempotency-Key case (409) quick to show.
export MP_CONF_EXTRA="idempotency_wait_ms = 300"

# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
for tool in jq openssl xxd curl base64 od perl psql; do
	command -v "$tool" >/dev/null 2>&1 ||
		bail "api-examples: $tool is missing (dev/test installs it: apt-get install jq xxd)"
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-api.XXXXXX")
cleanup() {
	local status=$? lock_pid
	if [ -z "${rc:-}" ]; then   # stopped by an error of the script itself
		not_ok "the script stopped early (exit status $status)"
		finish || true
	fi
	for lock_pid in ${held_locks:-}; do kill "$lock_pid" 2>/dev/null || true; done
	"$srcdir/tests/stack.sh" stop "$dir" || true
	if [ "${rc:-1}" != 0 ]; then
		echo "--- last lines of the worker log ($dir/fcgi.log) ---" >&2
		tail -n 20 "$dir/fcgi.log" >&2 || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Results are counted by tests/lib.sh (ok, not_ok, check, finish). fail DESCRIPTION DETAIL...:
# not_ok with the details under it.
fail() {
	not_ok "$1"
	[ $# -lt 2 ] || printf '     %s\n' "${@:2}" >&2
}
# same DESCRIPTION GOT WANT
same() {
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "got:  $2" "want: $3"; fi
}
# Stops the run when something the later checks build on is missing.
die() { fail "$1" "${@:2}"; rc=1; finish || true; exit 1; }

# --- The page, taken apart ---------------------------------------------------------------

# mdoc escapes to text: \e backslash, \& nothing, \(dq and \(aq quotes, \- minus.
unescape() {
	perl -pe 's/\\(e|&|\(dq|\(aq|-)/{"e" => "\\", "&" => "", "(dq" => "\"", "(aq" => "\x27", "-" => "-"}->{$1}/ge'
}

# Every literal display as blocks/NN (its text, un-escaped) and blocks/NN.sec (its section).
mkdir -p "$dir/blocks" "$dir/w"
awk -v d="$dir/blocks" '
	/^\.Sh / { sec = substr($0, 5) }
	/^\.Bd -literal/ { n++; f = sprintf("%s/%02d", d, n); print sec > (f ".sec"); close(f ".sec")
	                   printf "" > f; inb = 1; next }
	/^\.Ed/ { if (inb) close(f); inb = 0; next }
	inb { print > f }' "$page"
for f in "$dir"/blocks/[0-9][0-9]; do
	[ -e "$f" ] || break   # a page without displays: the look-ups below say what is missing
	unescape <"$f" >"$f.txt"
done

# block SECTION ERE: the first display of SECTION whose text matches ERE (a file name).
block() {
	local f
	for f in "$dir"/blocks/[0-9][0-9]; do
		[ -e "$f" ] || return 1
		if [ "$(cat "$f.sec")" = "$1" ] && grep -qE -- "$2" "$f.txt"; then
			echo "$f.txt"
			return 0
		fi
	done
	return 1
}
# answer_of FILE: the display right after FILE, when it is a JSON answer (starts with {).
answer_of() {
	local n next
	n=$(basename "$1" .txt)
	next=$(printf '%s/blocks/%02d' "$dir" $((10#$n + 1)))
	[ -f "$next.txt" ] && [ "$(cat "$next.sec")" = "$(cat "$dir/blocks/$n.sec")" ] &&
		head -c1 "$next.txt" | grep -q '{' && echo "$next.txt"
}
# section NAME: the source lines of one section, un-escaped.
section() {
	awk -v s="$1" '/^\.Sh /{ on = (substr($0, 5) == s); next } on' "$page" | unescape
}
# The text of a .Ql/.Li macro line without trailing mdoc delimiters (" ," " ." " ;").
macro_text() { sed -E 's/^\.(Ql|Li) //; s/( [][,.;:()])+$//'; }

# --- The stack and the accounts the examples need ----------------------------------------

"$srcdir/tests/stack.sh" start "$dir" >"$dir/stack.log" 2>&1 ||
	{ cat "$dir/stack.log" >&2; die "the stack starts"; }
# shellcheck disable=SC1091
. "$dir/stack.env"
base=$MARKETPAY_BASE_URL
ctl() { "$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" "$@"; }
sql() { psql -X -qAt -v ON_ERROR_STOP=1 -c "$1"; }

create_cmd=$(block EXAMPLES 'create-session') || die "EXAMPLES has a create-session example"
create_ans=$(answer_of "$create_cmd") || die "the create-session example shows its answer"
get_cmd=$(block EXAMPLES '/api/v1/payment/sessions/') || die "EXAMPLES has a session lookup"
transfer_cmd=$(block EXAMPLES 'send-money-MultiVendor') || die "EXAMPLES has a transfer example"
transfer_ans=$(answer_of "$transfer_cmd") || die "the transfer example shows its answer"
health_cmd=$(block EXAMPLES '/api/v1/health') || die "EXAMPLES has a health example"
pin_cmd=$(block 'PIN ENCRYPTION' 'openssl pkeyutl') || die "PIN ENCRYPTION has its openssl recipe"
node_cmd=$(block 'PIN ENCRYPTION' 'publicEncrypt') || die "PIN ENCRYPTION has its Node.js code"
hook_body=$(block WEBHOOKS '^\{"id"') || die "WEBHOOKS shows an example webhook body"
sig_cmd=$(block WEBHOOKS 'openssl dgst') || die "WEBHOOKS has the signature shell command"
sig_header=$(block WEBHOOKS '^webhook-signature: ') || die "WEBHOOKS shows the signature header"
redirect_ex=$(block 'HOSTED CHECKOUT' '^https?://') || die "HOSTED CHECKOUT shows a redirect"
error_shape=$(block 'ERROR RESPONSES' '"success":false') || die "ERROR RESPONSES shows the body"

# The example merchant: the webhook example's currency, settlement on, the page's PIN, a
# funded settlement account, and as many vendor accounts as the transfer example names.
currency=$(tr -d '\n' <"$hook_body" | jq -r .data.currency)
# The recipe's first line: printf %s:%s:%s PIN "$(date +%s)" "$(openssl rand -hex 16)" |
page_pin=$(grep -oE "printf %s:%s:%s [0-9]+ " "$transfer_cmd" | head -1 | awk '{print $3}')
[ -n "$page_pin" ] || die "the transfer example makes the PIN block with printf %s:%s:%s PIN"
case $(head -1 "$pin_cmd") in
"printf %s:%s:%s $page_pin "*' |') ;;
*) die "PIN ENCRYPTION's recipe starts with the page's PIN block: printf %s:%s:%s $page_pin ... |" \
	"$(head -1 "$pin_cmd")" ;;
esac
# The policy the page states, with its defaults.
pin_section=$(section 'PIN ENCRYPTION')
max_age=$(tr '\n' ' ' <<<"$pin_section" | grep -oE 'pin_max_age seconds \([0-9]+ by default\)' |
	grep -oE '[0-9]+')
max_attempts=$(tr '\n' ' ' <<<"$pin_section" | grep -oE 'in a row \([0-9]+ by default\)' |
	grep -oE '[0-9]+')
lock_minutes=$(tr '\n' ' ' <<<"$pin_section" | grep -oE 'pin_lock_seconds \([0-9]+ minutes by default\)' |
	grep -oE '[0-9]+')
max_locks=$(tr '\n' ' ' <<<"$pin_section" | grep -oE 'timed locks \([0-9]+ by default\)' |
	grep -oE '[0-9]+')
[ -n "$max_age" ] && [ -n "$max_attempts" ] && [ -n "$lock_minutes" ] && [ -n "$max_locks" ] ||
	die "PIN ENCRYPTION states pin_max_age, pin_max_attempts, pin_lock_seconds and pin_max_locks" \
		"($max_age, $max_attempts, $lock_minutes, $max_locks)"
merchant=$(ctl merchant create --name 'Tea House' --currency "$currency" \
	--webhook-url "$MARKETPAY_WEBHOOK_RECEIVER") || die "merchant create"
key=$(ctl key create "$merchant") || die "key create"
secret=$(ctl merchant webhook "$merchant" --url "$MARKETPAY_WEBHOOK_RECEIVER") ||
	die "merchant webhook"
ctl merchant settlement "$merchant" on >/dev/null
printf '%s\n' "$page_pin" | ctl merchant pin "$merchant" >/dev/null
settlement=$(ctl account create --kind merchant --merchant "$merchant")
ctl account deposit "$settlement" 100.00 >/dev/null
mapfile -t page_vendors < <(grep -oE '\b[A-Z]{2}[0-9]{10}\b' "$transfer_cmd" | awk '!seen[$0]++')
[ ${#page_vendors[@]} -gt 0 ] || die "the transfer example names vendor accounts"
vendors=()
for v in "${page_vendors[@]}"; do
	vendors+=("$(ctl account create --kind vendor --currency "$currency" --name "Vendor $v")")
done

# fill FILE: an example with its placeholders filled in, ready for bash.
fill() {
	local text i
	text=$(cat "$1")
	text=${text//\{sandbox_base_url\}/$base}
	text=${text//mp_test_.../$key}
	for i in "${!page_vendors[@]}"; do
		text=${text//${page_vendors[$i]}/${vendors[$i]}}
	done
	printf '%s\n' "$text"
}

# run_example NAME SCRIPT: runs SCRIPT (bash) in the working directory w/, with curl
# recording each response's headers in w/NAME.<n>.h; its standard output in w/NAME.out.
cat >"$dir/w/curl-wrap.sh" <<'WRAP'
curl() { command curl -sS -D "$MP_HDRS.$(date +%s%N).h" "$@"; }
WRAP
run_example() {
	(cd "$dir/w" && MP_HDRS="$dir/w/$1" bash -c \
		'set -eo pipefail; . ./curl-wrap.sh; . ./'"$1"'.sh' >"$1.out" 2>"$1.err") && return 0
	sed 's/^/     stderr: /' "$dir/w/$1.err"
	return 1
}
# headers_of NAME: the header files of NAME's responses, oldest first.
headers_of() { ls "$dir/w/$1".*.h 2>/dev/null | sort; }
status_of() { head -1 "$1" | awk '{print $2}'; }
header_in() { grep -i "^$2:" "$1" | tail -1 | sed -E 's/^[^:]*: *//; s/\r$//'; }

# The shape of a JSON document for comparing a reply with the page: ids, dates and times
# become their pattern, every other value stays.
norm='walk(if type == "string" then
	gsub("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"; "<uuid>")
	| sub("^evt_[0-9a-f]{32}$"; "evt_<32 hex>")
	| sub("^tr_([0-9a-f]{32}|\\.\\.\\.)$"; "tr_<id>")
	| sub("^trr_([0-9a-f]{32}|\\.\\.\\.)$"; "trr_<id>")
	| sub("^re_([0-9a-f]{32}|\\.\\.\\.)$"; "re_<id>")
	| sub("^trg_[0-9a-f]{32}$"; "trg_<id>")
	| sub("^whsec_[A-Za-z0-9+/]{32}$"; "whsec_<secret>")
	| sub("^[0-9]+$"; "<digits>")
	| sub("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\+00:00$"; "<ISO 8601 UTC>")
	| sub("^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$"; "<YYYY-MM-DD HH:MM:SS>")
	else . end)'
# The numbers of a JSON text as written ("amount":36.00), in order.
numbers() { grep -oE '"[A-Za-z_]+": *-?[0-9][0-9.eE+-]*' | tr -d ' '; }
# like_page DESCRIPTION REPLY PAGE_TEXT: the reply has the page's shape and numbers.
like_page() {
	local got want
	if ! got=$(jq -cS "$norm" <<<"$2" 2>/dev/null); then
		fail "$1" "not JSON: $2"
		return
	fi
	want=$(jq -cS "$norm" <<<"${3//\{sandbox_base_url\}/$base}") ||
		{ fail "$1" "the page's answer is not JSON"; return; }
	if [ "$got" != "$want" ]; then
		fail "$1" "reply: $got" "page:  $want"
	elif [ "$(numbers <<<"$2")" != "$(numbers <<<"$3")" ]; then
		fail "$1: numbers as written" "reply: $(numbers <<<"$2" | tr '\n' ' ')" \
			"page:  $(numbers <<<"$3" | tr '\n' ' ')"
	else
		ok "$1"
	fi
}

# call METHOD PATH CURL-ARGS...: one request; sets code, body and hdrs (a file).
hdrs="$dir/w/call.h"
call() {
	local m=$1 p=$2
	shift 2
	code=$(curl -sS -X "$m" -o "$dir/w/call.body" -D "$hdrs" -w '%{http_code}' "$@" "$base$p") ||
		code=000
	body=$(cat "$dir/w/call.body")
	seen_status+=" $code "
	if [ "$m $p $code" = "POST $CS 200" ] &&
		[ -z "$(header_in "$hdrs" Idempotent-Replayed)" ]; then
		sessions_made=$((sessions_made + 1))
	fi
}
sessions_made=0 seen_status="" seen_messages="$dir/seen-messages"
: >"$seen_messages"
auth() { printf 'Authorization: API-KEY %s' "$1"; }
JSON='Content-Type: application/json'
CS=/api/v1/payment/create-session
SEND=/api/v1/payment/send-money-MultiVendor
PK=/api/v1/payment/pin-public-key

# expect_error DESCRIPTION STATUS MESSAGE: the last call failed with the page's error body.
expect_error() {
	local msg
	msg=$(jq -r '.message // empty' <<<"$body" 2>/dev/null) || msg=""
	printf '%s\n' "$msg" >>"$seen_messages"
	if [ "$code" != "$2" ]; then
		fail "$1" "status $code, not $2: $body"
	elif [ "$(jq -c 'keys' <<<"$body" 2>/dev/null)" != "$error_keys" ] ||
		[ "$(jq -r .success <<<"$body")" != false ]; then
		fail "$1" "not the documented error body ($error_keys, success false): $body"
	elif [ "$3" != "*" ] && [ "$msg" != "$3" ]; then
		fail "$1" "message: $msg" "want:    $3"
	elif [ -z "$(header_in "$hdrs" Request-Id)" ]; then
		fail "$1" "no Request-Id header"
	else
		ok "$1"
	fi
}
# expect_deny DESCRIPTION DETAIL: the last call was refused with 401 {"detail": DETAIL}.
expect_deny() {
	printf '%s\n' "$(jq -r '.detail // empty' <<<"$body" 2>/dev/null)" >>"$seen_messages"
	if [ "$code" = 401 ] && [ "$(jq -c . <<<"$body" 2>/dev/null)" = "$(jq -nc --arg d "$2" '{detail: $d}')" ]; then
		ok "$1"
	else
		fail "$1" "status $code: $body" "want: 401 {\"detail\":\"$2\"}"
	fi
}
expect_ok() {
	if [ "$code" = 200 ] && [ "$(jq -r .success <<<"$body" 2>/dev/null)" = true ]; then
		ok "$1"
	else
		fail "$1" "status $code: $body"
	fi
}

# Everything a rejected request could change, as one string.
footprint() {
	sql "SELECT (SELECT count(*) FROM payment_sessions) || '/' ||
		(SELECT count(*) FROM session_items) || '/' ||
		(SELECT count(*) FROM ledger_transactions) || '/' ||
		(SELECT count(*) FROM ledger_entries) || '/' || (SELECT count(*) FROM transfers) || '/' ||
		(SELECT count(*) FROM idempotency_keys) || '/' || (SELECT count(*) FROM webhook_events)
		|| '/' || (SELECT count(*) FROM refunds) || '/' || (SELECT count(*) FROM transfer_reversals)
		|| '/' || (SELECT md5(string_agg(id || ':' || balance || ':' || version || ':' || status,
		',' ORDER BY id)) FROM accounts)"
}

error_keys=$(tr -d '\n' <"$error_shape" | jq -c keys) || die "the error body of the page is JSON"

# --- EXAMPLES: create a session ----------------------------------------------------------

fill "$create_cmd" >"$dir/w/create.sh"
idem_key=$(grep -oE "Idempotency-Key: [^']+" "$create_cmd" | head -1 | cut -d' ' -f2)
t0=$(date -u +%s)
check "EXAMPLES: the create-session example runs" run_example create
created=$(cat "$dir/w/create.out")
sid=$(jq -r '.session_id // empty' <<<"$created" 2>/dev/null) || true
[ -n "$sid" ] || die "the create-session example makes a session" "$created"
h=$(headers_of create | head -1)
same "EXAMPLES: create-session answers 200" "$(status_of "$h")" 200
check "every response carries a Request-Id header" test -n "$(header_in "$h" Request-Id)"
like_page "EXAMPLES: the create-session answer is the page's" "$created" \
	"$(tr -d '\n' <"$create_ans")"
same "the url ends in /checkout/session_id" "$(jq -r .url <<<"$created")" "$base/checkout/$sid"
expires=$(jq -r .expires_at <<<"$created")
left=$(($(date -u -d "$expires" +%s) - t0))
check "expires_at is session_lifetime (30 minutes by default) after creation" \
	test "$left" -ge 1795 -a "$left" -le 1805
check "session_id is a UUID of version 7" \
	grep -qE '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' <<<"$sid"
# Its first 48 bits: the time it was made, in milliseconds since 1970 (within a minute of t0).
check "session_id begins with the time it was made" \
	test $(( $((16#${sid:0:8}${sid:9:4})) / 1000 - t0 )) -ge -60 -a $(( $((16#${sid:0:8}${sid:9:4})) / 1000 - t0 )) -le 60

# The same command again is a retry with the same Idempotency-Key: the stored answer.
before=$(footprint)
check "IDEMPOTENCY: the create-session example run again" run_example create
h=$(headers_of create | tail -1)
same "IDEMPOTENCY: a retry with the same body gets the stored answer" \
	"$(cat "$dir/w/create.out")" "$created"
same "IDEMPOTENCY: ... with the header Idempotent-Replayed: true" \
	"$(header_in "$h" Idempotent-Replayed)" true
same "IDEMPOTENCY: ... and nothing is done a second time" "$(footprint)" "$before"

# --- EXAMPLES: read the session back -----------------------------------------------------

fill "$get_cmd" | sed -E "s/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/$sid/g" \
	>"$dir/w/get.sh"
check "EXAMPLES: the session lookup example runs" run_example get
got=$(cat "$dir/w/get.out")
same "EXAMPLES: the session lookup answers 200" "$(status_of "$(headers_of get | tail -1)")" 200
sent=$(sed -n "/-d '/,/}'/p" "$create_cmd" | sed -E "s/^.*-d '//; s/'.*$//" | tr -d '\n')
# The fields the page lists for the lookup (.Li lines up to "url", not those of an item).
get_text=$(section ENDPOINTS | awk '/^\.Ss GET \/api\/v1\/payment\/sessions\//{ on = 1; next }
	/^\.Ss /{ on = 0 } on')
get_fields=$(awk '/^\(each with/{ skip = 1 } /^\.Li / && !skip { print $2 } /\)/{ skip = 0 }
	/^\.Li url/{ exit }' <<<"$get_text" | sort | tr '\n' ' ')
same "GET session: the fields the page lists, no others" \
	"$(jq -r 'keys[]' <<<"$got" 2>/dev/null | sort | tr '\n' ' ')" "$get_fields"
same "GET session: status_code 10, success true, message as the page says" \
	"$(jq -c '[.status_code, .success, .message]' <<<"$got")" \
	"[10,true,\"$(grep -m1 -E '^\.Ql ' <<<"$get_text" | macro_text)\"]"
same "GET session: what was sent, amount and prices as strings with two decimals" \
	"$(jq -c '[.session_id, .status, .amount, .currency, .user_id, .email, .redirect_success_url,
		.redirect_failure_url, .items, .expires_at, .url]' <<<"$got")" \
	"$(jq -c --arg sid "$sid" --arg cur "$currency" --argjson c "$created" \
		'[$sid, "open", (.items | map(.price) | add | . * 100 | round | tostring |
		.[:-2] + "." + .[-2:]), $cur, .user_id, .email, .redirect_success_url,
		.redirect_failure_url, (.items | map(.price |= (. * 100 | round | tostring |
		.[:-2] + "." + .[-2:]))), $c.expires_at, $c.url]' <<<"$sent")"
check "GET session: created_at is ISO 8601 in UTC" \
	grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\+00:00$' \
	<<<"$(jq -r .created_at <<<"$got")"

# --- EXAMPLES: health ----------------------------------------------------------------------

fill "$health_cmd" >"$dir/w/health.sh"
check "EXAMPLES: the health example runs" run_example health
health_ok=$(section ENDPOINTS | grep -E '^\.Li \{"status":"ok"' | macro_text)
same "EXAMPLES: health answers 200 with the page's body" \
	"$(status_of "$(headers_of health | tail -1)") $(cat "$dir/w/health.out")" "200 $health_ok"

# --- EXAMPLES: PIN key, PIN encryption, transfer -------------------------------------------

mbal() { ctl account show "$1" | awk -F'\t' '$1 == "balance" { print $2 }'; }
fill "$transfer_cmd" >"$dir/w/transfer.sh"
check "EXAMPLES: the transfer example runs" run_example transfer
moved=$(cat "$dir/w/transfer.out")
mapfile -t th < <(headers_of transfer)
same "EXAMPLES: pin-public-key and the transfer answer 200" \
	"$(status_of "${th[0]:-/dev/null}") $(status_of "${th[1]:-/dev/null}")" "200 200"
check "PIN ENCRYPTION: public_key is an RSA public key in PEM" \
	openssl pkey -pubin -in "$dir/w/pin-public.pem" -noout
like_page "EXAMPLES: the transfer answer is the page's" "$moved" "$(tr -d '\n' <"$transfer_ans")"
check "the transaction_date is now, in UTC (the default time zone)" test \
	$(($(date -u +%s) - $(date -u -d "$(jq -r .transaction_date <<<"$moved")" +%s))) -le 60
got=""
for v in "${vendors[@]}"; do got+="$(mbal "$v") "; done
same "the vendors are credited, in request order" "$got" \
	"$(jq -r '.vendors[].amount | . * 100 | round | tostring | .[:-2] + "." + .[-2:]' \
		"$dir/w/transfer.json" | tr '\n' ' ')"
same "the settlement account is debited by the total" "$(mbal "$settlement")" \
	"$(jq -r '100 - (.vendors | map(.amount) | add) | . * 100 | round | tostring |
		.[:-2] + "." + .[-2:]' "$dir/w/transfer.json")"

# Resending the kept body with the same key: the stored answer, nothing moved again.
tkey=$(grep -oE "Idempotency-Key: [^']+" "$transfer_cmd" | head -1 | cut -d' ' -f2)
before=$(footprint)
call POST "$SEND" -H "$(auth "$key")" -H "$JSON" \
	-H "Idempotency-Key: $tkey" --data-binary @"$dir/w/transfer.json"
same "IDEMPOTENCY: the kept transfer body resent gets the stored answer" "$code $body" "200 $moved"
same "IDEMPOTENCY: ... marked Idempotent-Replayed: true" "$(header_in "$hdrs" Idempotent-Replayed)" true
same "IDEMPOTENCY: ... and moves nothing" "$(footprint)" "$before"
# The whole example again encrypts the PIN again: another body, so 422.
run_example transfer || true
body=$(cat "$dir/w/transfer.out") code=$(status_of "$(headers_of transfer | tail -1)")
expect_error "IDEMPOTENCY: the example re-run (PIN encrypted again) is answered 422" 422 \
	"Idempotency-Key was already used with a different request"
same "IDEMPOTENCY: ... and moves nothing" "$(footprint)" "$before"

# PIN ENCRYPTION: the section's recipe, with the key the transfer example saved.
fill "$pin_cmd" >"$dir/w/pin.sh"
check "PIN ENCRYPTION: the openssl recipe runs" run_example pin
pin2=$(cat "$dir/w/pin.out")
check "PIN ENCRYPTION: its output is base64 on one line" grep -qxE '[A-Za-z0-9+/]+=*' <<<"$pin2"
one_vendor() { jq -nc --arg p "$1" --arg v "${vendors[0]}" '{pin: $p, vendors: [{account_number: $v, amount: 1.00}]}'; }
call POST "$SEND" -H "$(auth "$key")" -H "$JSON" -d "$(one_vendor "$pin2")"
expect_ok "PIN ENCRYPTION: its output is accepted by a real transfer"
# What it encrypted, read back with the stack's private key (x keeps a trailing newline).
plain=$(base64 -d <<<"$pin2" | openssl pkeyutl -decrypt -inkey "$dir/pin-key.pem" \
	-pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256 -pkeyopt rsa_mgf1_md:sha256
	echo x) || plain=x
plain=${plain%x}
if [[ $plain =~ ^([0-9]+):([0-9]+):([A-Za-z0-9_-]{16,64})$ ]] &&
	[ "${BASH_REMATCH[1]}" = "$page_pin" ] &&
	[ $(($(date +%s) - BASH_REMATCH[2])) -le 60 ] && [ $((BASH_REMATCH[2] - $(date +%s))) -le 0 ]; then
	ok "PIN ENCRYPTION: it encrypts PIN:UNIX_TIME:NONCE (the PIN, the time now, a nonce), nothing else"
else
	fail "PIN ENCRYPTION: it encrypts PIN:UNIX_TIME:NONCE (the PIN, the time now, a nonce), nothing else" \
		"decrypted: $(printf %q "$plain")"
fi
# The Node.js code prints nothing: its pin is printed after it.
if command -v node >/dev/null 2>&1; then
	{ fill "$node_cmd"; echo 'console.log(pin);'; } >"$dir/w/pin.js"
	if (cd "$dir/w" && node pin.js >pin-node.out 2>pin-node.err); then
		ok "PIN ENCRYPTION: the Node.js code runs"
	else
		fail "PIN ENCRYPTION: the Node.js code runs" "$(cat "$dir/w/pin-node.err")"
	fi
	call POST "$SEND" -H "$(auth "$key")" -H "$JSON" -d "$(one_vendor "$(cat "$dir/w/pin-node.out")")"
	expect_ok "PIN ENCRYPTION: the Node.js pin is accepted by a real transfer"
else
	echo "not run: the Node.js example of PIN ENCRYPTION (node is not installed)"
fi

# --- WEBHOOKS: the worked signature example ------------------------------------------------

hooks=$(section WEBHOOKS)
vec_secret=$(grep -oE 'whsec_[A-Za-z0-9+/=]+' <<<"$hooks" | grep -v '^whsec_$' | head -1)
vec_id=$(grep -oE 'webhook-id: [^ ]+' <<<"$hooks" | head -1 | cut -d' ' -f2)
vec_ts=$(grep -oE 'webhook-timestamp: [0-9]+' <<<"$hooks" | head -1 | cut -d' ' -f2)
printed=$(grep -A1 -E 'this prints$' <<<"$hooks" | tail -1 | macro_text)
want_sig=$(sed -E 's/^webhook-signature: v1,//' "$sig_header")
same "WEBHOOKS: the signature the page prints is the header's" "$printed" "$want_sig"
(cd "$dir/w" && bash -c 'set -eo pipefail; . /dev/stdin' <"$sig_cmd" >sig.out 2>sig.err) || true
same "WEBHOOKS: the signature shell example prints the documented signature" \
	"$(cat "$dir/w/sig.out")" "$printed"
od_cmd=$(grep -A1 -E '^use$' <<<"$hooks" | tail -1 | macro_text)
script=$(cat "$sig_cmd")
xxd_part=$(grep -oE 'xxd[^)|]*[^)| ]' "$sig_cmd" | head -1)
od_script=${script/"$xxd_part"/$od_cmd}
(cd "$dir/w" && bash -c 'set -eo pipefail; . /dev/stdin' <<<"$od_script" >sig2.out 2>&1) || true
same "WEBHOOKS: ... also with od in place of xxd" "$(cat "$dir/w/sig2.out")" "$printed"
content=$(grep -vE '^\s*$' "$(block WEBHOOKS "^$vec_id\\.")" 2>/dev/null || true)
vec_body=$(grep -A1 -E '^and the body$' <<<"$hooks" | tail -1 | macro_text)
same "WEBHOOKS: the signed content is id.timestamp.body" "$content" "$vec_id.$vec_ts.$vec_body"
check "WEBHOOKS: the shell example signs those values" grep -qF "secret=$vec_secret" "$sig_cmd"
check "WEBHOOKS: ... id and timestamp" grep -qF "id=$vec_id ts=$vec_ts" "$sig_cmd"
check "WEBHOOKS: ... and body" grep -qF "body='$vec_body'" "$sig_cmd"

# --- HOSTED CHECKOUT and a real webhook ----------------------------------------------------

# pay SESSION [CARD [ACTION]]: pays it at the checkout page with a test card, by default
# the one the page lists as paid, with an expiry of this month.
card=$(section 'TEST CARDS' | awk -F' Ta ' '/^\.It [0-9]/ && $2 == "paid" { sub(/^\.It /, "", $1); print $1 }')
# csrf_of SESSION: the CSRF token of its checkout page's forms.
csrf_of() {
	curl -sS "$base/checkout/$1" | grep -oE 'name="csrf" value="[0-9a-f]{64}"' |
		head -1 | grep -oE '[0-9a-f]{64}' || true
}
pay() {
	local csrf
	csrf=$(csrf_of "$1")
	call POST "/checkout/$1" --data-urlencode "csrf=$csrf" -d method=test_card \
		-d "action=${3:-pay}" --data-urlencode "card_number=${2:-$card}" \
		-d "card_expiry=$(date -u +%m/%y)" -d card_cvc=123
}
check "WEBHOOKS: the signing secret is whsec_ and base64" grep -qxE 'whsec_[A-Za-z0-9+/]+=*' \
	<<<"$secret"
pay "$sid"
same "HOSTED CHECKOUT: a payment redirects (303) as the page shows" \
	"$code $(header_in "$hdrs" Location)" \
	"303 $(sed -E "s/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/$sid/g" "$redirect_ex")"
call GET "/api/v1/payment/sessions/$sid" -H "$(auth "$key")"
same "GET session: a paid session reads paid" "$(jq -r .status <<<"$body")" paid

# A session with the data of the page's example webhook, paid the same way.
example_hook=$(tr -d '\n' <"$hook_body")
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -d "$(jq -c \
	'.data | {items: (.items | map(.price |= tonumber)), user_id, email}' <<<"$example_hook")"
expect_ok "a session like the example webhook's (email null counts as absent)"
sid2=$(jq -r .session_id <<<"$body")
[ "$(jq -r .data.payment_method <<<"$example_hook")" = test_card ] ||
	fail "the example webhook was paid with a test card (the sandbox pays only so)"
pay "$sid2"
# wait_hook TYPE JQ-PATH VALUE: the first webhook the receiver got of TYPE whose body has VALUE
# at JQ-PATH (as the receiver logged it: .body, .id, .signature, ...), within 10 s; or nothing.
wait_hook() {
	local h="" i
	for i in $(seq 1 100); do
		h=$(jq -c --arg t "$1" --arg v "$3" "select((.body | fromjson? |
			select(.type == \$t) | $2) == \$v)" "$dir/webhooks.log" 2>/dev/null | head -1)
		[ -z "$h" ] || break
		sleep 0.1
	done
	printf '%s' "$h"
}
# page_signature HOOK: what the page's shell command makes of what the merchant received.
page_signature() {
	local script
	script=$(cat "$sig_cmd")
	script=${script//"$vec_secret"/$secret}
	script=${script//"$vec_id"/$(jq -r .id <<<"$1")}
	script=${script//"$vec_ts"/$(jq -r .timestamp <<<"$1")}
	script=${script//"'$vec_body'"/'"$MP_BODY"'}
	(cd "$dir/w" && MP_BODY=$(jq -r .body <<<"$1") bash -c 'set -eo pipefail; . /dev/stdin' \
		<<<"$script" 2>&1) || true
}
hook=$(wait_hook payment.succeeded .data.session_id "$sid2")
if [ -z "$hook" ]; then
	fail "WEBHOOKS: the payment sends a payment.succeeded webhook" "none in 10 s"
else
	real_body=$(jq -r .body <<<"$hook")
	like_page "WEBHOOKS: the webhook body is like the page's example" "$real_body" "$example_hook"
	same "WEBHOOKS: the event id is the webhook-id header" "$(jq -r .id <<<"$real_body")" \
		"$(jq -r .id <<<"$hook")"
	same "WEBHOOKS: webhook-signature is v1,signature" \
		"$(jq -r .signature <<<"$hook" | cut -c1-3)" "v1,"
	check "WEBHOOKS: webhook-timestamp is now, in seconds since 1970" \
		test $(($(date +%s) - $(jq -r .timestamp <<<"$hook"))) -le 30
	# The page's verification command, on what the merchant received.
	same "WEBHOOKS: the page's shell command verifies a real webhook" \
		"v1,$(page_signature "$hook")" "$(jq -r .signature <<<"$hook")"
	same "WEBHOOKS: it is sent as Content-Type: application/json" \
		"$(jq -r .content_type <<<"$hook")" application/json
fi

# TEST CARDS: every number of the table, and one that is not a test card; a cancel; expiry.
ok_url=https://shop.example.com/ok no_url='https://shop.example.com/no?x=1#top'
new_session() {
	call POST "$CS" -H "$(auth "$key")" -H "$JSON" -d "{\"items\":[{\"id\":\"a\",\"name\":\"b\",
		\"price\":1}],\"redirect_success_url\":\"$ok_url\",\"redirect_failure_url\":\"$no_url\"}"
	s=$(jq -r '.session_id // empty' <<<"$body" 2>/dev/null) || s=""
}
session_status() {
	curl -sS -H "$(auth "$key")" "$base/api/v1/payment/sessions/$1" | jq -r .status 2>/dev/null
}
while IFS=$'\t' read -r number outcome; do
	new_session
	pay "$s" "$number"
	want=${outcome##* }   # "paid", or "... session failed"
	url=$([ "$want" = paid ] && echo "$ok_url?session_id=$s" ||
		echo "${no_url%%#*}&session_id=$s#${no_url#*#}")
	same "TEST CARDS: $number: $outcome (303 to the $([ "$want" = paid ] && echo success ||
		echo failure) URL, query and fragment kept)" \
		"$code $(header_in "$hdrs" Location) $(session_status "$s")" "303 $url $want"
done < <(section 'TEST CARDS' | awk -F' Ta ' '/^\.It [0-9]/ { sub(/^\.It /, "", $1); print $1 "\t" $2 }')
new_session
pay "$s" "4111 1111 1111 1111"
same "TEST CARDS: another number is refused and the session stays open" \
	"$code $(session_status "$s")" "200 open"
pay "$s" "" cancel
same "HOSTED CHECKOUT: cancel ends the session as canceled (303 to the failure URL)" \
	"$code $(header_in "$hdrs" Location) $(session_status "$s")" \
	"303 ${no_url%%#*}&session_id=$s#${no_url#*#} canceled"
new_session
sql "UPDATE payment_sessions SET created_at = now() - interval '2 hours',
	expires_at = now() - interval '1 hour' WHERE id = '$s'" >/dev/null
same "GET session: an open session past its expiry reads expired" "$(session_status "$s")" expired
call GET "/checkout/$s"
same "HOSTED CHECKOUT: after expiry the page answers 410" "$code" 410
# marketpay-webhookd's sweep (expire_interval = 1 in tests/stack.sh) stores it, with its
# session.expired: before the footprints below are taken.
for i in $(seq 1 50); do
	[ "$(sql "SELECT status FROM payment_sessions WHERE id = '$s'")" = expired ] && break
	sleep 0.1
done
same "WEBHOOKS: the sweep stores an open session past its expiry as expired, with its event" \
	"$(sql "SELECT status || ' ' || (SELECT count(*) FROM webhook_events WHERE type =
	'session.expired' AND body::json->'data'->>'session_id' = '$s') FROM payment_sessions
	WHERE id = '$s'")" "expired 1"

# --- ERROR RESPONSES -----------------------------------------------------------------------

errs=$(section 'ERROR RESPONSES')
deny_session=$(grep -A1 -E '^\.Ql ' <<<"$errs" | grep -B1 -E '^for create-session' |
	head -1 | macro_text)
deny_transfer=$(grep -A1 -E '^\.Ql ' <<<"$errs" | grep -B1 -E '^for send-money' |
	head -1 | macro_text)
[ -n "$deny_session" ] && [ -n "$deny_transfer" ] ||
	die "ERROR RESPONSES names the 401 texts of both endpoint groups"
tea='{"items":[{"id":"sku-1","name":"Tea","price":12.50}]}'
before=$(footprint)

# 1. 404 and 405.
call GET /api/v1/payment/no-such-thing -H "$(auth "$key")"
expect_error "404 'no such endpoint'" 404 "no such endpoint"
call GET "$CS" -H "$(auth "$key")"
expect_error "405 when the path takes another method" 405 "*"
same "405 carries an Allow header" "$(header_in "$hdrs" Allow)" POST
call GET "$CS"
same "404/405 come before authentication" "$code" 405

# 3. 401, with the text of each endpoint group.
call POST "$CS" -H "$JSON" -d "$tea"
expect_deny "401 create-session without a key" "$deny_session"
call GET "/api/v1/payment/sessions/$sid"
expect_deny "401 session lookup without a key" "$deny_session"
call POST "$SEND" -H "$JSON" -d '{}'
expect_deny "401 send-money-MultiVendor without a key" "$deny_transfer"
call GET "$PK"
expect_deny "401 pin-public-key without a key" "$deny_transfer"
for bad in "Bearer $key" "API-KEY  $key" "API-KEY ${key}-x" "API-KEY $key$(printf '%0129d' 0)" \
	"API-KEY" "API-KEY mp_test_$(printf '%048d' 0)" "API-KEY$key"; do
	call POST "$CS" -H "$JSON" -H "Authorization: $bad" -d "$tea"
	expect_deny "401 malformed or unknown: '${bad:0:24}...'" "$deny_session"
done
call POST "$CS" -H "$JSON" -H "Authorization: api-key $key" -d "$tea"
expect_ok "the scheme word in any letter case ('api-key')"
sed 's/^environment = sandbox$/environment = production/' "$MARKETPAY_CONFIG" >"$dir/prod.conf"
# marketpayctl refuses a database of the other environment: the production key is made in
# the database as marketpayctl would make it there (prefix, SHA-256 digest, environment).
if "$MARKETPAYCTL" -c "$dir/prod.conf" key create "$merchant" >"$dir/w/prod.out" 2>&1; then
	fail "marketpayctl with a production configuration refuses the sandbox database" \
		"$(cat "$dir/w/prod.out")"
else
	ok "marketpayctl with a production configuration refuses the sandbox database"
fi
live=mp_live_$(openssl rand -hex 24)
sql "INSERT INTO api_keys (merchant_id, prefix, digest, environment) VALUES ($merchant,
	'${live:0:16}', '\\x$(printf %s "$live" | sha256sum | cut -d' ' -f1)', 'production')" >/dev/null
call POST "$CS" -H "$JSON" -H "$(auth "$live")" -d "$tea"
expect_deny "401 for a key of the other environment" "$deny_session"
call GET "$PK" -H "$(auth "$live")"
expect_deny "401 for a key of the other environment (pin-public-key)" "$deny_transfer"
old=$(ctl key create "$merchant")
call GET "/api/v1/payment/sessions/$sid" -H "$(auth "$old")"
expect_ok "a second key works"
ctl key revoke "${old:0:16}" >/dev/null
call GET "/api/v1/payment/sessions/$sid" -H "$(auth "$old")"
expect_deny "401 for a revoked key, from the next request on" "$deny_session"
call POST "$SEND" -H "$(auth "$old")" -H "$JSON" -d '{}'
expect_deny "401 for a revoked key (transfer)" "$deny_transfer"
call POST "$CS" -H 'Content-Type: text/plain' -d 'nonsense'
same "401 comes before the body checks" "$code" 401
before_sessions=$(sql "SELECT count(*) FROM payment_sessions") made_before=$sessions_made

# 4. The body: 415, 411, 413.
call POST "$CS" -H "$(auth "$key")" -H 'Content-Type: text/plain' -d "$tea"
expect_error "415 when the content type is not application/json" 415 "*"
call POST "$CS" -H "$(auth "$key")" -H 'Content-Type: application/json; charset=utf-8' -d "$tea"
expect_ok "application/json; charset=utf-8 is accepted"
call POST "$CS" -H "$(auth "$key")" -H 'Content-Type: text/plain' -d '{'
same "415 comes before the JSON is read" "$code" 415
call POST "$CS" -H "$(auth "$key")" -H "$JSON"
expect_error "411 without Content-Length" 411 "*"
max_body=$((256 * 1024))
printf '%s%*s' "$tea" $((max_body - ${#tea})) '' >"$dir/w/max.json"
call POST "$CS" -H "$(auth "$key")" -H "$JSON" --data-binary @"$dir/w/max.json"
expect_ok "a body of max_body_bytes (256 KiB) is accepted"
printf ' ' >>"$dir/w/max.json"
call POST "$CS" -H "$(auth "$key")" -H "$JSON" --data-binary @"$dir/w/max.json"
expect_error "413 above max_body_bytes" 413 "*"

# 5. Invalid JSON, rules broken.
for b in '{"items":[{"id":"a","name":"b","price":1}],}' '{"items":[] /* c */}' \
	"$tea [1]" "$tea$tea" '[]' ''; do
	call POST "$CS" -H "$(auth "$key")" -H "$JSON" -d "$b"
	expect_error "400 for not strict JSON: '${b:0:40}'" 400 "*"
done
# price: field, rule and value; the page's list of accepted and refused prices.
for p in 12 12.5 12.50 0.01 999999999.99; do
	call POST "$CS" -H "$(auth "$key")" -H "$JSON" \
		-d "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":$p}]}"
	expect_ok "price $p is accepted"
done
for p in '"12.50"' 1e3 0.001 0 -1 1000000000.00; do
	call POST "$CS" -H "$(auth "$key")" -H "$JSON" \
		-d "{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":$p}]}"
	expect_error "price $p is refused" 400 "*"
	grep -q '^items\[0\]\.price ' <<<"$(jq -r .message <<<"$body")" ||
		fail "... with a message naming items[0].price" "$body"
done
call POST "$CS" -H "$(auth "$key")" -H "$JSON" \
	-d '{"items":[{"id":"a","name":"b","price":0.001}]}'
expect_error "400 'items[0].price must have at most two decimal places'" 400 \
	"items[0].price must have at most two decimal places"
call POST "$CS" -H "$(auth "$key")" -H "$JSON" \
	-d '{"items":[{"id":"a","name":"b","price":999999999.99},{"id":"c","name":"d","price":0.01}]}'
expect_error "400 when the total is above max_amount" 400 "*"
for b in '{}' '{"items":[]}' '{"items":[{"name":"b","price":1}]}' \
	'{"items":[{"id":"a","name":"b","price":1,"quantity":2}]}' \
	'{"items":[{"id":"a","name":"b","price":1}],"amount":1}' \
	"{\"items\":[{\"id\":\"$(printf '%051d' 0)\",\"name\":\"b\",\"price\":1}]}" \
	"{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}],\"user_id\":\"$(printf '%051d' 0)\"}" \
	'{"items":[{"id":"a","name":"b","price":1}],"email":"ana@example"}' \
	'{"items":[{"id":"a","name":"b","price":1}],"email":"a na@example.com"}' \
	"{\"items\":[{\"id\":\"a\",\"name\":\"b\",\"price\":1}],\"email\":\"$(printf '%065d' 0)@example.com\"}" \
	'{"items":[{"id":"a","name":"b","price":1}],"redirect_success_url":"ftp://x.example/"}' \
	'{"items":[{"id":"a","name":"b","price":1}],"redirect_failure_url":"https://u@x.example/"}'; do
	call POST "$CS" -H "$(auth "$key")" -H "$JSON" -d "$b"
	expect_error "400 for a broken rule: ${b:0:60}" 400 "*"
done
items=$(jq -nc '[range(101) | {id: "a", name: "b", price: 1}]')
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -d "{\"items\":${items}}"
expect_error "400 above max_items (100 by default)" 400 "*"
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -d "{\"items\":${items/\{\"id\":\"a\",\"name\":\"b\",\"price\":1\},/}}"
expect_ok "100 items are accepted"
call GET /api/v1/payment/sessions/00000000-0000-4000-8000-000000000000 -H "$(auth "$key")"
expect_error "404 'payment session not found' (unknown)" 404 "payment session not found"
call GET /api/v1/payment/sessions/not-a-uuid -H "$(auth "$key")"
expect_error "404 'payment session not found' (malformed)" 404 "payment session not found"
other=$(ctl merchant create --name 'Other Shop')
okey=$(ctl key create "$other")
call GET "/api/v1/payment/sessions/$sid" -H "$(auth "$okey")"
expect_error "404 'payment session not found' (another merchant's)" 404 "payment session not found"

# IDEMPOTENCY on create-session.
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -H "Idempotency-Key: $idem_key" -d "$tea"
expect_error "422 for the example's key with another body" 422 \
	"Idempotency-Key was already used with a different request"
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -H "Idempotency-Key: $idem_key" -d '{"items":[]}'
expect_error "an invalid body answers 400 whatever the key" 400 "items must not be empty"
call POST "$CS" -H "$(auth "$okey")" -H "$JSON" -H "Idempotency-Key: $idem_key" -d "$tea"
expect_ok "keys are per merchant"
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -H "Idempotency-Key: $(printf '%0256d' 0)" -d "$tea"
expect_error "400 for an Idempotency-Key of 256 characters" 400 "*"
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -H "Idempotency-Key: a b" -d "$tea"
expect_error "400 for an Idempotency-Key with a space" 400 "*"
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -H "Idempotency-Key: $(printf '%0255d' 0)" -d "$tea"
expect_ok "an Idempotency-Key of 255 visible characters is taken"
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -H 'Idempotency-Key: again-1' -d '{"items":1}'
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -H 'Idempotency-Key: again-1' -d "$tea"
expect_ok "a request that failed stores nothing: its key may be used again"
call GET "/api/v1/payment/sessions/$sid" -H "$(auth "$key")" -H "Idempotency-Key: $idem_key"
check "GET requests ignore the header" test "$code" = 200 -a \
	-z "$(header_in "$hdrs" Idempotent-Replayed)"
# 409: hold the lock a request in flight with this key holds, for longer than the wait.
psql -X -qAt -c "BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('$merchant:inflight-1',
	7201)); SELECT pg_sleep(1.5); COMMIT;" >/dev/null 2>&1 &
held_locks=$!
for _ in $(seq 1 100); do
	[ "$(sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND
		(classid::bigint << 32 | objid::bigint) =
		hashtextextended('$merchant:inflight-1', 7201)")" = 0 ] || break
	sleep 0.05
done
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -H 'Idempotency-Key: inflight-1' -d "$tea"
expect_error "409 while a request with the same key is in progress" 409 "*"
wait "$held_locks" 2>/dev/null || true
held_locks=""
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -H 'Idempotency-Key: inflight-1' -d "$tea"
expect_ok "... and once it is done, the key is free (a 409 stores nothing)"

made=$(($(sql "SELECT count(*) FROM payment_sessions") - before_sessions))
same "the rejected create-session requests stored nothing (only the accepted ones did)" \
	"$made" "$((sessions_made - made_before))"

# 6.-8. Transfers: settlement, PIN, idempotency, vendors and balance, in that order.
new_shop() { # new_shop SETTLE DEPOSIT: sets shop, shop_key, shop_acct
	shop=$(ctl merchant create --name "Shop $RANDOM" --currency "$currency")
	shop_key=$(ctl key create "$shop")
	ctl merchant settlement "$shop" "$1" >/dev/null
	printf '%s\n' "$page_pin" | ctl merchant pin "$shop" >/dev/null
	shop_acct=$(ctl account create --kind merchant --merchant "$shop")
	ctl account deposit "$shop_acct" "$2" >/dev/null
}
seal() { # seal DIGITS: a pin value made now by the page's PIN ENCRYPTION recipe for DIGITS
	(cd "$dir/w" && sed "1s/^printf %s:%s:%s $page_pin /printf %s:%s:%s $1 /" pin.sh | bash)
}
seal_block() { # seal_block TEXT: TEXT encrypted as the recipe's openssl and base64 stages do
	(cd "$dir/w" && sed '1s/^printf .*|$/printf %s "$MP_BLOCK" |/' pin.sh | MP_BLOCK=$1 bash)
}
nonce() { openssl rand -hex 16; }
transfer_body() { # transfer_body PIN ACCOUNT AMOUNT [ACCOUNT AMOUNT...]
	local pin=$1 v=""
	shift
	while [ $# -gt 0 ]; do v+="${v:+,}{\"account_number\":\"$1\",\"amount\":$2}"; shift 2; done
	printf '{"pin":"%s","vendors":[%s]}' "$pin" "$v"
}
send() { # send KEY BODY [curl args]
	local k=$1 b=$2
	shift 2
	call POST "$SEND" -H "$(auth "$k")" -H "$JSON" "$@" -d "$b"
}
good() { seal "$page_pin"; }
wrong=1111
[ "$page_pin" != 1111 ] || wrong=2222
v0=${vendors[0]} v1=${vendors[1]:-${vendors[0]}}

new_shop off 100.00
send "$shop_key" '{"pin":"x","vendors":[]}'
expect_error "400 for a broken rule comes before settlement" 400 "vendors must not be empty"
send "$shop_key" "$(transfer_body "$(good)" "$v0" 1.00)"
expect_error "400 'marketplace settlement is not enabled for this merchant'" 400 \
	"marketplace settlement is not enabled for this merchant"

new_shop on 10.00
poor=$shop poor_key=$shop_key
usd=$(ctl account create --kind vendor --currency "$([ "$currency" = EUR ] && echo USD || echo EUR)")
# A vendor the operator froze (marketpayctl account freeze): it takes no transfer.
frozen_vendor=$(ctl account create --kind vendor)
ctl account freeze "$frozen_vendor" --reason 'api-examples: under review' >/dev/null
before=$(footprint)
send "$poor_key" "$(transfer_body "$(good)" "$v0" 12.00 "$v0" 24.00)"
expect_error "400 'vendors[1].account_number repeats vendors[0].account_number'" 400 \
	"vendors[1].account_number repeats vendors[0].account_number"
refused_body=$(transfer_body "$(good)" VE0000000000 12.00)
send "$poor_key" "$refused_body" -H 'Idempotency-Key: refused-1'
expect_error "400 'vendors[0].account_number: no such account'" 400 \
	"vendors[0].account_number: no such account"
send "$poor_key" "$(transfer_body "$(good)" "$v0" 12.00 "$v1" 24.00)"
expect_error "400 'the total 36.00 exceeds the available balance'" 400 \
	"the total 36.00 exceeds the available balance"
send "$poor_key" "$(transfer_body "$(good)" "$settlement" 1.00)"
expect_error "400 for another merchant's (not a vendor) account" 400 "*"
send "$poor_key" "$(transfer_body "$(good)" "$shop_acct" 1.00)"
expect_error "400 for the merchant's own account" 400 "*"
send "$poor_key" "$(transfer_body "$(good)" "$usd" 1.00)"
expect_error "400 for a vendor account of another currency" 400 "*"
send "$poor_key" "$(transfer_body "$(good)" "$v0" 1.00 "$frozen_vendor" 1.00)"
expect_error "400 'vendors[1].account_number is not active' (a frozen vendor)" 400 \
	"vendors[1].account_number is not active"
send "$poor_key" "$(transfer_body "$(good)" "$v0" 1.001)"
expect_error "400 for an amount with three decimals" 400 "vendors[0].amount must have at most two decimal places"
many=()
for i in $(seq 1 17); do many+=("VE$(printf '%010d' "$i")" 1.00); done
send "$poor_key" "$(transfer_body "$(good)" "${many[@]}")"
expect_error "400 above max_vendors (16 by default)" 400 "*"
same "a rejected transfer changes nothing" "$(footprint)" "$before"
# "an encrypted PIN that was checked is spent": the refused body again, with its key (a
# refusal stores nothing) and without.
used_msg=$(grep -E '^\.Ql pin was already used' <<<"$errs" | macro_text)
[ -n "$used_msg" ] || fail "ERROR RESPONSES quotes the message for a pin already used"
send "$poor_key" "$refused_body" -H 'Idempotency-Key: refused-1'
expect_error "IDEMPOTENCY: the body of a refusal resent with its key: its PIN was already used" \
	400 "$used_msg"
send "$poor_key" "$refused_body"
expect_error "... and without the key" 400 "$used_msg"
same "... which changes nothing" "$(footprint)" "$before"

# PIN ENCRYPTION's claims, on a merchant of their own.
new_shop on 100.00
lock=$shop lock_key=$shop_key
failures() { sql "SELECT pin_failures FROM merchants WHERE id = $lock"; }
kept=$(transfer_body "$(good)" "$v0" 1.00)
send "$lock_key" "$kept" -H 'Idempotency-Key: kept-1'
expect_ok "a transfer with an Idempotency-Key"
kept_answer=$body
send "$lock_key" "$kept" -H 'Idempotency-Key: kept-1'
same "IDEMPOTENCY: the same transfer body with its key gets the stored answer" \
	"$code $body $(header_in "$hdrs" Idempotent-Replayed)" "200 $kept_answer true"
send "$lock_key" "$kept"
expect_error "IDEMPOTENCY: the same body without the key: its PIN was already used" 400 "$used_msg"
send "$lock_key" "$(transfer_body "$(good)" "$v0" 2.00)" -H 'Idempotency-Key: kept-1'
expect_error "422 for a transfer key reused with another body (the PIN encrypted again)" 422 \
	"Idempotency-Key was already used with a different request"
send "$lock_key" "$(transfer_body "$(good)" VE0000000000 2.00)" -H 'Idempotency-Key: kept-1'
same "the Idempotency-Key is looked at before the vendors" "$code" 422

# Coding mistakes, not guesses: the 400 says how to encrypt, and nothing is counted.
how='pin cannot be decrypted: encrypt "PIN:UNIX_TIME:NONCE" with RSA-OAEP'
form='pin must decrypt to PIN:UNIX_TIME:NONCE ('
expect_how() { # expect_how DESCRIPTION MESSAGE-START
	local msg
	msg=$(jq -r '.message // empty' <<<"$body" 2>/dev/null) || msg=""
	if [ "$code" = 400 ] && [ "${msg:0:${#2}}" = "$2" ]; then
		ok "$1"
	else
		fail "$1" "status $code: $body" "want: 400 $2..."
	fi
}
rsa() { # rsa OPENSSL-PKEYOPTS...: the block of the page's PIN, now, encrypted so
	printf %s:%s:%s "$page_pin" "$(date +%s)" "$(nonce)" |
		openssl pkeyutl -encrypt -pubin -inkey "$dir/w/pin-public.pem" "$@" | base64 -w0
}
pool=$(sql "SELECT count(*) FROM pin_nonces WHERE merchant_id = $lock")
for w in '!!not base64!!' "$(head -c 384 /dev/urandom | base64 -w0)"; do
	send "$lock_key" "$(transfer_body "$w" "$v0" 1.00)"
	expect_how "PIN ENCRYPTION: a pin that is not base64 or not decrypting: 400 '${how:0:40}...' (${w:0:10}...)" "$how"
done
send "$lock_key" "$(transfer_body "$(rsa -pkeyopt rsa_padding_mode:oaep)" "$v0" 1.00)"
expect_how "PIN ENCRYPTION: OAEP with SHA-1 (Node.js's default) is refused the same way" "$how"
send "$lock_key" "$(transfer_body "$(rsa -pkeyopt rsa_padding_mode:pkcs1)" "$v0" 1.00)"
expect_how "PIN ENCRYPTION: PKCS#1 v1.5 padding is refused the same way" "$how"
for b in "$page_pin" "$page_pin:$(date +%s)" "$page_pin:$(date +%s):$(nonce)
" "$page_pin:$(date +%s):$(openssl rand -hex 8 | cut -c1-15)" "$page_pin:$(date +%s):$(nonce).x" \
	"x$page_pin:$(date +%s):$(nonce)" "$page_pin:$(date +%s):$(nonce):x"; do
	send "$lock_key" "$(transfer_body "$(seal_block "$b")" "$v0" 1.00)"
	expect_how "PIN ENCRYPTION: not exactly the block: 400 '$form...' ($(printf %q "$b" | cut -c1-40))" "$form"
done
same "PIN ENCRYPTION: coding mistakes are not counted (pin_failures), nor spend a nonce" \
	"$(failures) $(sql "SELECT count(*) FROM pin_nonces WHERE merchant_id = $lock")" "0 $pool"

# Freshness: more than pin_max_age seconds before or after now is stale, within is fine.
stale_msg="pin was encrypted more than $max_age seconds from now: encrypt it afresh for each request"
for off in $((-max_age - 30)) $((max_age + 30)); do
	send "$lock_key" "$(transfer_body "$(seal_block "$wrong:$(($(date +%s) + off)):$(nonce)")" "$v0" 1.00)"
	expect_error "PIN ENCRYPTION: a block made ${off#-} s $([ "$off" -lt 0 ] && echo before || echo after) now is stale (pin_max_age $max_age)" \
		400 "$stale_msg"
done
send "$lock_key" "$(transfer_body "$(seal_block "$page_pin:$(($(date +%s) - max_age + 30)):$(nonce)")" "$v0" 1.00)"
expect_ok "PIN ENCRYPTION: a block made $((max_age - 30)) s ago is accepted"
# A nonce is accepted once: not its pin in another request, nor its block encrypted again.
n=$(nonce)
accepted=$(seal_block "$page_pin:$(date +%s):$n")
send "$lock_key" "$(transfer_body "$accepted" "$v0" 1.00)"
expect_ok "PIN ENCRYPTION: a block with a new nonce is accepted"
send "$lock_key" "$(transfer_body "$accepted" "$v1" 2.00)"
expect_error "PIN ENCRYPTION: its pin put into another request is refused" 400 "$used_msg"
send "$lock_key" "$(transfer_body "$(seal_block "$page_pin:$(date +%s):$n")" "$v0" 1.00)"
expect_error "PIN ENCRYPTION: the same nonce encrypted afresh is refused" 400 "$used_msg"
send "$lock_key" "$(transfer_body "$(seal_block "$wrong:$(date +%s):$n")" "$v0" 1.00)"
expect_error "PIN ENCRYPTION: ... also with another PIN" 400 "$used_msg"
same "PIN ENCRYPTION: stale and reused blocks are not counted" "$(failures)" 0

# Wrong PINs: counted; a right one resets the count; pin_max_attempts in a row lock.
until_re='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\+00:00'
locked_msg=$(grep -E '^\.Ql transfers are locked after too many wrong PINs until ' <<<"$errs" |
	macro_text)
[ -n "$locked_msg" ] || fail "ERROR RESPONSES quotes the message for locked transfers"
grep -qE "^transfers are locked after too many wrong PINs until $until_re\$" <<<"$locked_msg" ||
	fail "ERROR RESPONSES: the locked message ends with an ISO 8601 time" "$locked_msg"
locked_prefix=${locked_msg% *}   # "transfers are locked after too many wrong PINs until"
wrong_pins() { # wrong_pins N: N wrong PINs in a row, each a fresh block
	local i
	for i in $(seq 1 "$1"); do
		send "$lock_key" "$(transfer_body "$(seal "$wrong")" "$v0" 1.00)"
		[ "$i" = "$1" ] || expect_error "400 'invalid PIN' (a wrong PIN, $i of $1)" 400 "invalid PIN"
	done
}
# expect_locked DESCRIPTION PREFIX SECONDS: the last call was refused as locked for SECONDS
# (0: until the operator unlocks them), the message starting with PREFIX.
expect_locked() {
	local msg until left
	msg=$(jq -r '.message // empty' <<<"$body" 2>/dev/null) || msg=""
	printf '%s\n' "$msg" >>"$seen_messages"
	left=$(header_in "$hdrs" Retry-After) || left=""
	if [ "$3" = 0 ]; then
		if [ "$code $msg" = "400 $2 the operator unlocks them" ] && [ -z "$left" ]; then
			ok "$1"
		else
			fail "$1" "status $code, Retry-After '$left': $body" \
				"want: 400 '$2 the operator unlocks them', no Retry-After"
		fi
		return
	fi
	until=$(grep -oE "$until_re\$" <<<"$msg") || until=""
	if [ "$code" = 400 ] && [ "$msg" = "$2 $until" ] && [ -n "$until" ] &&
		[ "$((${left:-0} - $3))" -le 0 ] && [ "$((${left:-0} - $3))" -ge -15 ] &&
		[ "$(($(date -u -d "$until" +%s) - $(date +%s) - left))" -le 2 ] &&
		[ "$(($(date -u -d "$until" +%s) - $(date +%s) - left))" -ge -2 ]; then
		ok "$1"
	else
		fail "$1" "status $code, Retry-After '$left': $body" "want: 400 '$2 <ISO 8601 UTC>', Retry-After $3 s"
	fi
}
wrong_pins $((max_attempts - 1))
same "wrong PINs are counted" "$(failures)" $((max_attempts - 1))
send "$lock_key" "$(transfer_body "$(good)" "$v0" 1.00)"
expect_ok "the right PIN after $((max_attempts - 1)) wrong ones is accepted"
same "... and resets the count" "$(failures)" 0
lock_s=$((lock_minutes * 60))
wrong_pins "$max_attempts"
expect_locked "$max_attempts wrong PINs in a row: 'invalid PIN; $locked_prefix <time>', Retry-After $lock_s" \
	"invalid PIN; $locked_prefix" "$lock_s"
lock_msg=$(jq -r .message <<<"$body")
send "$lock_key" "$(transfer_body "$(good)" "$v0" 1.00)"
expect_locked "400 locked, for the right PIN too, until the same time" "$locked_prefix" "$lock_s"
same "... the same time" "invalid PIN; $(jq -r .message <<<"$body")" "$lock_msg"
send "$lock_key" "$(transfer_body "$(seal "$wrong")" "$v0" 1.00)" -H 'Idempotency-Key: locked-1'
expect_locked "400 locked, for a wrong PIN with a new Idempotency-Key, which is not counted" \
	"$locked_prefix" "$lock_s"
same "... not counted" "$(failures)" "$max_attempts"
# A stored transfer replays while locked: the key is looked at before the lock.
send "$lock_key" "$kept" -H 'Idempotency-Key: kept-1'
same "IDEMPOTENCY: while locked, the kept transfer body with its key still gets the stored answer" \
	"$code $body" "200 $kept_answer"
# Each further lock four times longer; after pin_max_locks timed locks, the operator's. The
# lock's end is moved into the past, as if the time had passed.
grep -q 'each further lock four times longer' <<<"$(tr '\n' ' ' <<<"$pin_section")" ||
	fail "PIN ENCRYPTION says each further lock is four times longer"
expire() { sql "UPDATE merchants SET pin_locked_until = now() - interval '1 second' WHERE id = $lock" >/dev/null; }
for n in $(seq 2 "$max_locks"); do
	expire
	lock_s=$((lock_s * 4))
	wrong_pins "$max_attempts"
	expect_locked "lock $n: $max_attempts wrong PINs after the lock ended lock for $lock_s s" \
		"invalid PIN; $locked_prefix" "$lock_s"
done
expire
wrong_pins "$max_attempts"
expect_locked "after $max_locks timed locks (pin_max_locks): locked until the operator unlocks them" \
	"invalid PIN; $locked_prefix" 0
send "$lock_key" "$(transfer_body "$(good)" "$v0" 1.00)"
expect_locked "... the right PIN too, without Retry-After" "$locked_prefix" 0
expire_hard=$(sql "SELECT pin_locked_until FROM merchants WHERE id = $lock")
same "... for good (not a time)" "$expire_hard" infinity
check "marketpayctl merchant unlock lifts it" eval 'ctl merchant unlock "$lock" >/dev/null'
send "$lock_key" "$(transfer_body "$(good)" "$v0" 1.00)"
expect_ok "... and the right PIN is accepted again"
same "... with the count and the locks reset" \
	"$(sql "SELECT pin_failures || '/' || pin_locks || '/' || coalesce(pin_locked_until::text, '-') FROM merchants WHERE id = $lock")" \
	"0/0/-"
same "the rejected transfers moved nothing (5 transfers of 1.00 were accepted)" \
	"$(sql "SELECT count(*) || '/' || coalesce(sum(amount), 0) FROM transfers WHERE merchant_id IN ($lock, $poor)")" \
	"5/500"
check "marketpayctl ledger verify" eval 'ctl ledger verify >/dev/null'

# --- Refunds and transfer reversals (tests/api-examples-refunds.sh) ----------------------

# shellcheck source=tests/api-examples-refunds.sh
. "$srcdir/tests/api-examples-refunds.sh"
# shellcheck source=tests/api-examples-lists.sh
. "$srcdir/tests/api-examples-lists.sh"

# --- The expire endpoint and the lifecycle events (tests/api-examples-events.sh) ----------

# shellcheck source=tests/api-examples-events.sh
. "$srcdir/tests/api-examples-events.sh"

# --- The events API (tests/api-examples-event-api.sh) -------------------------------------

# shellcheck source=tests/api-examples-event-api.sh
. "$srcdir/tests/api-examples-event-api.sh"

# --- The webhook secret rotation (tests/api-examples-webhook-secret.sh) ------------------

# shellcheck source=tests/api-examples-webhook-secret.sh
. "$srcdir/tests/api-examples-webhook-secret.sh"

# 2. Last, as it stops the database: 503, before authentication but after routing.
"$srcdir/tests/stack.sh" pg-stop "$dir"
call GET /api/v1/health
same "health answers 503 with the page's body when the database is down" "$code $body" \
	"503 $(section ENDPOINTS | grep -E '^\.Li \{"status":"unavailable"' | macro_text)"
call POST "$CS" -H "$(auth "$key")" -H "$JSON" -d "$tea"
expect_error "503 'service temporarily unavailable; retry later'" 503 \
	"service temporarily unavailable; retry later"
call POST "$CS" -H "Authorization: API-KEY nope" -H "$JSON" -d "$tea"
expect_error "503 comes before authentication" 503 "service temporarily unavailable; retry later"
call GET /api/v1/nope
same "404 comes before the database" "$code" 404

# Every (status, message) the page names was met above, but for those listed at the top.
iso_any() { sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\+00:00/<ISO 8601>/g'; }
while IFS= read -r m; do
	[ -n "$m" ] || continue
	case "$m" in
	"internal error") continue ;;
	esac
	# A time in a message (until when a lock lasts) is any time.
	check "ERROR RESPONSES: '$m' was provoked" grep -qxF -- "$(iso_any <<<"$m")" \
		<(iso_any <"$seen_messages")
done < <(grep -E '^\.Ql ' <<<"$errs" | macro_text | grep ' ')

# Every status code the page lists was seen, but those that no request to this stack can
# provoke: 500 (above), and the front server's own refusals should the page list them (the
# test stack's nginx has no rate or header limits).
while read -r s; do
	case "$s" in
	500) continue ;;
	414 | 429 | 431) echo "not provoked: status $s (the front server's own refusal)"; continue ;;
	esac
	check "status $s was provoked" grep -q " $s " <<<"$seen_status $(cat "$dir"/w/*.h | awk '/^HTTP/{print " " $2 " "}')"
done < <(grep -A200 -E '^The status codes:' <<<"$errs" | grep -oE '^\.It [0-9]{3}$' | cut -d' ' -f2)

echo "not provoked: 500 'internal error' (no request makes the code fail on purpose)"
echo "not provoked: 400 for a body shorter than its Content-Length (nginx never passes one on)"
echo "not provoked: 503 of pin-public-key and transfers without a PIN key (the stack has one)"
rc=0
finish || rc=1
exit $rc
