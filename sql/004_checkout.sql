-- Hosted checkout payments: how a session was paid, and the one call that pays it.

ALTER TABLE payment_sessions
    ADD COLUMN paid_at timestamptz,
    ADD COLUMN payment_method text CHECK (payment_method IN ('wallet', 'test_card')),
    ADD COLUMN transaction_id bigint REFERENCES ledger_transactions (id),
    ADD COLUMN customer_account_id bigint REFERENCES accounts (id),
    ADD COLUMN card_brand text CHECK (char_length(card_brand) <= 20),
    ADD COLUMN card_last4 text CHECK (card_last4 ~ '^[0-9]{4}$'),
    ADD COLUMN failure_reason text CHECK (char_length(failure_reason) <= 200),
    ADD COLUMN closed_at timestamptz,
    ADD CONSTRAINT paid_has_payment CHECK (status <> 'paid' OR
        (paid_at IS NOT NULL AND transaction_id IS NOT NULL AND payment_method IS NOT NULL));
-- Exactly one payment per session, whatever happens above.
CREATE UNIQUE INDEX payment_sessions_one_payment ON payment_sessions (transaction_id)
    WHERE transaction_id IS NOT NULL;

-- A fresh account number: two letters, nine random digits, a Luhn check digit.
CREATE FUNCTION mp_new_account_number(p_prefix text) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_digits text := lpad((floor(random() * 1000000000))::bigint::text, 9, '0');
    v_sum int := 0;
    v_d int;
BEGIN
    FOR i IN REVERSE 9..1 LOOP
        v_d := substr(v_digits, i, 1)::int;
        IF (9 - i) % 2 = 0 THEN
            v_d := v_d * 2;
            IF v_d > 9 THEN v_d := v_d - 9; END IF;
        END IF;
        v_sum := v_sum + v_d;
    END LOOP;
    RETURN p_prefix || v_digits || ((10 - v_sum % 10) % 10)::text;
END
$$;

-- The merchant's settlement account in p_currency, made on first use.
CREATE FUNCTION mp_merchant_account(p_merchant bigint, p_currency text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    SELECT id INTO v_id FROM accounts
    WHERE merchant_id = p_merchant AND currency = p_currency AND kind = 'merchant';
    IF v_id IS NULL THEN
        INSERT INTO accounts (account_number, kind, merchant_id, currency)
        VALUES (mp_new_account_number('ME'), 'merchant', p_merchant, p_currency)
        ON CONFLICT DO NOTHING RETURNING id INTO v_id;
        IF v_id IS NULL THEN
            SELECT id INTO v_id FROM accounts
            WHERE merchant_id = p_merchant AND currency = p_currency AND kind = 'merchant';
        END IF;
    END IF;
    RETURN v_id;
END
$$;

-- The funding (system) account of a currency: deposits and sandbox test cards draw on it.
CREATE FUNCTION mp_funding_account(p_currency text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    SELECT id INTO v_id FROM accounts WHERE kind = 'system' AND currency = p_currency;
    IF v_id IS NULL THEN
        INSERT INTO accounts (account_number, kind, currency, name)
        VALUES (mp_new_account_number('SY'), 'system', p_currency, 'funding ' || p_currency)
        ON CONFLICT DO NOTHING RETURNING id INTO v_id;
        IF v_id IS NULL THEN
            SELECT id INTO v_id FROM accounts WHERE kind = 'system' AND currency = p_currency;
        END IF;
    END IF;
    RETURN v_id;
END
$$;

-- Ends an open session without payment: 'failed' (declined) or 'canceled'. Returns the
-- status the session has afterwards (unchanged when it was no longer open).
CREATE FUNCTION mp_close_session(p_session uuid, p_status text, p_reason text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_s payment_sessions%ROWTYPE;
BEGIN
    SELECT * INTO v_s FROM payment_sessions WHERE id = p_session FOR UPDATE;
    IF NOT FOUND THEN RETURN NULL; END IF;
    IF v_s.status = 'open' AND v_s.expires_at <= now() THEN
        UPDATE payment_sessions SET status = 'expired', closed_at = now() WHERE id = p_session;
        RETURN 'expired';
    END IF;
    IF v_s.status <> 'open' THEN RETURN v_s.status; END IF;
    UPDATE payment_sessions SET status = p_status, failure_reason = p_reason, closed_at = now()
    WHERE id = p_session;
    RETURN p_status;
END
$$;

-- Pays an open session in one transaction: locks the session (two submits at once: the
-- second waits here and then finds it paid), posts the ledger transaction from p_source
-- (the customer's account; NULL = the funding account, for sandbox test cards) to the
-- merchant's account, marks the session paid and queues the payment.succeeded webhook.
-- Returns (outcome, transaction id): outcome is 'paid' when this call paid it; when the
-- session was no longer open, 'already_paid', 'failed', 'canceled' or 'expired';
-- 'insufficient_funds' (the session is then failed). Other ledger refusals raise mp_post's
-- SQLSTATEs and change nothing.
CREATE FUNCTION mp_pay_session(p_session uuid, p_method text, p_source bigint,
                               p_card_brand text, p_card_last4 text, p_livemode boolean,
                               OUT outcome text, OUT transaction_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
    v_s payment_sessions%ROWTYPE;
    v_merchant_account bigint;
    v_source bigint := p_source;
    v_event text;
BEGIN
    SELECT * INTO v_s FROM payment_sessions WHERE id = p_session FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'not_found';
        RETURN;
    END IF;
    IF v_s.status = 'open' AND v_s.expires_at <= now() THEN
        UPDATE payment_sessions SET status = 'expired', closed_at = now() WHERE id = p_session;
        outcome := 'expired';
        RETURN;
    END IF;
    IF v_s.status <> 'open' THEN
        outcome := CASE v_s.status WHEN 'paid' THEN 'already_paid' ELSE v_s.status END;
        transaction_id := v_s.transaction_id;
        RETURN;
    END IF;
    v_merchant_account := mp_merchant_account(v_s.merchant_id, v_s.currency);
    IF v_source IS NULL THEN
        v_source := mp_funding_account(v_s.currency);
    END IF;
    BEGIN
        transaction_id := mp_post('payment', v_s.merchant_id, 'session ' || p_session,
            v_s.currency, ARRAY[v_source, v_merchant_account], ARRAY[-v_s.amount, v_s.amount]);
    EXCEPTION WHEN SQLSTATE 'MP003' THEN
        UPDATE payment_sessions SET status = 'failed', failure_reason = 'insufficient funds',
            closed_at = now(), payment_method = p_method, customer_account_id = p_source
        WHERE id = p_session;
        outcome := 'insufficient_funds';
        RETURN;
    END;
    UPDATE payment_sessions SET status = 'paid', paid_at = now(), closed_at = now(),
        payment_method = p_method, transaction_id = mp_pay_session.transaction_id,
        customer_account_id = p_source, card_brand = p_card_brand, card_last4 = p_card_last4
    WHERE id = p_session;
    v_event := 'evt_' || replace(gen_random_uuid()::text, '-', '');
    INSERT INTO webhook_events (id, merchant_id, type, body)
    SELECT v_event, v_s.merchant_id, 'payment.succeeded', json_build_object(
        'id', v_event,
        'type', 'payment.succeeded',
        'created_at', mp_iso(now()),
        'livemode', p_livemode,
        'data', json_build_object(
            'session_id', p_session,
            'transaction_id', mp_pay_session.transaction_id::text,
            'user_id', v_s.user_id,
            'email', v_s.email,
            'amount', mp_money_text(v_s.amount),
            'currency', v_s.currency,
            'items', (SELECT json_agg(json_build_object('id', i.item_id, 'name', i.name,
                          'price', mp_money_text(i.price)) ORDER BY i.position)
                      FROM session_items i WHERE i.session_id = p_session),
            'paid_at', mp_iso(now()),
            'payment_method', p_method))::text;
    outcome := 'paid';
END
$$;

-- A wrong wallet PIN: the count, and the lock after p_max in a row (a lock that has run out
-- starts the count afresh). The caller holds the account's row lock (FOR UPDATE) from
-- reading the digest to here, so parallel guesses are counted one after another.
CREATE FUNCTION mp_pin_failed(p_account bigint, p_max int, p_lock_seconds int)
RETURNS void
LANGUAGE sql AS $$
    UPDATE accounts SET (pin_failures, pin_locked_until) =
        (SELECT c.n, CASE WHEN c.n >= p_max THEN now() + make_interval(secs => p_lock_seconds) END
         FROM (SELECT CASE WHEN pin_locked_until IS NOT NULL THEN 1
                           ELSE pin_failures + 1 END AS n) c)
    WHERE id = p_account;
$$;

CREATE FUNCTION mp_pin_ok(p_account bigint) RETURNS void
LANGUAGE sql AS $$
    UPDATE accounts SET pin_failures = 0, pin_locked_until = NULL
    WHERE id = p_account AND (pin_failures <> 0 OR pin_locked_until IS NOT NULL);
$$;
