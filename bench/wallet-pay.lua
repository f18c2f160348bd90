-- wrk script of bench/wallet-pay: each request is the customer's POST /checkout/{id} that pays
-- an open session from a wallet with its PIN, the form the page sends (csrf, method=wallet,
-- action=pay, account_number, pin), each request a session of its own. The sessions come
-- from the file MP_PAY_FILE, one "session-id csrf-token account-number" a line, made in
-- advance by bench/wallet-pay; wrk thread i of MP_PAY_THREADS takes lines i+1, i+1+threads,
-- ... The PIN is MP_PAY_PIN. When a thread has used up its lines it asks for
-- /checkout/used-up, a 404 that the benchmark counts as a failure (make more sessions).
local nthreads = tonumber(os.getenv("MP_PAY_THREADS") or "2")
local next_id = 0

function setup(thread)
	thread:set("id", next_id)
	next_id = next_id + 1
end

local rows, used = {}, 0
local headers = { ["Content-Type"] = "application/x-www-form-urlencoded" }
local pin = os.getenv("MP_PAY_PIN")

function init()
	local n = 0
	for line in io.lines(os.getenv("MP_PAY_FILE")) do
		if n % nthreads == id then
			local sid, csrf, account = line:match("^(%S+) (%S+) (%S+)$")
			rows[#rows + 1] = { sid = sid, csrf = csrf, account = account }
		end
		n = n + 1
	end
end

function request()
	used = used + 1
	local r = rows[used]
	if r == nil then
		return wrk.format("GET", "/checkout/used-up")
	end
	return wrk.format("POST", "/checkout/" .. r.sid, headers, "csrf=" .. r.csrf ..
		"&method=wallet&action=pay&account_number=" .. r.account .. "&pin=" .. pin)
end
