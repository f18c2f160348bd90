-- pgbench side of bench/transfer: the SQL one multi-vendor transfer costs the database,
-- statement for statement as src/db.c sends them (auth_key, merchant_pin, merchant_pin_ok,
-- transfer), each in its own implicit transaction (no Idempotency-Key: no BEGIN/COMMIT).
-- Run with -M prepared so each is parsed once per connection like the worker's PQprepare'd
-- statements. What the worker does besides SQL (RSA-OAEP decryption of the PIN, its HMAC,
-- JSON) is not here: that is what the ratio of the two rates shows.
-- Variables come from -D (bench/transfer sets them; for the spread case it writes one copy
-- of this file per merchant with digest, merchant and accounts renamed digest_N, ...):
--   digest    '\x' || hex SHA-256 of the API key      env       sandbox
--   merchant  merchant id     currency  merchant currency     tz  time zone (config timezone)
--   accounts  '{VE...,VE...}' the vendors, in request order
--   amounts   '{100,200,...}' their amounts in minor units
-- merchant_pin_ok matches no row while the merchant has no PIN failures, as in the run.
SELECT k.merchant_id, m.name, m.currency FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.digest = :digest::bytea AND k.environment = :env AND k.revoked_at IS NULL AND m.status = 'active';
SELECT settlement_enabled, coalesce(encode(pin_digest, 'hex'), ''), coalesce(pin_locked_until > now(), false) FROM merchants WHERE id = :merchant::bigint;
UPDATE merchants SET pin_failures = 0, pin_locked_until = NULL WHERE id = :merchant::bigint AND (pin_failures <> 0 OR pin_locked_until IS NOT NULL);
SELECT transfer_id, amount, transaction_date FROM mp_transfer(:merchant::bigint, :currency, :accounts::text[], :amounts::bigint[], :tz);
