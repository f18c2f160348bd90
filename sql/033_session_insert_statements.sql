-- create-session as three plain statements, not one statement of data-modifying CTEs (the
-- performance issue). The rules are the same as 030's: the key as the workers' auth_key has
-- it (not revoked, its merchant active), its use noted when due (mp_key_use_stale), the
-- amount the sum of the prices, the id time-ordered (mp_uuid_v7), the locale inserted with
-- the session, no row when the key is refused.
--
-- What it saves: PostgreSQL sets a statement's plan up again at each call (its executor
-- start). 030's one statement read the key through a CTE, inserted the session from a
-- subquery over that CTE (a Subquery Scan projecting the table's 21 columns), summed the
-- prices in a subplan and inserted the items from a second CTE: about 76,000 instructions
-- for the Subquery Scan alone. Here the key is a SELECT INTO, the prices are summed in the
-- function's own loop, the session is an INSERT ... VALUES and the items one INSERT from
-- unnest: bench/pg-instructions create-session 643,444 -> 607,245 instructions (-5.6 %).
--
-- A sum past bigint fails as before (22003). Each price is checked by the items' domain
-- (mp_amount, > 0) when they are inserted, in the same transaction.
--
-- Locks: the function's definition, for a moment; no table is read or rewritten. Its
-- grants are kept (CREATE OR REPLACE).
CREATE OR REPLACE FUNCTION mp_create_session(
    p_digest bytea, p_environment text, p_user_id text, p_email text, p_success_url text,
    p_failure_url text, p_lifetime_s int, p_item_ids text[], p_names text[],
    p_prices bigint[], p_locale text)
RETURNS TABLE (id uuid, expires_at timestamptz, merchant_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
    v_key bigint;
    v_merchant bigint;
    v_currency text;
    v_last_used timestamptz;
    v_amount bigint;
    v_price bigint;
BEGIN
    SELECT a.id, a.merchant_id, m.currency, a.last_used_at
      INTO v_key, v_merchant, v_currency, v_last_used
      FROM api_keys a JOIN merchants m ON m.id = a.merchant_id
     WHERE a.digest = p_digest AND a.environment = p_environment AND a.revoked_at IS NULL
       AND m.status = 'active';
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF mp_key_use_stale(v_last_used) THEN
        PERFORM mp_key_used(v_key);
    END IF;
    -- sum() of 030: NULL for no prices, so the session's NOT NULL amount refuses it.
    FOREACH v_price IN ARRAY coalesce(p_prices, '{}') LOOP
        v_amount := coalesce(v_amount, 0) + v_price;
    END LOOP;
    INSERT INTO payment_sessions AS s (id, merchant_id, amount, currency, user_id, email,
                                       redirect_success_url, redirect_failure_url,
                                       expires_at, locale)
    VALUES (mp_uuid_v7(), v_merchant, v_amount, v_currency, p_user_id, p_email,
            p_success_url, p_failure_url, now() + make_interval(secs => p_lifetime_s),
            p_locale)
    RETURNING s.id, s.expires_at, s.merchant_id
         INTO mp_create_session.id, mp_create_session.expires_at,
              mp_create_session.merchant_id;
    INSERT INTO session_items (session_id, position, item_id, name, price)
    SELECT mp_create_session.id, (x.ord - 1)::int, x.item_id, x.name, x.price
    FROM unnest(p_item_ids, p_names, p_prices) WITH ORDINALITY AS x(item_id, name, price, ord);
    RETURN NEXT;
END
$$;
