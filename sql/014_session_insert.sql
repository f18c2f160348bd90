-- A cheaper create-session (the performance issue): one statement (its plan kept by
-- PL/pgSQL for the connection) instead of three and a JSON array parsed twice. The items come as three arrays (ids, names, prices, in
-- request order), and the session's amount is their sum, computed here: it cannot differ
-- from the items whatever the caller sends. Arrays of different lengths leave a NULL that a
-- NOT NULL column refuses; no items leave a NULL amount, refused the same way; prices keep
-- their CHECK (> 0). The workers call this one; mp_create_session(..., jsonb) stays for
-- callers of the old form.
CREATE FUNCTION mp_create_session(
    p_merchant bigint, p_currency text, p_user_id text, p_email text, p_success_url text,
    p_failure_url text, p_lifetime_s int, p_item_ids text[], p_names text[],
    p_prices bigint[])
RETURNS TABLE (id uuid, expires_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY WITH s AS (
        INSERT INTO payment_sessions (id, merchant_id, amount, currency, user_id, email,
                                      redirect_success_url, redirect_failure_url, expires_at)
        SELECT gen_random_uuid(), p_merchant, (SELECT sum(p) FROM unnest(p_prices) p),
               p_currency, p_user_id, p_email, p_success_url, p_failure_url,
               now() + make_interval(secs => p_lifetime_s)
        RETURNING payment_sessions.id, payment_sessions.expires_at
    ), i AS (
        INSERT INTO session_items (session_id, position, item_id, name, price)
        SELECT s.id, (x.ord - 1)::int, x.item_id, x.name, x.price
        FROM s, unnest(p_item_ids, p_names, p_prices) WITH ORDINALITY
            AS x(item_id, name, price, ord)
    )
    SELECT s.id, s.expires_at FROM s;
END
$$;

REVOKE EXECUTE ON FUNCTION mp_create_session(bigint, text, text, text, text, text, int,
    text[], text[], bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_create_session(bigint, text, text, text, text, text, int,
    text[], text[], bigint[]) TO marketpay_app, marketpay_readonly;
