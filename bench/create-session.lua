-- wrk script for bench/create-session: every request is one create-session POST.
-- The API key comes from the environment (MARKETPAY_BENCH_KEY), set by bench/create-session.
-- Without an Idempotency-Key header the worker runs one prepared statement per request
-- (session_create, which looks the key up itself), the one that
-- bench/pgbench-create-session.sql runs.
-- With MARKETPAY_BENCH_KEYED=1 (bench/create-session KEYED=1) every request carries an
-- Idempotency-Key of its own, as a merchant's retrying client sends it: the worker then
-- takes the idempotency key's lock and reads its stored reply (finding the merchant by the
-- API key in the same statements), runs the statement and stores the reply, in one
-- transaction: three round trips.

local key = os.getenv("MARKETPAY_BENCH_KEY")
if key == nil or key == "" then
   error("MARKETPAY_BENCH_KEY is not set")
end

wrk.method = "POST"
wrk.path = "/api/v1/payment/create-session"
wrk.headers["Authorization"] = "API-KEY " .. key
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"items":[{"id":"sku-1","name":"Green tea","price":12.50},' ..
   '{"id":"sku-2","name":"Cup","price":3}],"user_id":"order-1","email":"b@example.com"}'

-- MARKETPAY_BENCH_PATH: POST to this path instead, without a body (bench/round-trips ROUTE).
local path = os.getenv("MARKETPAY_BENCH_PATH")
if path ~= nil and path ~= "" then
   wrk.path = path
   wrk.body = nil
   wrk.headers["Content-Type"] = nil
end

if os.getenv("MARKETPAY_BENCH_KEYED") == "1" then
   -- Unique across threads and runs: this run's uuid, the thread's number, a counter.
   local f = assert(io.open("/proc/sys/kernel/random/uuid"))
   local run = f:read("*l")
   f:close()
   local threads = 0

   function setup(thread)
      threads = threads + 1
      thread:set("prefix", run .. "-" .. threads .. "-")
   end

   local n = 0
   function request()
      n = n + 1
      wrk.headers["Idempotency-Key"] = prefix .. n
      return wrk.format()
   end
end
