-- pgbench side of bench/mixed: the SQL that each operation of tests/load/mpload's mix costs
-- the database, statement for statement as src/worker_sql.c sends them, with the BEGIN/COMMITs the
-- worker sends. bench/mixed cuts this file at the "-- @name" lines into three scripts and
-- runs them weighted like mpload's -m (default create@1, pay@2, transfer@1), so one pgbench
-- transaction is one mpload operation and its log line says which (the script number).
-- Run with -M prepared: every statement is parsed once per connection, like the worker's
-- PQprepare'd statements.
--
-- What differs from the workers, knowingly:
--   * Idempotency-Keys are 'cs-'/'tr-' || client_id || '-' || a random number, computed by
--     the SQL in each of the three statements that use one (the worker passes the string).
--   * The request hash and the stored reply are fixed strings of the same size as the
--     worker's (-D reqhash, create_reply, transfer_reply); the session amount, items, user_id
--     and redirect URLs are fixed too (mpload varies prices and ids).
--   * A transfer pays 1 to 3 consecutive vendors of the list (mpload: 1 to 3 distinct
--     vendors at random), each the same random amount of 1.00 to 9.99.
--   * Literal NULLs where the worker binds a NULL parameter; the page query's to_char format
--     is written 'YYYY-MM-DD HH24:' || 'MI' (folded by the planner) so that pgbench does not
--     take ":MI" for a variable.
--   * The transfer PIN block's time is the statement's now() and its nonce is made by the
--     SQL ('pgbench-' || client_id || '-' || the random number of the Idempotency-Key): a
--     nonce is accepted once per merchant. The PIN digests are computed by bench/mixed as
--     the worker computes them (src/pin.c) and passed with -D; a wallet's is picked from
--     the list by the SQL and decoded from hex (the worker binds '\x...' text).
--   * Nothing of what the worker does besides SQL: HTTP, JSON, HTML, the CSRF token, the
--     PIN's RSA-OAEP decryption and its peppered digests. That is what the ratio shows.
--
-- Variables from -D (bench/mixed sets them):
--   digest    '\x' || hex SHA-256 of the API key      env       sandbox
--   merchant  merchant id     currency  its currency   lifetime  session_lifetime (s)
--   ids, names, prices  the items as array literals (prices in minor units)
--   okurl, failurl  the redirect URLs mpload sends (it sends no email: NULL here too)
--   wait      idempotency_wait_ms     ttl  idempotency_ttl (s)    tz  timezone
--   reqhash   '\x' || 64 hex digits   create_reply, transfer_reply  stored reply bodies
--   wallets   '{CU...,...}' customer accounts (client i uses wallet i mod nwallets, as
--             mpload's thread i does)   nwallets  their number
--   wdigests  '{<hex>,...}' their PIN digests, in the same order: HMAC-SHA256(pepper,
--             'marketpay-pin-v2:account:' || number || NUL || PIN), hex
--   wlegacy   '\x' || hex HMAC-SHA256(pepper, PIN), the wallets' legacy digest (one PIN)
--   pin_digest, pin_legacy  the same two of the merchant's transfer PIN ('...merchant:ID')
--   vendors   '{VE...,...}' the vendor accounts, listed twice   nvendors  how many (once)
--   cardpct   percent of payments by test card (mpload -p both: 50)

-- @create: POST /api/v1/payment/create-session with an Idempotency-Key (mpload sends one):
-- the key's lock and stored reply find the merchant by the API key (idem_lock_key,
-- idem_get_key), as the worker sends them
\set k random(1, 999999999999)
BEGIN;
SELECT set_config('lock_timeout', :wait || 'ms', true);
SELECT set_config('lock_timeout', '0', true), set_config('marketpay.idempotency_key', 'cs-' || :client_id || '-' || :k, true) FROM (SELECT pg_advisory_xact_lock(hashtextextended((SELECT k.merchant_id FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.digest = :digest::bytea AND k.environment = :env AND k.revoked_at IS NULL AND m.status = 'active') || ':' || ('cs-' || :client_id || '-' || :k), 7201)) OFFSET 0) l;
SELECT k.merchant_id, m.name, m.currency, CASE WHEN mp_key_use_stale(k.last_used_at) THEN mp_key_used(k.id) END, encode(i.request_hash, 'hex'), i.status_code, i.body, i.body_sealed FROM api_keys k JOIN merchants m ON m.id = k.merchant_id LEFT JOIN idempotency_keys i ON i.merchant_id = k.merchant_id AND i.key = 'cs-' || :client_id || '-' || :k AND i.created_at > now() - make_interval(secs => :ttl::int) WHERE k.digest = :digest::bytea AND k.environment = :env AND k.revoked_at IS NULL AND m.status = 'active';
SELECT id, mp_iso(expires_at), merchant_id FROM mp_create_session(:digest::bytea, :env, 'u-pgbench-' || :client_id, NULL, :okurl, :failurl, :lifetime::int, :ids::text[], :names::text[], :prices::bigint[], NULL);
INSERT INTO idempotency_keys (merchant_id, key, request_hash, status_code, body) VALUES (:merchant, 'cs-' || :client_id || '-' || :k, :reqhash::bytea, 200, :create_reply) ON CONFLICT (merchant_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status_code = EXCLUDED.status_code, body = EXCLUDED.body, created_at = now();
COMMIT;

-- @pay: create-session as above, GET /checkout/{id}, POST /checkout/{id} (card or wallet)
\set k random(1, 999999999999)
\set card random(1, 100) <= :cardpct
\set wi :client_id % :nwallets + 1
BEGIN;
SELECT set_config('lock_timeout', :wait || 'ms', true);
SELECT set_config('lock_timeout', '0', true), set_config('marketpay.idempotency_key', 'cs-' || :client_id || '-' || :k, true) FROM (SELECT pg_advisory_xact_lock(hashtextextended((SELECT k.merchant_id FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.digest = :digest::bytea AND k.environment = :env AND k.revoked_at IS NULL AND m.status = 'active') || ':' || ('cs-' || :client_id || '-' || :k), 7201)) OFFSET 0) l;
SELECT k.merchant_id, m.name, m.currency, CASE WHEN mp_key_use_stale(k.last_used_at) THEN mp_key_used(k.id) END, encode(i.request_hash, 'hex'), i.status_code, i.body, i.body_sealed FROM api_keys k JOIN merchants m ON m.id = k.merchant_id LEFT JOIN idempotency_keys i ON i.merchant_id = k.merchant_id AND i.key = 'cs-' || :client_id || '-' || :k AND i.created_at > now() - make_interval(secs => :ttl::int) WHERE k.digest = :digest::bytea AND k.environment = :env AND k.revoked_at IS NULL AND m.status = 'active';
SELECT id AS sid, mp_iso(expires_at) AS expires FROM mp_create_session(:digest::bytea, :env, 'u-pgbench-' || :client_id, NULL, :okurl, :failurl, :lifetime::int, :ids::text[], :names::text[], :prices::bigint[], NULL) \gset
INSERT INTO idempotency_keys (merchant_id, key, request_hash, status_code, body) VALUES (:merchant, 'cs-' || :client_id || '-' || :k, :reqhash::bytea, 200, :create_reply) ON CONFLICT (merchant_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status_code = EXCLUDED.status_code, body = EXCLUDED.body, created_at = now();
COMMIT;
-- GET /checkout/{id}: checkout_get, session_items
SELECT s.id, mp_session_status(s.status, s.expires_at), s.amount, s.currency, s.redirect_success_url, s.redirect_failure_url, s.user_id, to_char(s.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:' || 'MI'), m.name, s.failure_reason FROM payment_sessions s JOIN merchants m ON m.id = s.merchant_id WHERE s.id = :sid::uuid;
SELECT item_id, name, price FROM session_items WHERE session_id = :sid::uuid ORDER BY position;
-- POST /checkout/{id}: the same two, then the payment
SELECT s.id, mp_session_status(s.status, s.expires_at), s.amount, s.currency, s.redirect_success_url, s.redirect_failure_url, s.user_id, to_char(s.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:' || 'MI'), m.name, s.failure_reason FROM payment_sessions s JOIN merchants m ON m.id = s.merchant_id WHERE s.id = :sid::uuid;
SELECT item_id, name, price FROM session_items WHERE session_id = :sid::uuid ORDER BY position;
\if :card
SELECT outcome, transaction_id, NULL, NULL FROM mp_pay_test_card(:sid::uuid, 'visa', '4242', NULL);
\else
SELECT outcome, transaction_id, CASE WHEN locked_until = 'infinity' THEN '' ELSE mp_iso(locked_until) END, CASE WHEN isfinite(locked_until) THEN greatest(ceil(extract(epoch FROM locked_until - now())), 1)::bigint END FROM mp_pay_wallet(:sid::uuid, (:wallets::text[])[:wi::int], decode((:wdigests::text[])[:wi::int], 'hex'), :wlegacy::bytea);
\endif

-- @transfer: POST /api/v1/payment/send-money-MultiVendor with an Idempotency-Key
\set k random(1, 999999999999)
\set nv random(1, 3)
\set first random(1, :nvendors)
\set last :first + :nv - 1
\set cents random(100, 999)
SELECT k.merchant_id, m.name, m.currency, CASE WHEN mp_key_use_stale(k.last_used_at) THEN mp_key_used(k.id) END FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.digest = :digest::bytea AND k.environment = :env AND k.revoked_at IS NULL AND m.status = 'active';
BEGIN;
SELECT set_config('lock_timeout', :wait || 'ms', true);
SELECT pg_advisory_xact_lock(hashtextextended(:merchant || ':' || ('tr-' || :client_id || '-' || :k), 7201));
SELECT encode(request_hash, 'hex'), status_code, body FROM idempotency_keys WHERE merchant_id = :merchant AND key = 'tr-' || :client_id || '-' || :k AND created_at > now() - make_interval(secs => :ttl::int);
SELECT outcome, detail, message, CASE WHEN locked_until = 'infinity' THEN '' ELSE mp_iso(locked_until) END, CASE WHEN isfinite(locked_until) THEN greatest(ceil(extract(epoch FROM locked_until - now())), 1)::bigint END, transfer_id, amount, transaction_date, group_id FROM mp_transfer_send(:merchant::bigint, :pin_digest::bytea, :pin_legacy::bytea, extract(epoch FROM now())::bigint, 'pgbench-' || :client_id || '-' || lpad(:k, 15, '0'), (:vendors::text[])[:first::int : :last::int], array_fill(:cents::bigint, ARRAY[:nv::int]), :tz);
INSERT INTO idempotency_keys (merchant_id, key, request_hash, status_code, body) VALUES (:merchant, 'tr-' || :client_id || '-' || :k, :reqhash::bytea, 200, :transfer_reply) ON CONFLICT (merchant_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status_code = EXCLUDED.status_code, body = EXCLUDED.body, created_at = now();
COMMIT;
