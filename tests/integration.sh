#!/usr/bin/env bash
# The integration suite: starts a whole stack (PostgreSQL, spawn-fcgi pool, nginx) in a
# temporary directory, runs the suites of tests/integ against it over real HTTP, and always
# tears the stack down, also when a test fails or the run is interrupted.
#
# Counting (dev/test's summary adds up the log): each Check program prints its own summary
# ("N%: Checks: N, Failures: F, Errors: E"), which counts its cases; this script counts, with
# tests/lib.sh, only what those lines do not: its own checks of the logs, and a program that
# ended without a summary (it could not start its cases) as one failure. A program's cases
# are never counted twice.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-.}
export MP_STACK="$srcdir/tests/stack.sh"
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=${MP_WORKERS:-8}
# A short wait makes the in-flight Idempotency-Key case (409) quick to show.
export MP_CONF_EXTRA="idempotency_wait_ms = 300"
# A short retry schedule and poll make the webhook retry, dead and redelivery cases quick.
MP_CONF_EXTRA="$MP_CONF_EXTRA
webhook_retry_schedule = 1,1,1
webhook_poll_interval = 1
webhook_timeout = 3
webhook_breaker_cooldown = 2"
export MARKETPAY_WEBHOOKD="$builddir/marketpay-webhookd"
# check_roles makes a read-only login role of its own and logs in as it (peer authentication).
export MP_PG_ROLES=mp_report_t
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-test.XXXXXX")
cleanup() {
	"$MP_STACK" stop "$dir" || true
	if [ "${rc:-1}" != 0 ]; then
		echo "--- last lines of the worker log ($dir/fcgi.log) ---" >&2
		tail -n 30 "$dir/fcgi.log" >&2 || true
		echo "--- last lines of the webhook daemon log ($dir/webhookd.log) ---" >&2
		tail -n 30 "$dir/webhookd.log" >&2 || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$MP_STACK" start "$dir" || bail "the stack did not start"
# shellcheck disable=SC1091
. "$dir/stack.env"
rc=0
# tests/integ/http.c records every exchange here, for the contract test below.
export MP_HTTP_RECORD="$dir/exchanges.jsonl"
# Each suite makes its own merchants. check_outage stops parts of the stack and, last, the
# pool: it runs after every suite that needs the pool. The webhook suites need PostgreSQL,
# the receiver and webhookd, not the pool; check_webhook's last case restarts PostgreSQL.
for suite in check_checkout check_ledger check_e2e check_transfer check_transfer_race \
	check_refund check_reversal check_refund_race check_refund_db check_roles check_intents \
	check_injection check_redirect check_tenancy check_keys check_lists check_lists_paging \
	check_balance check_csv_cut check_api check_events check_expire check_event_api \
	check_webhook_rotate check_ctl check_account_status check_ledger_rules check_locale check_fcgi_close \
	check_outage \
	check_webhook_ctl check_webhook check_webhook_slow; do
	st=0
	"$builddir/tests/integ/$suite" 2>&1 | tee "$dir/$suite.out" || st=$?
	if [ "$st" != 0 ]; then
		rc=$st
		grep -qE '^[0-9]+%: Checks: ' "$dir/$suite.out" ||
			not_ok "$suite ended (status $st) before it ran its cases"
	fi
done

# No secret reaches a log: the API keys and webhook secrets the suites were handed, the test
# card numbers, and no form field carrying a PIN or card data.
logs=("$dir/fcgi.log" "$dir/webhookd.log" "$dir/nginx/access.log" "$dir/nginx/error.log"
	"$dir/pg/server.log")
check "the suites noted the secrets they were handed" test -s "$dir/secrets-used.txt"
leaks=0
while read -r secret; do
	if grep -lF -- "$secret" "${logs[@]}" 2>/dev/null; then
		echo "integration: a secret (${secret:0:12}...) is in the log above" >&2
		leaks=1
	fi
done < <(cat "$dir/secrets-used.txt" 2>/dev/null; printf '%s\n' 4242424242424242 \
	4000000000000002 4000000000009995)
check "no API key, webhook secret or test card number is in a log" [ "$leaks" = 0 ]
if grep -lE 'pin=[0-9]|card_number=|card_cvc=' "${logs[@]}" 2>/dev/null; then
	not_ok "no form data with a PIN or card is in a log (the log above holds some)"
else
	ok "no form data with a PIN or card is in a log"
fi
echo "secrets noted: $(wc -l <"$dir/secrets-used.txt" 2>/dev/null || echo 0)"

# The contract test: every exchange and webhook of the run against doc/openapi.yaml. It
# counts its own checks (its "N passed, N failed" line); here only its status.
"$srcdir/tests/openapi.sh" --contract "$MP_HTTP_RECORD" "$dir/webhooks.log" || rc=1
finish || rc=1
exit $rc
