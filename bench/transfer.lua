-- wrk script for bench/transfer: every request is one send-money-MultiVendor POST.
-- MARKETPAY_BENCH_REQUESTS names a file written by bench/transfer right before the run, one
-- line per request: an API key, a tab, and the JSON body (that merchant's PIN block,
-- encrypted, and its five vendors); consecutive lines take the merchants in turn. A PIN
-- block's nonce is accepted once, so no line is sent twice: the wrk threads
-- (MARKETPAY_BENCH_THREADS of them) take disjoint lines, thread t every line i with
-- i mod threads = t, in order. bench/transfer makes more lines than the run can use and
-- checks that it did not run out (a line sent again would be answered 400).
-- With one merchant every request goes to one (hot) merchant; with many, the requests in
-- flight at any moment are for different merchants.
-- Without an Idempotency-Key header the worker runs the two prepared statements that
-- bench/pgbench-transfer.sql runs.

local path = "/api/v1/payment/send-money-MultiVendor"
local threads = 0
local requests = {}
local n, i = 0, 0

function setup(thread)
   thread:set("offset", threads)
   threads = threads + 1
end

function init(args)
   local file = os.getenv("MARKETPAY_BENCH_REQUESTS")
   if file == nil or file == "" then
      error("MARKETPAY_BENCH_REQUESTS is not set")
   end
   local t = tonumber(os.getenv("MARKETPAY_BENCH_THREADS") or "1")
   local me = offset or 0   -- this thread's number, set by setup() in the main state
   local line_no = 0
   for line in io.lines(file) do
      local key, body = line:match("^([^\t]+)\t(.+)$")
      if key == nil then
         error(file .. ": a line is not KEY<TAB>BODY")
      end
      if line_no % t == me then
         n = n + 1
         requests[n] = wrk.format("POST", path, {
            ["Authorization"] = "API-KEY " .. key,
            ["Content-Type"] = "application/json",
         }, body)
      end
      line_no = line_no + 1
   end
   if n == 0 then
      error(file .. " has no line for thread " .. me)
   end
end

function request()
   i = i % n + 1
   return requests[i]
end
