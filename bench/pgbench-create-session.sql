-- pgbench side of bench/create-session: the SQL one create-session request costs the
-- database (src/worker_sql.c: session_create; the API key's lookup is kept by the worker,
-- src/keycache.c, so a request with a known key sends nothing else), in its own implicit
-- transaction as the worker sends it (no Idempotency-Key: no BEGIN/COMMIT). Run with
-- -M prepared so it is parsed once per connection like the worker's PQprepare'd statement.
-- Variables come from -D (bench/create-session sets them):
--   merchant  merchant id     currency  merchant currency     user_id, email
--   lifetime  session_lifetime (s)       ids, names, prices  the items as array literals
-- The worker passes the two absent redirect URLs as NULL; so does this script.
SELECT id, mp_iso(expires_at) FROM mp_create_session(:merchant::bigint, :currency, :user_id, :email, NULL, NULL, :lifetime::int, :ids::text[], :names::text[], :prices::bigint[]);
