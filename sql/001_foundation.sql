-- Merchants, API keys, payment sessions and their items, idempotency records.
-- Money is bigint minor units (two decimals); times are timestamptz.

CREATE FUNCTION mp_iso(t timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"');

COMMENT ON FUNCTION mp_iso(timestamptz) IS 'ISO 8601 in UTC with an explicit +00:00 offset, as the API returns times';

CREATE TABLE merchants (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    currency    text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    webhook_url text CHECK (webhook_url ~ '^https?://'),
    status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    merchant_id bigint NOT NULL REFERENCES merchants (id),
    prefix      text NOT NULL CHECK (char_length(prefix) = 16),
    digest      bytea NOT NULL UNIQUE CHECK (length(digest) = 32),
    environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX api_keys_merchant ON api_keys (merchant_id);
CREATE INDEX api_keys_prefix ON api_keys (prefix);
COMMENT ON COLUMN api_keys.digest IS 'SHA-256 of the key; the key itself is shown once and never stored';

CREATE TABLE payment_sessions (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    merchant_id          bigint NOT NULL REFERENCES merchants (id),
    status               text NOT NULL DEFAULT 'open'
                         CHECK (status IN ('open', 'paid', 'failed', 'canceled', 'expired')),
    amount               bigint NOT NULL CHECK (amount > 0),
    currency             text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    user_id              text CHECK (char_length(user_id) <= 50),
    email                text CHECK (char_length(email) <= 254),
    redirect_success_url text CHECK (redirect_success_url ~* '^https?://'),
    redirect_failure_url text CHECK (redirect_failure_url ~* '^https?://'),
    created_at           timestamptz NOT NULL DEFAULT now(),
    expires_at           timestamptz NOT NULL,
    CHECK (expires_at > created_at)
);
CREATE INDEX payment_sessions_merchant ON payment_sessions (merchant_id, created_at);
CREATE INDEX payment_sessions_user_id ON payment_sessions (merchant_id, user_id)
    WHERE user_id IS NOT NULL;

CREATE TABLE session_items (
    session_id uuid NOT NULL REFERENCES payment_sessions (id),
    position   int NOT NULL CHECK (position >= 0),
    item_id    text NOT NULL CHECK (char_length(item_id) BETWEEN 1 AND 50),
    name       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 500),
    price      bigint NOT NULL CHECK (price > 0),
    PRIMARY KEY (session_id, position)
);

CREATE TABLE idempotency_keys (
    merchant_id  bigint NOT NULL REFERENCES merchants (id),
    key          text NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
    request_hash bytea NOT NULL CHECK (length(request_hash) = 32),
    status_code  int NOT NULL,
    body         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, key)
);
COMMENT ON TABLE idempotency_keys IS 'Replies kept per merchant and Idempotency-Key; older than idempotency_ttl they no longer count';

-- The status a reader sees: an open session past its expiry is expired.
CREATE FUNCTION mp_session_status(status text, expires_at timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE WHEN status = 'open' AND expires_at <= now() THEN 'expired' ELSE status END;

-- Stores a session and its items in one statement (one round trip from the worker).
-- p_items is a JSON array of {"id", "name", "price"} with prices in minor units; their
-- sum must equal p_amount, which the database checks again.
CREATE FUNCTION mp_create_session(
    p_merchant bigint, p_amount bigint, p_currency text, p_user_id text, p_email text,
    p_success_url text, p_failure_url text, p_lifetime_s int, p_items jsonb)
RETURNS TABLE (id uuid, expires_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    v_id uuid := gen_random_uuid();
    v_expires timestamptz := now() + make_interval(secs => p_lifetime_s);
    v_sum bigint;
BEGIN
    INSERT INTO payment_sessions (id, merchant_id, amount, currency, user_id, email,
                                  redirect_success_url, redirect_failure_url, expires_at)
    VALUES (v_id, p_merchant, p_amount, p_currency, p_user_id, p_email,
            p_success_url, p_failure_url, v_expires);
    INSERT INTO session_items (session_id, position, item_id, name, price)
    SELECT v_id, (x.ord - 1)::int, x.item->>'id', x.item->>'name', (x.item->>'price')::bigint
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(item, ord);
    SELECT sum((e->>'price')::bigint) INTO v_sum FROM jsonb_array_elements(p_items) e;
    IF v_sum IS DISTINCT FROM p_amount THEN
        RAISE EXCEPTION 'session amount % does not equal the sum of item prices %', p_amount, v_sum
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN QUERY SELECT v_id, v_expires;
END
$$;
