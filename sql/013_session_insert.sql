-- A cheaper create-session (the performance issue): one round trip and one statement. The
-- worker sends the API key's digest with the session, and this one statement looks the key
-- up (the same rule as the workers' auth_key: this environment, not revoked, an active
-- merchant) and inserts the session and its items, its plan kept by PL/pgSQL for the
-- connection. A key that does not pass inserts nothing and returns no row (the worker
-- answers 401); a revocation committed before the statement's snapshot counts, whatever the
-- worker saw before. The items come as three arrays (ids, names, prices, in request order),
-- not a JSON array parsed twice, and the session's amount is their sum, computed here: it
-- cannot differ from the items whatever the caller sends. Arrays of different lengths leave
-- a NULL that a NOT NULL column refuses; no items leave a NULL amount, refused the same way;
-- prices keep their CHECK (> 0). mp_create_session(..., jsonb) stays for callers of the old
-- form.
CREATE FUNCTION mp_create_session(
    p_digest bytea, p_environment text, p_user_id text, p_email text, p_success_url text,
    p_failure_url text, p_lifetime_s int, p_item_ids text[], p_names text[],
    p_prices bigint[])
RETURNS TABLE (id uuid, expires_at timestamptz, merchant_id bigint)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY WITH k AS (
        SELECT a.merchant_id, m.currency FROM api_keys a JOIN merchants m ON m.id = a.merchant_id
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

REVOKE EXECUTE ON FUNCTION mp_create_session(bytea, text, text, text, text, text, int,
    text[], text[], bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_create_session(bytea, text, text, text, text, text, int,
    text[], text[], bigint[]) TO marketpay_app, marketpay_readonly;
