-- pgbench side of GET /api/v1/payment/sessions/{id}: the one statement the worker sends for
-- it (src/worker_sql.c, session_get_key: the key looked up and the session read together),
-- run with -M prepared like the worker's prepared statements. Variables from -D:
--   digest  '\x' || hex SHA-256 of the API key        sid  the session's id
SELECT k.merchant_id, m.name, m.currency, CASE WHEN mp_key_use_stale(k.last_used_at) THEN mp_key_used(k.id) END, (SELECT mp_session_json(s) FROM payment_sessions s WHERE s.id = :sid::uuid AND s.merchant_id = k.merchant_id) FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.digest = :digest::bytea AND k.environment = 'sandbox' AND k.revoked_at IS NULL AND m.status = 'active';
