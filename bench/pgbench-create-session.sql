-- pgbench side of bench/create-session: the SQL one create-session request costs the
-- database (src/worker_sql.c: session_create, which looks the API key up itself: without an
-- Idempotency-Key a request sends nothing else), in its own implicit transaction as the
-- worker sends it (no BEGIN/COMMIT). Run with -M prepared so it is parsed once per
-- connection like the worker's PQprepare'd statement. Variables come from -D
-- (bench/create-session sets them):
--   digest    '\x' || hex SHA-256 of the API key      env  sandbox     user_id, email
--   lifetime  session_lifetime (s)       ids, names, prices  the items as array literals
-- The worker passes the two absent redirect URLs as NULL; so does this script.
SELECT id, mp_iso(expires_at), merchant_id FROM mp_create_session(:digest::bytea, :env, :user_id, :email, NULL, NULL, :lifetime::int, :ids::text[], :names::text[], :prices::bigint[]);
