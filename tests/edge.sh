#!/usr/bin/env bash
# Edge limits, tested on the deployed nginx server block itself: starts a stack with
# MP_EDGE_LIMITS=1, which adds a server that is nginx/marketpay-sandbox.conf (TLS taken out,
# paths pointed into the stack) under the zones of nginx/marketpay-limits.conf. Over real
# HTTP, from several loopback source addresses (127.0.0.x, each one client address to
# nginx), it checks: 413 for bodies over the limits, in the API's JSON error shape (an HTML
# page on the checkout form); 431/414 for oversized headers and URIs; 429 when one API key
# floods while another key and another address are served throughout; that made-up keys
# cannot escape the per-address limit nor drain another client's bucket; 429 for rapid
# checkout form POSTs (PIN attempts) while viewing the page still works; slowloris clients
# (headers or bodies dripped slowly) cut off by the timeouts while others are served; and
# the per-address cap on requests in progress. Then that every reply carries one Request-Id,
# the id the worker logged and the access log's rid=, and no nginx version; and, with the
# pool stopped, that nginx answers 502 in the API's JSON error shape with a Request-Id (a
# small page on the checkout path), and 504 in that shape when a stand-in pool takes the
# request and never answers, with the id it was given; then the pool is back. Also that
# the production and sandbox files carry the same limits. Always stops the stack. Takes
# about 50 s.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-$srcdir/build}
builddir=$(cd "$builddir" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
export MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=4 MP_EDGE_LIMITS=1
unset MP_ENVIRONMENT # the sandbox file (it has the test-card form; its limits equal production's)
stack="$srcdir/tests/stack.sh"

for bin in curl python3 jq nginx openssl; do
	command -v "$bin" >/dev/null || { echo "edge.sh: $bin is missing (dev/test installs it)" >&2; exit 1; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/marketpay-edge.XXXXXX")
chmod 755 "$dir"
sdir="$dir/stack"
cleanup() {
	local code=$?
	"$stack" stop "$sdir" >/dev/null 2>&1 || true
	if [ "$code" != 0 ]; then
		echo "--- last lines of the nginx error log ---" >&2
		tail -n 20 "$sdir/nginx/error.log" >&2 2>/dev/null || true
		echo "--- last lines of the worker log ---" >&2
		tail -n 10 "$sdir/fcgi.log" >&2 2>/dev/null || true
	fi
	rm -rf "$dir"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- The files themselves: production and sandbox carry the same limits (tests/nginx.sh
# loads both in one nginx with the zones file).
limit_lines() {
	grep -E '^\s*(client_|large_client_header|send_timeout|keepalive_timeout|reset_timedout|limit_|error_page|return 4)' \
		"$srcdir/nginx/marketpay-$1.conf"
}
check "production and sandbox carry the same edge limits" \
	cmp -s <(limit_lines production) <(limit_lines sandbox)

"$stack" start "$sdir" >/dev/null
# shellcheck disable=SC1091
. "$sdir/stack.env"
eport=$(cat "$sdir/edge.port")
edge="http://127.0.0.1:$eport"
main="$MARKETPAY_BASE_URL"
ctl() { "$MARKETPAYCTL" -c "$MARKETPAY_CONFIG" "$@"; }
sessions() { psql -qAtc 'SELECT count(*) FROM payment_sessions'; }

merchant_a=$(ctl merchant create --name "Edge Shop A")
key_a=$(ctl key create "$merchant_a")
merchant_b=$(ctl merchant create --name "Edge Shop B")
key_b=$(ctl key create "$merchant_b")
create='/api/v1/payment/create-session'
good_body='{"items":[{"id":"sku-1","name":"Tea","price":12.50}],"user_id":"edge-1"}'

# A request through the edge server; prints the status, body in $dir/out, headers in $dir/hdr.
# --interface SRC sends from that loopback address.
req() {
	curl -sS --max-time 20 -o "$dir/out" -D "$dir/hdr" -w '%{http_code}' "$@" 2>/dev/null || echo 000
}
is_json_error() { # the API's error shape: {"success": false, "message": "...needle..."}
	grep -qi '^Content-Type: application/json' "$dir/hdr" &&
		[ "$(jq -r '.success' "$dir/out")" = false ] &&
		jq -r '.message' "$dir/out" | grep -q -- "$1"
}

# --- Bodies: nginx's backstop (1 MiB), and the workers' own limit below it, answer alike.
before=$(sessions)
head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$dir/big"
code=$(req "$edge$create" -H "Authorization: API-KEY $key_a" -H 'Content-Type: application/json' \
	--data-binary @"$dir/big")
check "2 MiB body: 413 from nginx (got $code)" [ "$code" = 413 ]
check "  in the API's JSON error shape" is_json_error 'too large'
head -c $((300 * 1024)) /dev/zero | tr '\0' ' ' >"$dir/mid"
code=$(req "$edge$create" -H "Authorization: API-KEY $key_a" -H 'Content-Type: application/json' \
	--data-binary @"$dir/mid")
check "300 KiB body: 413 from the worker, max_body_bytes (got $code)" [ "$code" = 413 ]
check "  in the same shape" is_json_error 'at most 262144 bytes'
check "nothing stored by the refused bodies" [ "$(sessions)" = "$before" ]

# --- Headers and URIs.
long=$(head -c 9000 /dev/zero | tr '\0' a)
code=$(req "$edge/api/v1/health" -H "X-Long: $long")
check "one 9 KB header line: 431 (got $code)" [ "$code" = 431 ]
check "  in the API's JSON error shape" is_json_error 'headers are too large'
hs=()
for i in 1 2 3 4 5; do hs+=(-H "X-Part-$i: ${long:0:7000}"); done
code=$(req "$edge/api/v1/health" "${hs[@]}")
check "35 KB of headers in 7 KB lines: 431 (got $code)" [ "$code" = 431 ]
code=$(req "$edge/api/v1/health?$long")
check "a 9 KB request line: 414 (got $code)" [ "$code" = 414 ]
check "  in the API's JSON error shape" is_json_error 'URI is too long'
code=$(req "$edge$create" -H "Authorization: API-KEY $key_a" -H 'Content-Type: application/json' \
	-H "Idempotency-Key: $(head -c 255 /dev/zero | tr '\0' k)" -H "User-Agent: ${long:0:2000}" \
	-d "$good_body")
check "a real request with long headers still passes the limits (got $code)" [ "$code" = 200 ]

# --- The client helper: floods, slow clients and held uploads need many sockets at once;
# hang stands in for a pool that never answers.
cat >"$dir/edge.py" <<'PY'
import http.client, json, os, socket, sys, threading, time

cfg = json.loads(sys.argv[2])
PORT = cfg.get("port")

def request(src, method, path, headers=None, body=None):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=20, source_address=(src, 0))
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.getheader("Content-Type", ""), r.read()
    except OSError as e:
        return 0, "", str(e).encode()
    finally:
        c.close()

def flood():
    # cfg: flood {src, method, path, headers, body, threads, seconds}; victims [{src, method,
    # path, headers, body, count}], each run in its own thread once the flood meets its first
    # 429, one request after another. The flood goes on for its seconds and until every
    # victim is done (at most 30 s), so each victim request meets the flood.
    f = cfg["flood"]
    codes, bad429, lock = {}, 0, threading.Lock()
    throttled, stop = threading.Event(), threading.Event()
    def shooter(n):
        nonlocal bad429
        i = 0
        while not stop.is_set():
            h = dict(f["headers"])
            if f.get("vary_key"):  # a made-up key per request, each with a new prefix
                h["Authorization"] = "API-KEY mp_test_%02x%06x%040x" % (n, i, 0)
            st, ct, body = request(f["src"], f["method"], f["path"], h, f.get("body"))
            with lock:
                codes[st] = codes.get(st, 0) + 1
                if st == 429:
                    throttled.set()
                    try:
                        ok = ct.startswith("application/json") and json.loads(body)["success"] is False
                    except ValueError:
                        ok = False
                    bad429 += not ok
            i += 1
    victims = [dict(v, got=[]) for v in cfg.get("victims", [])]
    def victim(v):
        if not throttled.wait(f["seconds"]):
            return
        while len(v["got"]) < v["count"] and not stop.is_set():
            v["got"].append(request(v["src"], v["method"], v["path"], v["headers"],
                                    v.get("body"))[0])
    t0 = time.monotonic()
    shooters = [threading.Thread(target=shooter, args=(n,)) for n in range(f["threads"])]
    vs = [threading.Thread(target=victim, args=(v,)) for v in victims]
    for t in shooters + vs:
        t.start()
    time.sleep(f["seconds"])
    for t in vs:
        t.join(max(0.1, t0 + 30 - time.monotonic()))
    stop.set()
    for t in shooters + vs:
        t.join()
    print(json.dumps({"codes": {str(k): v for k, v in codes.items()}, "bad429": bad429,
                      "elapsed": round(time.monotonic() - t0, 2),
                      "victims": [v["got"] for v in victims]}))

def slow():
    # cfg: src, header_conns, body_conns, limit (seconds to wait at most); while they drip, one
    # request a second from another address. Reports when the server dropped each one.
    socks, opened = [], time.monotonic()
    for _ in range(cfg["header_conns"]):
        s = socket.create_connection(("127.0.0.1", PORT), source_address=(cfg["src"], 0))
        s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: edge\r\n")
        socks.append(["header", s, None])
    for _ in range(cfg["body_conns"]):
        s = socket.create_connection(("127.0.0.1", PORT), source_address=(cfg["src"], 0))
        s.sendall(b"POST /api/v1/payment/create-session HTTP/1.1\r\nHost: edge\r\n"
                  b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"items\"")
        socks.append(["body", s, None])
    for e in socks:
        e[1].setblocking(False)
    served = []
    while time.monotonic() - opened < cfg["limit"] and any(e[2] is None for e in socks):
        for e in socks:
            if e[2] is not None:
                continue
            try:
                if e[0] == "header":
                    e[1].send(b"X")  # one more byte of a header line that never ends
                if e[1].recv(4096) == b"":
                    e[2] = time.monotonic() - opened
            except BlockingIOError:
                pass
            except OSError:  # reset by the server (reset_timedout_connection)
                e[2] = time.monotonic() - opened
        served.append(request(cfg["other_src"], "GET", "/api/v1/health")[0])
        time.sleep(1)
    for e in socks:
        e[1].close()
    dropped = [e[2] for e in socks if e[2] is not None]
    print(json.dumps({"dropped": len(dropped), "total": len(socks),
                      "first": round(min(dropped), 1) if dropped else None,
                      "last": round(max(dropped), 1) if dropped else None, "served": served}))

def held():
    # cfg: src, conns: that many uploads held open (header in, body unfinished); then one more
    # request from src, one from other_src; then the uploads are let go and src tries again.
    # nginx takes the uploads in its own order: should it meet a probe before the last upload
    # (the probe counted, the upload refused), the round is repeated, at most 3 times.
    def unanswered(socks):
        n = 0
        for s in socks:
            try:
                s.recv(1)
            except BlockingIOError:
                n += 1
            except OSError:
                pass
        return n
    for attempt in range(1, 4):
        socks = []
        for _ in range(cfg["conns"]):
            s = socket.create_connection(("127.0.0.1", PORT), source_address=(cfg["src"], 0))
            s.sendall(b"POST /api/v1/health HTTP/1.1\r\nHost: edge\r\n"
                      b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
            s.setblocking(False)
            socks.append(s)
        time.sleep(0.5)
        over = None
        for _ in range(50):
            over = request(cfg["src"], "GET", "/api/v1/health")
            if over[0] == 429:
                break
            time.sleep(0.1)
        other = request(cfg["other_src"], "GET", "/api/v1/health")[0]
        still = unanswered(socks)
        for s in socks:
            s.close()
        if still == cfg["conns"]:
            break
        time.sleep(1)
    after = None
    for _ in range(50):
        after = request(cfg["src"], "GET", "/api/v1/health")[0]
        if after == 200:
            break
        time.sleep(0.1)
    print(json.dumps({"over": over[0], "over_json": over[1].startswith("application/json"),
                      "other": other, "after": after, "held": still, "attempts": attempt}))

def hang():
    # cfg: sock, out, seconds. A FastCGI pool that never answers: listens on sock, takes one
    # connection, writes the REQUEST_ID parameter nginx sent to out, then holds the
    # connection for seconds without a reply.
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(cfg["sock"])
    os.chmod(cfg["sock"], 0o666)  # nginx's workers run as another user under root
    ls.listen(8)
    conn, _ = ls.accept()
    buf, params, done = b"", b"", False
    while not done:
        chunk = conn.recv(65536)
        if not chunk:
            break
        buf += chunk
        while len(buf) >= 8:  # version, type, id (2), content length (2), padding, reserved
            rtype, clen, plen = buf[1], int.from_bytes(buf[4:6], "big"), buf[6]
            if len(buf) < 8 + clen + plen:
                break
            content, buf = buf[8:8 + clen], buf[8 + clen + plen:]
            if rtype == 4 and clen == 0:  # FCGI_PARAMS ends with an empty record
                done = True
            elif rtype == 4:
                params += content
    def length(i):
        if params[i] < 128:
            return params[i], i + 1
        return int.from_bytes(params[i:i + 4], "big") & 0x7FFFFFFF, i + 4
    i, rid = 0, ""
    while i < len(params):
        nlen, i = length(i)
        vlen, i = length(i)
        name, value = params[i:i + nlen], params[i + nlen:i + nlen + vlen]
        i += nlen + vlen
        if name == b"REQUEST_ID":
            rid = value.decode()
    with open(cfg["out"], "w") as f:
        f.write(rid)
    time.sleep(cfg["seconds"])
    conn.close()

{"flood": flood, "slow": slow, "held": held, "hang": hang}[sys.argv[1]]()
PY
edgepy() { python3 "$dir/edge.py" "$@"; }
jqt() { jq -e "$1" <<<"$2" >/dev/null; } # jqt FILTER JSON: true when FILTER holds

# --- One API key floods from 127.0.0.1 (16 connections, 3 s). Meanwhile another merchant's
# key from the same address and a client at another address must be served, every time.
session_get='/api/v1/payment/sessions/00000000-0000-4000-8000-000000000000'
out=$(edgepy flood "$(jq -nc --argjson port "$eport" --arg a "API-KEY $key_a" \
	--arg b "API-KEY $key_b" --arg path "$session_get" --arg create "$create" --arg body "$good_body" '{
	port: $port,
	flood: {src: "127.0.0.1", method: "GET", path: $path, headers: {Authorization: $a},
		threads: 16, seconds: 3},
	victims: [
		{src: "127.0.0.1", method: "POST", path: $create, body: $body, count: 10,
			headers: {Authorization: $b, "Content-Type": "application/json"}},
		{src: "127.0.0.2", method: "GET", path: "/api/v1/health", headers: {}, count: 10}]}')")
echo "flood of key A: $out"
n429=$(jq '.codes["429"] // 0' <<<"$out")
n404=$(jq '.codes["404"] // 0' <<<"$out")
others=$(jq '[.codes | to_entries[] | select(.key != "429" and .key != "404") | .value] | add // 0' <<<"$out")
elapsed=$(jq '.elapsed' <<<"$out")
check "the flooding key gets 429 ($n429 of them)" [ "$n429" -gt 0 ]
check "  every 429 in the API's JSON error shape" [ "$(jq .bad429 <<<"$out")" = 0 ]
check "  its burst still reached the service ($n404 answered 404 by the worker)" [ "$n404" -ge 40 ]
# 20 r/s after a burst of 40: what passed is bounded (+ slack for the clock and rounding).
max_passed=$(awk -v e="$elapsed" 'BEGIN { printf "%d", 40 + 20 * e * 1.25 + 10 }')
check "  at most the configured rate passed ($n404 <= $max_passed in ${elapsed}s)" \
	[ "$n404" -le "$max_passed" ]
check "  nothing else: no 5xx, no dropped connections ($others)" [ "$others" = 0 ]
check "another key at the same address is served during the flood: $(jq -c '.victims[0]' <<<"$out")" \
	jqt '.victims[0] | length == 10 and all(. == 200)' "$out"
check "another address is served during the flood: $(jq -c '.victims[1]' <<<"$out")" \
	jqt '.victims[1] | length == 10 and all(. == 200)' "$out"
# The bucket empties at 20 r/s: 40 in 2 s.
sleep 3
code=$(req "$edge$session_get" -H "Authorization: API-KEY $key_a")
check "after the flood the key is served again (got $code)" [ "$code" = 404 ]

# Made-up keys that start like A's (its public prefix) from another address do not drain A's
# bucket: the limit is per key prefix and address.
out=$(edgepy flood "$(jq -nc --argjson port "$eport" --arg fake "API-KEY ${key_a:0:16}00000000" \
	--arg path "$session_get" '{port: $port, flood: {src: "127.0.0.3", method: "GET",
	path: $path, headers: {Authorization: $fake}, threads: 8, seconds: 2}}')")
code=$(req "$edge$session_get" -H "Authorization: API-KEY $key_a")
check "made-up keys with A's prefix, flooded from elsewhere ($(jq -c .codes <<<"$out")), leave A served (got $code)" \
	[ "$code" = 404 ]
# A new made-up key on every request does not escape the per-address limit (50 r/s, burst 100).
out=$(edgepy flood "$(jq -nc --argjson port "$eport" --arg path "$session_get" '{port: $port,
	flood: {src: "127.0.0.4", method: "GET", path: $path, headers: {}, vary_key: true,
	threads: 16, seconds: 2}}')")
check "a new key on every request still meets the per-address limit: $(jq -c .codes <<<"$out")" \
	jqt '(.codes["429"] // 0) > 0 and .bad429 == 0' "$out"

# --- PIN attempts on the checkout page: form POSTs per address.
acct=$(ctl account create --kind customer)
ctl account deposit "$acct" 50 >/dev/null
echo 1234 | ctl account pin "$acct" >/dev/null
code=$(curl -sS -o "$dir/session.json" -w '%{http_code}' "$main$create" \
	-H "Authorization: API-KEY $key_a" -H 'Content-Type: application/json' -d "$good_body")
sid=$(json session_id <"$dir/session.json")
check "a session to pay (got $code)" [ "$code" = 200 ]
page="$edge/checkout/$sid"
code=$(req --interface 127.0.0.5 "$page")
csrf=$(grep -o 'name="csrf" value="[0-9a-f]*"' "$dir/out" | head -n 1 | sed 's/.*value="\([0-9a-f]*\)"/\1/' || true)
check "the page through the edge server (got $code)" [ "$code:${#csrf}" = 200:64 ]
codes=()
pin_start=$SECONDS
for i in $(seq 1 16); do
	codes+=("$(req --interface 127.0.0.5 "$page" --data-urlencode "csrf=$csrf" -d method=wallet \
		-d action=pay --data-urlencode "account_number=$acct" -d pin=0000)")
	[ "$i" = 1 ] && cp "$dir/out" "$dir/first.html"
done
pin_secs=$((SECONDS - pin_start))
echo "16 wrong-PIN POSTs from one address in ${pin_secs}s: ${codes[*]}"
n200=$(printf '%s\n' "${codes[@]}" | grep -c '^200$' || true)
n429=$(printf '%s\n' "${codes[@]}" | grep -c '^429$' || true)
check "the first wrong PIN reaches the service" grep -q 'wrong PIN' "$dir/first.html"
check "rapid PIN POSTs get 429 ($n429 of 16)" [ "$n429" -gt 0 ]
# 10 at once, then one every 5 s: the 11th passes at once, a 12th only after 5 s.
pin_counts_ok() {
	[ "$n200" -ge 11 ] && [ "$n200" -le $((11 + pin_secs / 5)) ] && [ $((n200 + n429)) = 16 ]
}
check "  after the burst (10) and one more reached the service ($n200 did in ${pin_secs}s)" \
	pin_counts_ok
check "  the 429 is a page for the customer's browser" grep -q 'Too many attempts' "$dir/out"
check "  served as HTML" grep -qi '^Content-Type: text/html' "$dir/hdr"
code=$(req --interface 127.0.0.5 "$page")
check "viewing the page from that address still works (got $code)" [ "$code" = 200 ]
code=$(req --interface 127.0.0.6 "$page" --data-urlencode "csrf=$csrf" -d method=wallet -d action=pay \
	--data-urlencode "account_number=$acct" -d pin=0000)
check "another address can still submit the form (got $code)" [ "$code" = 200 ]
check "  and nothing was paid" [ "$(psql -qAtc "SELECT status FROM payment_sessions WHERE id = '$sid'")" = open ]
head -c 20000 /dev/zero | tr '\0' 'a' >"$dir/form"
code=$(req --interface 127.0.0.6 "$page" -H 'Content-Type: application/x-www-form-urlencoded' \
	--data-binary @"$dir/form")
check "a 20 KB form POST: 413 (got $code)" [ "$code" = 413 ]
check "  as a page" grep -q 'Request too large' "$dir/out"

# --- Slowloris: 20 connections drip a header byte a second, 5 stall in their body; each is
# dropped at the 10 s timeout (not before 5 s: it is the timeout that ends them), while
# another address is served every second.
out=$(edgepy slow "$(jq -nc --argjson port "$eport" '{port: $port, src: "127.0.0.7",
	other_src: "127.0.0.1", header_conns: 20, body_conns: 5, limit: 25}')")
echo "slow clients: $out"
check "every slow client was dropped by the server: $(jq -r '"\(.dropped) of \(.total)"' <<<"$out")" \
	jqt '.dropped == .total' "$out"
check "  by the timeout, between 5 and 20 s after they connected ($(jq -r '"\(.first)-\(.last) s"' <<<"$out"))" \
	jqt '.first >= 5 and .last <= 20' "$out"
check "  while another address was served every time: $(jq -c .served <<<"$out")" \
	jqt '(.served | length) >= 5 and (.served | all(. == 200))' "$out"

# --- Requests in progress per address (limit_conn 64): 64 unfinished uploads from one
# address, then its next request is refused while others are served.
out=$(edgepy held "$(jq -nc --argjson port "$eport" '{port: $port, src: "127.0.0.8",
	other_src: "127.0.0.1", conns: 64}')")
echo "64 held uploads: $out"
check "the 65th request in progress from one address gets 429" jqt '.over == 429 and .over_json' "$out"
check "  the 64 held uploads all still open then" jqt '.held == 64' "$out"
check "  while another address is served" jqt '.other == 200' "$out"
check "  and once the uploads are gone, it is served again" jqt '.after == 200' "$out"

# --- The main server of the stack (benchmarks, other suites) is not throttled.
out=$(edgepy flood "$(jq -nc --argjson port "$MARKETPAY_PORT" --arg path "$session_get" \
	--arg a "API-KEY $key_a" '{port: $port, flood: {src: "127.0.0.1", method: "GET",
	path: $path, headers: {Authorization: $a}, threads: 8, seconds: 1}}')")
check "the stack's main server has no limits: $(jq -c .codes <<<"$out")" \
	jqt '.codes | keys == ["404"]' "$out"

# --- Request ids and nginx's own 5xx (nginx/marketpay-errors.conf). The id of a reply.
rid() { tr -d '\r' <"$dir/hdr" | sed -n 's/^Request-Id: //Ip'; }
not_in_out() { ! grep -qi -- "$1" "$dir/out"; }
one_rid() { [ "$(rid | wc -l)" = 1 ] && rid | grep -Eqx '[0-9a-f]{32}'; }
access_log="$sdir/nginx/marketpay-sandbox.access.log"
code=$(req --interface 127.0.0.9 "$edge$create" -H "Authorization: API-KEY $key_b" \
	-H 'Content-Type: application/json' -d "$good_body")
check "a worker's reply through the server block (got $code)" [ "$code" = 200 ]
id=$(rid | head -n 1)
check "  carries one Request-Id of 32 hex digits ($id)" one_rid
check "  the id the worker logged (req=)" grep -q "req=$id " "$sdir/fcgi.log"
# The server block's log is written in batches (flush=1s): the line comes within a second.
check "  and the access log's rid=, with the upstream's status" \
	wait_for 5 grep -q "\" 200 .* rid=$id .* us=200 " "$access_log"
check "  Server names no nginx version" grep -qix 'Server: nginx'$'\r' "$dir/hdr"
code=$(req --interface 127.0.0.9 "$edge$create" -H 'Content-Type: application/json' -d x)
check "the worker's own errors pass through untouched (got $code)" [ "$code" = 401 ]
check "  with one Request-Id" one_rid

"$stack" pool-stop "$sdir"
before=$(sessions)
code=$(req --interface 127.0.0.9 "$edge$create" -H "Authorization: API-KEY $key_b" \
	-H 'Content-Type: application/json' -d "$good_body")
check "pool stopped: create-session answers 502 from nginx (got $code)" [ "$code" = 502 ]
check "  in the API's JSON error shape" is_json_error 'not reachable'
check "  with no other field" jqt 'keys == ["message", "success"]' "$(cat "$dir/out")"
id=$(rid | head -n 1)
check "  with one Request-Id ($id)" one_rid
check "  found in the access log with no worker's answer" \
	wait_for 5 grep -q "\" 502 .* rid=$id .* us=502 " "$access_log"
check "  Server names no nginx version" grep -qix 'Server: nginx'$'\r' "$dir/hdr"
check "  and nothing stored" [ "$(sessions)" = "$before" ]
code=$(req --interface 127.0.0.9 "$page")
check "pool stopped: the checkout page answers 502 (got $code)" [ "$code" = 502 ]
check "  as a small page of ours" grep -q 'Payment page unavailable' "$dir/out"
check "  not nginx's: it names no nginx" not_in_out nginx
check "  with one Request-Id" one_rid
# A pool that takes the connection and never answers: 504 once fastcgi_read_timeout passes
# (2 s here, 30 s as shipped), with the id the pool was given. The stand-in (edge.py hang)
# records the REQUEST_ID parameter it got, as the worker would log it.
sed -i 's/^fastcgi_read_timeout .*/fastcgi_read_timeout 2s;/' "$sdir/nginx/marketpay-fastcgi.conf"
kill -HUP "$(cat "$sdir/nginx/nginx.pid")"
rm -f "$sdir/fcgi.sock"
edgepy hang "$(jq -nc --arg sock "$sdir/fcgi.sock" --arg out "$dir/hung.rid" \
	'{sock: $sock, out: $out, seconds: 15}')" &
hung=$!
for _ in $(seq 50); do [ -S "$sdir/fcgi.sock" ] && break; sleep 0.1; done
sleep 1 # nginx's new workers, with the 2 s timeout
code=$(req --interface 127.0.0.9 "$edge$create" -H "Authorization: API-KEY $key_b" \
	-H 'Content-Type: application/json' -d "$good_body")
check "pool hung: create-session answers 504 from nginx (got $code)" [ "$code" = 504 ]
check "  in the API's JSON error shape" is_json_error 'did not answer in time'
id=$(rid | head -n 1)
check "  with one Request-Id ($id)" one_rid
check "  the id the pool was given ($(cat "$dir/hung.rid" 2>/dev/null))" \
	[ "$(cat "$dir/hung.rid" 2>/dev/null)" = "$id" ]
kill "$hung" 2>/dev/null || true
wait "$hung" 2>/dev/null || true
rm -f "$sdir/fcgi.sock"
"$stack" pool-start "$sdir"
code=$(req --interface 127.0.0.9 "$edge$create" -H "Authorization: API-KEY $key_b" \
	-H 'Content-Type: application/json' -d "$good_body")
check "pool started again: create-session answers 200 (got $code)" [ "$code" = 200 ]

finish
