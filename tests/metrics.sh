#!/usr/bin/env bash
# Metrics, scraped the way an operator would: starts a stack with MP_METRICS=1 (the server of
# nginx/marketpay-metrics.conf on its own port, pointed at the stack's pool of 4 workers)
# and MP_EDGE_LIMITS=1 (the shipped public server block). Checks doc/prometheus/ with
# promtool (check config, check rules, and test rules: tests/prometheus/alerts-test.yml) and
# every scrape with promtool check metrics. Then, over real HTTP: requests by route and
# status rise by exactly what was sent, summed over the workers that served them; a worker
# killed with SIGKILL keeps its counts after multiwatch respawns it, and the next requests
# add to them; the latency histogram's count equals the route's requests; busy and idle
# workers while requests hang on a table lock; the listen queue, with a scrape taken first
# from a queue the kernel holds behind it, equals what is queued (ss -xl's Recv-Q) and its
# limit the socket's backlog; database reconnects after a PostgreSQL restart, for the
# workers and the daemon; webhook attempts delivered, retried and dead, the delivery latency
# histogram (each delivered event once, a redelivery left out), and the backlog and
# dead gauges from the database; one PIN lockout for pin_max_attempts wrong PINs. The
# endpoint is refused from an address the server does not allow (403) and answered 404 by
# the public server block. A real Prometheus server (Debian's) scrapes it with the sample
# alert rules loaded: the target is up, the rules load, and its stored counter equals the
# scrape's. Always stops the stack and Prometheus. Takes about a minute.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-$srcdir/build}
builddir=$(cd "$builddir" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=4 MP_METRICS=1 \
	MP_EDGE_LIMITS=1
# One retry a second after the first failure, then dead: a dead event within seconds.
export MP_CONF_EXTRA="webhook_retry_schedule = 1
webhook_poll_interval = 1"
unset MP_ENVIRONMENT
stack="$srcdir/tests/stack.sh"

for bin in curl jq nginx promtool prometheus ss psql; do
	command -v "$bin" >/dev/null || { echo "metrics.sh: $bin is missing (dev/test installs it)" >&2; exit 1; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-metrics.XXXXXX")
chmod 755 "$dir"
sdir="$dir/stack"
prom_pid="" lock_pid=""
cleanup() {
	local code=$?
	# Under set -e a kill of a process already gone (prometheus exits by itself on a bad
	# rule file) would end the cleanup here and leave the stack running.
	[ -n "$lock_pid" ] && { kill "$lock_pid" 2>/dev/null || true; }
	if [ -n "$prom_pid" ]; then
		kill "$prom_pid" 2>/dev/null || true
		wait "$prom_pid" 2>/dev/null || true
	fi
	# Stopped workers would not stop.
	pkill -CONT -f "^[^ ]*marketpay-fcgi -c $sdir/worker.conf" 2>/dev/null
	"$stack" stop "$sdir" >/dev/null 2>&1 || true
	if [ "$code" != 0 ]; then
		echo "--- last lines of the worker log ---" >&2
		tail -n 10 "$sdir/fcgi.log" >&2 2>/dev/null || true
		echo "--- last lines of prometheus's log ---" >&2
		tail -n 10 "$dir/prometheus.log" >&2 2>/dev/null || true
	fi
	rm -rf "$dir"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- The examples: Prometheus's configuration (its rule file pointed at the copy here) and
# the alert rules, with their unit tests (tests/prometheus/alerts-test.yml).
sed "s|/etc/prometheus/marketpay-alerts.yml|$dir/marketpay-alerts.yml|" \
	"$srcdir/doc/prometheus/marketpay-scrape.yml" >"$dir/scrape.yml"
cp "$srcdir/doc/prometheus/marketpay-alerts.yml" "$dir/"
check "promtool check config doc/prometheus/marketpay-scrape.yml" \
	promtool check config "$dir/scrape.yml"
check "promtool check rules doc/prometheus/marketpay-alerts.yml" \
	promtool check rules "$dir/marketpay-alerts.yml"
cp "$srcdir/tests/prometheus/alerts-test.yml" "$dir/"
check "promtool test rules: each alert fires on its figures, and only then" \
	promtool test rules "$dir/alerts-test.yml"

"$stack" start "$sdir" >/dev/null
# shellcheck disable=SC1091
. "$sdir/stack.env"
mport=$(cat "$sdir/metrics.port")
murl="http://127.0.0.1:$mport/metrics/sandbox"
base=$MARKETPAY_BASE_URL
ctl() { "$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" "$@"; }
workers() { pgrep -f "^[^ ]*marketpay-fcgi -c $sdir/worker.conf" | sort -n || true; }

merchant=$(ctl merchant create --name 'Metrics Shop' --currency AFN)
key=$(ctl key create "$merchant")
ctl merchant webhook "$merchant" --url "$MARKETPAY_WEBHOOK_RECEIVER" >/dev/null

n_scrape=0
# scrape: the endpoint into $dir/scrape.N (N counts up), its path in $last; promtool lints it.
scrape() {
	n_scrape=$((n_scrape + 1))
	last="$dir/scrape.$n_scrape"
	curl -fsS -o "$last" "$murl"
}
# val SERIES: the value of the series, exactly as written, in the last scrape (0: absent).
val() { awk -v s="$1" '$1 == s { v = $2 } END { print v == "" ? 0 : v }' "$last"; }
R_CREATE='route="/api/v1/payment/create-session"'
create_series() { echo "marketpay_http_requests_total{method=\"POST\",$R_CREATE,code=\"$1\"}"; }
create() {
	curl -s -o /dev/null -w '%{http_code}\n' "$base/api/v1/payment/create-session" \
		-H "Authorization: API-KEY $key" -H 'Content-Type: application/json' \
		-d '{"items":[{"id":"sku-1","name":"Green tea","price":12.50}],"user_id":"m-1","email":"buyer@example.com"}'
}
# send N: N create-session requests, 8 at a time; prints how many answered 200.
send() {
	local i
	for i in $(seq 1 "$1"); do echo "$i"; done |
		xargs -P 8 -I{} curl -s -o /dev/null -w '%{http_code}\n' \
			"$base/api/v1/payment/create-session" -H "Authorization: API-KEY $key" \
			-H 'Content-Type: application/json' \
			-d '{"items":[{"id":"sku-1","name":"Green tea","price":12.50}],"user_id":"m-{}","email":"buyer@example.com"}' |
		grep -c '^200$' || true
}

# --- The format.
scrape || bail "the metrics server answers $murl"
check "promtool check metrics: the first scrape" promtool check metrics <"$last"
check "content type is Prometheus's text format 0.0.4" \
	bash -c "curl -fsS -D - -o /dev/null '$murl' | grep -qi '^Content-Type: text/plain; version=0.0.4'"
before=$(val "$(create_series 200)")
before401=$(val "$(create_series 401)")
before404=$(val 'marketpay_http_requests_total{method="",route="unmatched",code="404"}')

# --- Requests by route and status, summed over the workers.
ok_count=$(send 200)
check "200 create-sessions answered 200 (got $ok_count)" [ "$ok_count" = 200 ]
for _ in 1 2 3; do curl -s -o /dev/null "$base/api/v1/payment/create-session" -X POST; done
for _ in 1 2 3 4 5; do curl -s -o /dev/null "$base/api/v1/no-such-thing"; done
served_by=$(grep 'POST /api/v1/payment/create-session status=200' "$sdir/fcgi.log" |
	grep -o 'pid=[0-9]*' | sort -u | wc -l)
check "the create-sessions were served by more than one worker ($served_by)" [ "$served_by" -ge 2 ]
scrape
check "promtool check metrics: under load" promtool check metrics <"$last"
after=$(val "$(create_series 200)")
check "create-session code=200 rose by 200 over the workers ($before -> $after)" \
	[ "$((after - before))" = 200 ]
check "create-session code=401 rose by 3 ($before401 -> $(val "$(create_series 401)"))" \
	[ "$(($(val "$(create_series 401)") - before401))" = 3 ]
check "unmatched code=404 rose by 5" \
	[ "$(($(val 'marketpay_http_requests_total{method="",route="unmatched",code="404"}') - before404))" = 5 ]
hcount=$(val "marketpay_http_request_duration_seconds_count{method=\"POST\",$R_CREATE}")
check "the latency histogram counts every create-session ($hcount)" \
	[ "$hcount" = "$((after + $(val "$(create_series 401)")))" ]
check "the histogram's +Inf bucket equals its count" \
	[ "$(val "marketpay_http_request_duration_seconds_bucket{method=\"POST\",$R_CREATE,le=\"+Inf\"}")" = "$hcount" ]
check "4 workers: 1 busy (the scrape's) and 3 idle" \
	[ "$(val 'marketpay_pool_workers{state="busy"}') $(val 'marketpay_pool_workers{state="idle"}')" = "1 3" ]

# --- A killed worker's counts stay, and its successor adds to them.
victim=$(workers | head -1)
kill -9 "$victim"
for _ in $(seq 1 50); do
	[ "$(workers | wc -l)" = 4 ] && ! workers | grep -qx "$victim" && break
	sleep 0.1
done
check "multiwatch respawned the killed worker" [ "$(workers | wc -l)" = 4 ]
scrape
check "after kill -9 of a worker its counts are still there ($(val "$(create_series 200)"))" \
	[ "$(val "$(create_series 200)")" = "$after" ]
ok_count=$(send 40)
scrape
check "40 more after the respawn add 40 ($ok_count answered 200; $(val "$(create_series 200)"))" \
	[ "$(val "$(create_series 200)") $ok_count" = "$((after + 40)) 40" ]

# --- Busy workers: two requests hang on a lock of the API keys' table.
psql -qAt -c 'BEGIN' -c 'LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE' -c 'SELECT pg_sleep(60)' \
	>/dev/null 2>&1 &
lock_pid=$!
for _ in $(seq 1 50); do
	[ "$(psql -qAtc "SELECT count(*) FROM pg_locks WHERE relation = 'api_keys'::regclass AND granted AND mode = 'AccessExclusiveLock'")" = 1 ] && break
	sleep 0.1
done
create >"$dir/hung1" 2>&1 &
h1=$!
create >"$dir/hung2" 2>&1 &
h2=$!
sleep 0.5
scrape
check "two requests waiting on a lock: 3 busy (theirs and the scrape's), 1 idle" \
	[ "$(val 'marketpay_pool_workers{state="busy"}') $(val 'marketpay_pool_workers{state="idle"}')" = "3 1" ]

# --- The listen queue: a third worker hangs too, the fourth is stopped; the scrape queues
# first, then three requests behind it. The fourth worker, let go, takes the scrape first.
create >"$dir/hung3" 2>&1 &
h3=$!
sleep 0.5
# The one worker still waiting for a connection, in epoll (the others wait on the database).
idle=""
for w in $(workers); do
	grep -q 'epoll' "/proc/$w/wchan" 2>/dev/null && idle=$w
done
check "one worker is left waiting for a connection" [ -n "$idle" ]
[ -n "$idle" ] || bail "no idle worker to stop"
kill -STOP "$idle"
recvq() { ss -xlH | awk -v p="$sdir/fcgi.sock" '$5 == p { print $3 }'; }
curl -fsS -o "$dir/scrape.queued" "$murl" &
qs=$!
for _ in $(seq 1 50); do [ "$(recvq)" = 1 ] && break; sleep 0.1; done
for i in 4 5 6; do create >"$dir/hung$i" 2>&1 & done
for _ in $(seq 1 50); do [ "$(recvq)" = 4 ] && break; sleep 0.1; done
queued_before=$(recvq)
kill -CONT "$idle"
wait "$qs" || true
last="$dir/scrape.queued"
check "the scrape behind which 3 requests queued shows listen_queue 3 (ss had $queued_before)" \
	[ "$(val marketpay_pool_listen_queue) $queued_before" = "3 4" ]
check "listen_queue_limit is the socket's backlog ($(ss -xlH | awk -v p="$sdir/fcgi.sock" '$5 == p { print $4 }'))" \
	[ "$(val marketpay_pool_listen_queue_limit)" = "$(ss -xlH | awk -v p="$sdir/fcgi.sock" '$5 == p { print $4 }')" ]
kill "$lock_pid" 2>/dev/null
psql -qAtc "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()" >/dev/null
wait "$lock_pid" 2>/dev/null || true
lock_pid=""
wait "$h1" "$h2" "$h3" || true
wait
check "the requests held by the lock were answered 200" \
	[ "$(cat "$dir"/hung[1-6] | grep -c '^200$')" = 6 ]

# --- Database reconnects: PostgreSQL restarted; each worker reconnects at its next request.
scrape
re_w=$(val marketpay_db_reconnects_total)
re_d=$(val marketpay_webhookd_db_reconnects_total)
"$stack" pg-restart "$sdir" >/dev/null
for _ in $(seq 1 30); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/api/v1/health")" = 200 ] && break
	sleep 0.2
done
send 20 >/dev/null
sleep 2
scrape
check "the workers' reconnects rose after a PostgreSQL restart ($re_w -> $(val marketpay_db_reconnects_total))" \
	[ "$(val marketpay_db_reconnects_total)" -gt "$re_w" ]
check "the daemon's reconnects rose too ($re_d -> $(val marketpay_webhookd_db_reconnects_total))" \
	[ "$(val marketpay_webhookd_db_reconnects_total)" -gt "$re_d" ]

# --- Webhooks: 3 sessions expired, 3 events delivered; one more to an endpoint that fails:
# tried twice (a retry, then dead).
# expire_new USER: a new session of USER, expired at once (session.expired is queued).
expire_new() {
	local sid
	sid=$(curl -fsS "$base/api/v1/payment/create-session" -H "Authorization: API-KEY $key" \
		-H 'Content-Type: application/json' \
		-d "{\"items\":[{\"id\":\"sku-1\",\"name\":\"Tea\",\"price\":1.00}],\"user_id\":\"$1\",\"email\":\"b@example.com\"}" | json session_id)
	curl -fsS -o /dev/null -X POST "$base/api/v1/payment/sessions/$sid/expire" \
		-H "Authorization: API-KEY $key"
}
# scrape_until SERIES N: scrapes until SERIES reaches N (at most 10 s).
scrape_until() {
	for _ in $(seq 1 100); do
		scrape
		[ "$(val "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
}
delivered0=$(val 'marketpay_webhook_attempts_total{result="delivered"}')
latency0=$(val marketpay_webhook_delivery_latency_seconds_count)
latency10s0=$(val 'marketpay_webhook_delivery_latency_seconds_bucket{le="10.000000"}')
for i in 1 2 3; do expire_new "w-$i"; done
scrape_until 'marketpay_webhook_attempts_total{result="delivered"}' "$((delivered0 + 3))"
check "3 expired sessions: delivered attempts rose by 3" \
	[ "$(val 'marketpay_webhook_attempts_total{result="delivered"}')" = "$((delivered0 + 3))" ]
check "the delivery latency histogram counted the 3 events ($latency0 -> $(val marketpay_webhook_delivery_latency_seconds_count))" \
	[ "$(val marketpay_webhook_delivery_latency_seconds_count)" = "$((latency0 + 3))" ]
check "each within 10 s of its creation" \
	[ "$(val 'marketpay_webhook_delivery_latency_seconds_bucket{le="10.000000"}')" = "$((latency10s0 + 3))" ]
# A redelivery the merchant asks for is delivered again but not observed: its wait was theirs.
ctl webhook redeliver "$(psql -X -qAt -c "SELECT id FROM webhook_events WHERE status = 'delivered'
	ORDER BY created_at DESC LIMIT 1")" >/dev/null
scrape_until 'marketpay_webhook_attempts_total{result="delivered"}' "$((delivered0 + 4))"
check "a redelivery: delivered attempts rose by 1, the latency histogram did not" \
	[ "$(val 'marketpay_webhook_attempts_total{result="delivered"}') $(val marketpay_webhook_delivery_latency_seconds_count)" = "$((delivered0 + 4)) $((latency0 + 3))" ]
check "the backlog is empty again" [ "$(val marketpay_webhook_backlog_events)" = 0 ]
dead_g=$(val marketpay_webhook_dead_events)
dead0=$(val 'marketpay_webhook_attempts_total{result="dead"}')
retry0=$(val 'marketpay_webhook_attempts_total{result="retry"}')
touch "$sdir/flaky-metrics"
ctl merchant webhook "$merchant" --url "${MARKETPAY_WEBHOOK_RECEIVER%/hook}/flaky/metrics" \
	--keep-secret >/dev/null
expire_new w-dead
scrape_until 'marketpay_webhook_attempts_total{result="dead"}' "$((dead0 + 1))"
check "a failing endpoint: one retry, then dead" \
	[ "$(($(val 'marketpay_webhook_attempts_total{result="retry"}') - retry0)) $(($(val 'marketpay_webhook_attempts_total{result="dead"}') - dead0))" = "1 1" ]
check "the dead events gauge rose by 1 ($dead_g -> $(val marketpay_webhook_dead_events))" \
	[ "$(val marketpay_webhook_dead_events)" = "$((dead_g + 1))" ]
check "the attempts' duration histogram counts every attempt" \
	[ "$(val marketpay_webhook_attempt_duration_seconds_count)" = "$(($(val 'marketpay_webhook_attempts_total{result="delivered"}') + $(val 'marketpay_webhook_attempts_total{result="retry"}') + $(val 'marketpay_webhook_attempts_total{result="dead"}')))" ]
check "2 senders alive" [ "$(val marketpay_webhookd_senders)" = 2 ]
check "the database is up" [ "$(val marketpay_database_up)" = 1 ]
check "promtool check metrics: after it all" promtool check metrics <"$last"

# --- PIN lockouts: pin_max_attempts (5) wrong PINs lock the merchant's transfers once; a
# sixth, refused as locked, is no new lockout.
ctl merchant settlement "$merchant" on >/dev/null
printf '2468\n' | ctl merchant pin "$merchant" >/dev/null
ctl account deposit "$(ctl account create --kind merchant --merchant "$merchant")" 10.00 >/dev/null
vendor=$(ctl account create --kind vendor --currency AFN --name 'Metrics Vendor')
curl -fsS "$base/api/v1/payment/pin-public-key" -H "Authorization: API-KEY $key" |
	json public_key >"$dir/pin-public.pem"
wrong_pin() {
	local pin
	pin=$(printf '%s:%s:%s' 1357 "$(date +%s)" "$(openssl rand -hex 16)" |
		openssl pkeyutl -encrypt -pubin -inkey "$dir/pin-public.pem" \
		-pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256 \
		-pkeyopt rsa_mgf1_md:sha256 | base64 -w0)
	curl -s -o /dev/null -w '%{http_code}\n' "$base/api/v1/payment/send-money-MultiVendor" \
		-H "Authorization: API-KEY $key" -H 'Content-Type: application/json' \
		-d "{\"pin\":\"$pin\",\"vendors\":[{\"account_number\":\"$vendor\",\"amount\":1.00}]}"
}
lock0=$(val marketpay_pin_lockouts_total)
codes=$(for _ in 1 2 3 4 5 6; do wrong_pin; done | sort | uniq -c | awk '{ print $1 "x" $2 }' | tr '\n' ' ')
scrape
check "6 wrong PINs ($codes): one lockout counted ($lock0 -> $(val marketpay_pin_lockouts_total))" \
	[ "$codes $(val marketpay_pin_lockouts_total)" = "6x400  $((lock0 + 1))" ]

# --- Who may scrape.
code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 "$murl") || code=000
check "refused from an address the metrics server does not allow (got $code)" [ "$code" = 403 ]
eport=$(cat "$sdir/edge.port")
code=$(curl -s -o "$dir/edge.out" -w '%{http_code}' "http://127.0.0.1:$eport/metrics") || code=000
check "the public server block answers /metrics 404 (got $code)" [ "$code" = 404 ]
check "and shows no figure" bash -c "! grep -q marketpay_ '$dir/edge.out'"

# --- A real Prometheus, scraping every second, with the alert rules.
pport=$(free_port)
cat >"$dir/prom.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $dir/marketpay-alerts.yml
scrape_configs:
  - job_name: marketpay-sandbox
    metrics_path: /metrics/sandbox
    static_configs:
      - targets: ['127.0.0.1:$mport']
YML
prometheus --config.file="$dir/prom.yml" --storage.tsdb.path="$dir/tsdb" \
	--web.listen-address="127.0.0.1:$pport" >"$dir/prometheus.log" 2>&1 &
prom_pid=$!
pq() { curl -fsS "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" |
	jq -r '.data.result[0].value[1] // empty'; }
up=""
for _ in $(seq 1 150); do
	up=$(pq 'up{job="marketpay-sandbox"}' 2>/dev/null || true)
	[ "$up" = 1 ] && break
	sleep 0.2
done
check "prometheus scrapes the endpoint (up=$up)" [ "$up" = 1 ]
send 10 >/dev/null
scrape
want=$(val "$(create_series 200)")
got=""
for _ in $(seq 1 50); do
	got=$(pq "marketpay_http_requests_total{route=\"/api/v1/payment/create-session\",code=\"200\"}" || true)
	[ "$got" = "$want" ] && break
	sleep 0.2
done
check "prometheus holds the create-session count the endpoint shows ($got = $want)" [ "$got" = "$want" ]
rules=$(curl -fsS "http://127.0.0.1:$pport/api/v1/rules" |
	jq -r '[.data.groups[].rules[] | select(.health != "err")] | length')
check "prometheus loaded the alert rules, none in error ($rules)" \
	[ "$rules" = "$(grep -c '^ *- alert:' "$dir/marketpay-alerts.yml")" ]

finish
