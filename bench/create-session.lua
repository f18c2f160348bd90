-- wrk script for bench/create-session: every request is one create-session POST.
-- The API key comes from the environment (MARKETPAY_BENCH_KEY), set by bench/create-session.
-- Without an Idempotency-Key header the worker runs one prepared statement per request
-- (session_create, which looks the key up itself), the one that
-- bench/pgbench-create-session.sql runs.

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
