-- pgbench side of bench/create-session: the SQL one create-session request costs the
-- database, statement for statement (src/worker_sql.c: auth_key, then session_create), each in its
-- own implicit transaction as the worker sends them (no Idempotency-Key: no BEGIN/COMMIT).
-- Run with -M prepared so both are parsed once per connection like the worker's
-- PQprepare'd statements. Variables come from -D (bench/create-session sets them):
--   digest    '\x' || hex SHA-256 of the API key      env       sandbox
--   merchant  merchant id     amount  total in minor units     currency  merchant currency
--   user_id, email            lifetime  session_lifetime (s)   items  JSON array, minor units
-- The worker passes the two absent redirect URLs as NULL; so does this script.
SELECT k.merchant_id, m.name, m.currency FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.digest = :digest::bytea AND k.environment = :env AND k.revoked_at IS NULL AND m.status = 'active';
SELECT id, mp_iso(expires_at) FROM mp_create_session(:merchant::bigint, :amount::bigint, :currency, :user_id, :email, NULL, NULL, :lifetime::int, :items::jsonb);
