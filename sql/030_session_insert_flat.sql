-- create-session in one PL/pgSQL function, not two (the performance issue). The worker calls
-- the 11-argument mp_create_session of 017, which called the 10-argument one (013, 023,
-- 028) for the key, the session and its items, and then, when a locale was given, updated
-- the row it had just made: a nested set-returning call on every create-session, and a
-- second version of the row for a session with a locale. The 11-argument form now does it
-- all in one statement and inserts the locale with the session. The workers' role gets
-- INSERT of the locale column in place of UPDATE of it: it can no longer change the
-- language of a session once made. The rules are the same: the key as the workers' auth_key
-- has it, the amount the sum of the prices, the id time-ordered (028).
--
-- The two forms the service no longer calls are dropped: the 10-argument one (the
-- 11-argument form with a NULL locale does the same) and the first one of 001 (merchant,
-- amount and currency from the caller, items as jsonb), which has had no caller since 013
-- and was executable by marketpay_webhookd and marketpay_readonly. It ran with its caller's
-- rights, so their table privileges kept it from inserting; they now have no form at all
-- to execute: neither role makes sessions.
--
-- Locks: the functions' definitions and the table's privileges, for a moment; no table is
-- read or rewritten.
DROP FUNCTION mp_create_session(bigint, bigint, text, text, text, text, text, int, jsonb);
DROP FUNCTION mp_create_session(bytea, text, text, text, text, text, int, text[], text[],
    bigint[]);

CREATE OR REPLACE FUNCTION mp_create_session(
    p_digest bytea, p_environment text, p_user_id text, p_email text, p_success_url text,
    p_failure_url text, p_lifetime_s int, p_item_ids text[], p_names text[],
    p_prices bigint[], p_locale text)
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
                                      redirect_success_url, redirect_failure_url, expires_at,
                                      locale)
        SELECT mp_uuid_v7(), k.merchant_id, (SELECT sum(p) FROM unnest(p_prices) p),
               k.currency, p_user_id, p_email, p_success_url, p_failure_url,
               now() + make_interval(secs => p_lifetime_s), p_locale
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
COMMENT ON FUNCTION mp_create_session(bytea, text, text, text, text, text, int, text[],
    text[], bigint[], text) IS
    'create-session: the API key (by digest) looked up, the session and its items inserted; no row when the key is refused';

REVOKE EXECUTE ON FUNCTION mp_create_session(bytea, text, text, text, text, text, int,
    text[], text[], bigint[], text) FROM marketpay_readonly;
REVOKE UPDATE (locale) ON payment_sessions FROM marketpay_app;
GRANT INSERT (locale) ON payment_sessions TO marketpay_app;
