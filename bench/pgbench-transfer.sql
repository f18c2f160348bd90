-- pgbench side of bench/transfer: the SQL one multi-vendor transfer costs the database,
-- statement for statement as src/worker_sql.c sends them (auth_key, then transfer_send: one call of
-- mp_transfer_send, which checks settlement, the lock, the block's age and nonce and the PIN,
-- counts it and moves the money), each in its own implicit transaction (no Idempotency-Key:
-- no BEGIN/COMMIT). Run with -M prepared so each is parsed once per connection like the
-- worker's PQprepare'd statements. What the worker does besides SQL (RSA-OAEP decryption of
-- the PIN block, its two HMACs, JSON) is not here: that is what the ratio of the two rates
-- shows.
-- Differences, knowingly: the block's time ($4 of the worker) is the statement's own
-- now(), and its nonce ($5) is made by the SQL from the client id and a random number
-- (32 hex digits of random bytes in the worker's requests): each call needs a new one.
-- Variables come from -D (bench/transfer sets them; for the spread case it writes one copy
-- of this file per merchant with digest, merchant, accounts, pin_digest and pin_legacy
-- renamed digest_N, ...):
--   digest      '\x' || hex SHA-256 of the API key      env  sandbox
--   merchant    merchant id                             tz   time zone (config timezone)
--   pin_digest  '\x' || hex HMAC-SHA256(pepper, 'marketpay-pin-v2:merchant:ID' NUL PIN)
--   pin_legacy  '\x' || hex HMAC-SHA256(pepper, PIN)    (both as src/pin.c makes them)
--   accounts    '{VE...,VE...}' the vendors, in request order
--   amounts     '{100,200,...}' their amounts in minor units
-- mp_transfer_send answers a refusal as a row, not an error: bench/transfer checks that
-- every pgbench transaction made a transfer.
\set r random(1, 999999999999999)
SELECT k.merchant_id, m.name, m.currency, CASE WHEN mp_key_use_stale(k.last_used_at) THEN mp_key_used(k.id) END FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.digest = :digest::bytea AND k.environment = :env AND k.revoked_at IS NULL AND m.status = 'active';
SELECT outcome, detail, message, CASE WHEN locked_until = 'infinity' THEN '' ELSE mp_iso(locked_until) END, CASE WHEN isfinite(locked_until) THEN greatest(ceil(extract(epoch FROM locked_until - now())), 1)::bigint END, transfer_id, amount, transaction_date, group_id FROM mp_transfer_send(:merchant::bigint, :pin_digest::bytea, :pin_legacy::bytea, extract(epoch FROM now())::bigint, 'pgbench-' || :client_id || '-' || lpad(:r, 15, '0'), :accounts::text[], :amounts::bigint[], :tz);
