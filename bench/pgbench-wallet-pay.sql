-- pgbench side of a wallet payment, POST /checkout/{id} with method=wallet: the two
-- statements the worker sends for it (src/worker_sql.c: checkout_get to load the session and
-- its items, then pay_wallet with the PIN's digests as src/pay_wallet.c makes them), each in
-- its own implicit transaction as the worker runs them, -M prepared.
-- Each transaction pays a session of its own: client c takes rows c * stride + 1, + 2, ... of
-- bench.pay for the run (made by bench/wallet-pay), read first by its primary key (a third,
-- cheap statement the service does not send). Variables from -D:
--   run  the rows' run name   stride  rows per client   k  0 (the client's count so far)
-- The page's statement is not repeated here: mp_wallet_pay_script (bench/lib.sh) puts that
-- of bench/pgbench-checkout-page.sql before the payment's.
\set k :k + 1
\set n :client_id * :stride + :k
SELECT sid, account, digest, legacy FROM bench.pay WHERE run = :run AND n = :n \gset
SELECT outcome, transaction_id, CASE WHEN locked_until = 'infinity' THEN '' ELSE mp_iso(locked_until) END, CASE WHEN isfinite(locked_until) THEN greatest(ceil(extract(epoch FROM locked_until - now())), 1)::bigint END FROM mp_pay_wallet(:sid::uuid, :account, :digest::bytea, :legacy::bytea);
