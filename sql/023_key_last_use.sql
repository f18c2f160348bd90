-- When each API key was last used (marketpayctl key list), kept coarse so that a request
-- costs no write: the statements that look a key up (the workers' auth_key and
-- mp_create_session) read its last_used_at with the key, and only when it is older than
-- the granularity, 10 minutes (or never set), call mp_key_used, which writes now(). So a key
-- in steady use is written at most once per 10 minutes, and last_used_at is the request that
-- found it stale: a key's last use is at most 10 minutes later than it shows. The write
-- skips a key row another request is writing at that moment (SKIP LOCKED): no request waits
-- for another to note a use. Only an accepted key counts (the key, its environment, not
-- revoked, its merchant active).

ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
COMMENT ON COLUMN api_keys.last_used_at IS 'About when the key was last accepted: written at most once per 10 minutes (mp_key_use_stale), NULL when never';

-- Whether a key last used at p_last is due to be noted again. Inlined into the callers (a
-- plain STABLE SQL expression): the granularity is written here only.
CREATE FUNCTION mp_key_use_stale(p_last timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p_last IS NULL OR p_last < now() - interval '10 minutes'
$$;

-- Notes a use of key p_key now, when it is due and the key is not revoked (both checked
-- here, under the row lock it takes without waiting: the workers' role may call it with any
-- id, so it checks its one intent itself). Returns the time written, or NULL when nothing was.
CREATE FUNCTION mp_key_used(p_key bigint) RETURNS timestamptz
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    UPDATE api_keys SET last_used_at = now()
    WHERE id = (SELECT k.id FROM api_keys k WHERE k.id = p_key AND k.revoked_at IS NULL
                AND mp_key_use_stale(k.last_used_at) FOR UPDATE SKIP LOCKED)
    RETURNING last_used_at;
$$;
REVOKE EXECUTE ON FUNCTION mp_key_use_stale(timestamptz), mp_key_used(bigint) FROM PUBLIC;
-- The DBAs' read-only role may read the rule, not write a key's last use.
GRANT EXECUTE ON FUNCTION mp_key_use_stale(timestamptz) TO marketpay_app, marketpay_readonly;
GRANT EXECUTE ON FUNCTION mp_key_used(bigint) TO marketpay_app;

-- mp_create_session of 013, the key's use noted as above.
CREATE OR REPLACE FUNCTION mp_create_session(
    p_digest bytea, p_environment text, p_user_id text, p_email text, p_success_url text,
    p_failure_url text, p_lifetime_s int, p_item_ids text[], p_names text[],
    p_prices bigint[])
RETURNS TABLE (id uuid, expires_at timestamptz, merchant_id bigint)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY WITH k AS (
        SELECT a.merchant_id, m.currency,
               CASE WHEN mp_key_use_stale(a.last_used_at) THEN mp_key_used(a.id) END AS noted
        FROM api_keys a JOIN merchants m ON m.id = a.merchant_id
        WHERE a.digest = p_digest AND a.environment = p_environment AND a.revoked_at IS NULL
          AND m.status = 'active'
    ), s AS (
        INSERT INTO payment_sessions (id, merchant_id, amount, currency, user_id, email,
                                      redirect_success_url, redirect_failure_url, expires_at)
        SELECT gen_random_uuid(), k.merchant_id, (SELECT sum(p) FROM unnest(p_prices) p),
               k.currency, p_user_id, p_email, p_success_url, p_failure_url,
               now() + make_interval(secs => p_lifetime_s)
        FROM k
        RETURNING payment_sessions.id, payment_sessions.expires_at,
                  payment_sessions.merchant_id
    ), i AS (
        INSERT INTO session_items (session_id, position, item_id, name, price)
        SELECT s.id, (x.ord - 1)::int, x.item_id, x.name, x.price
        FROM s, unnest(p_item_ids, p_names, p_prices) WITH ORDINALITY
            AS x(item_id, name, price, ord)
    )
    SELECT s.id, s.expires_at, s.merchant_id FROM s;
END
$$;
