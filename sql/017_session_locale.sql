-- The hosted page's language, when the merchant fixes it for a session (create-session's
-- locale, an extension of the spec): a catalog name such as 'en', 'fa_AF' or 'ps', or NULL
-- for none (the page follows the browser). The worker accepts only the languages it ships;
-- the CHECK keeps the column to the shape of a catalog name, so that a language added later
-- (a new po/LANG.po) needs no migration.
ALTER TABLE payment_sessions ADD COLUMN locale text
    CHECK (locale ~ '^[a-z]{2,3}(_[A-Z]{2})?$');

-- mp_create_session of 013 and then the locale, when there is one: the worker calls this
-- form; the 10-argument one stays as it is for a session without a locale. The session is
-- the caller's own, made in this same call, so the workers may set its locale (only that
-- column; nothing reads it for money).
GRANT UPDATE (locale) ON payment_sessions TO marketpay_app;

CREATE FUNCTION mp_create_session(
    p_digest bytea, p_environment text, p_user_id text, p_email text, p_success_url text,
    p_failure_url text, p_lifetime_s int, p_item_ids text[], p_names text[],
    p_prices bigint[], p_locale text)
RETURNS TABLE (id uuid, expires_at timestamptz, merchant_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
    v_id uuid;
    v_expires timestamptz;
    v_merchant bigint;
BEGIN
    SELECT c.id, c.expires_at, c.merchant_id INTO v_id, v_expires, v_merchant
      FROM mp_create_session(p_digest, p_environment, p_user_id, p_email, p_success_url,
                             p_failure_url, p_lifetime_s, p_item_ids, p_names, p_prices) c;
    IF v_id IS NULL THEN
        RETURN;   -- the key is refused: no row, as from the 10-argument form
    END IF;
    IF p_locale IS NOT NULL THEN
        UPDATE payment_sessions s SET locale = p_locale WHERE s.id = v_id;
    END IF;
    RETURN QUERY SELECT v_id, v_expires, v_merchant;
END
$$;

REVOKE EXECUTE ON FUNCTION mp_create_session(bytea, text, text, text, text, text, int,
    text[], text[], bigint[], text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_create_session(bytea, text, text, text, text, text, int,
    text[], text[], bigint[], text) TO marketpay_app, marketpay_readonly;
