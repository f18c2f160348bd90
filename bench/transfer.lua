-- wrk script for bench/transfer: every request is one send-money-MultiVendor POST.
-- MARKETPAY_BENCH_REQUESTS names a file written by bench/transfer, one line per merchant:
-- its API key, a tab, and the JSON body (its own PIN, encrypted, and its five vendors).
-- Requests rotate through the lines; the wrk threads (MARKETPAY_BENCH_THREADS of them)
-- start evenly spaced, so with one line every request goes to one (hot) merchant and with
-- many, the requests in flight at any moment are for different merchants.
-- Without an Idempotency-Key header the worker runs the four prepared statements that
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
   for line in io.lines(file) do
      local key, body = line:match("^([^\t]+)\t(.+)$")
      if key == nil then
         error(file .. ": a line is not KEY<TAB>BODY")
      end
      n = n + 1
      requests[n] = wrk.format("POST", path, {
         ["Authorization"] = "API-KEY " .. key,
         ["Content-Type"] = "application/json",
      }, body)
   end
   if n == 0 then
      error(file .. " is empty")
   end
   -- offset is this thread's number, set by setup() in the main state
   local t = tonumber(os.getenv("MARKETPAY_BENCH_THREADS") or "1")
   i = math.floor((offset or 0) * n / t) % n
end

function request()
   i = i % n + 1
   return requests[i]
end
