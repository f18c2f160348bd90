-- Money moves only through functions that carry one business intent and check it themselves.
-- The workers' role (marketpay_app) may EXECUTE exactly these SECURITY DEFINER functions:
--   mp_pay_wallet       pay this open session from this customer wallet, its PIN checked here
--   mp_pay_test_card    pay (or decline) this open session with a sandbox test card
--   mp_cancel_session   the customer cancels this open session
--   mp_transfer_send    from the calling merchant's own account to vendor accounts, its PIN
--                       checked here
--   mp_purge_idempotency (sql/007)
-- It may no longer call mp_post, touch system accounts, write session status or payment
-- columns, insert webhook events or transfers, write PIN counters or read PIN digests.
-- The environment (sandbox or production) and the PIN policy live in mp_settings, written by
-- the operator (marketpayctl db migrate): a worker's own configuration cannot loosen them.

CREATE TABLE mp_settings (
    id               boolean PRIMARY KEY DEFAULT true CHECK (id),
    environment      text NOT NULL CHECK (environment IN ('sandbox', 'production')),
    pin_max_attempts int NOT NULL DEFAULT 5 CHECK (pin_max_attempts BETWEEN 1 AND 100),
    pin_lock_seconds int NOT NULL DEFAULT 900 CHECK (pin_lock_seconds BETWEEN 1 AND 86400),
    pin_max_locks    int NOT NULL DEFAULT 3 CHECK (pin_max_locks BETWEEN 0 AND 100),
    pin_max_age      int NOT NULL DEFAULT 300 CHECK (pin_max_age BETWEEN 10 AND 3600)
);
COMMENT ON TABLE mp_settings IS 'One row: the environment this database serves and the PIN policy; set by marketpayctl db migrate from its configuration';

-- The environment; raises when marketpayctl db migrate has not recorded one yet.
CREATE FUNCTION mp_environment() RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v text;
BEGIN
    SELECT environment INTO v FROM mp_settings;
    IF v IS NULL THEN
        RAISE EXCEPTION 'no environment recorded: run marketpayctl db migrate'
            USING ERRCODE = 'MP020';
    END IF;
    RETURN v;
END
$$;

-- Account numbers from the server's cryptographic random source (gen_random_uuid draws on
-- it): 48 random bits of a version 4 UUID, reduced to nine digits, and a Luhn check digit.
CREATE OR REPLACE FUNCTION mp_new_account_number(p_prefix text) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_digits text := lpad((('x' || substr(gen_random_uuid()::text, 1, 8)
                            || substr(gen_random_uuid()::text, 10, 4))::bit(48)::bigint
                           % 1000000000)::text, 9, '0');
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

-- PINs: per-owner digests, escalating locks. pin_scheme 1 is the old digest (HMAC of the PIN
-- alone, equal for equal PINs), 2 the HMAC over the owner's identity and the PIN; a scheme 1
-- digest is replaced on the next right PIN. pin_locks counts the locks since the last right
-- PIN; pin_locked_until 'infinity' is the hard lock only the operator lifts.
ALTER TABLE accounts
    ADD COLUMN pin_scheme smallint NOT NULL DEFAULT 2 CHECK (pin_scheme IN (1, 2)),
    ADD COLUMN pin_locks int NOT NULL DEFAULT 0 CHECK (pin_locks >= 0);
ALTER TABLE merchants
    ADD COLUMN pin_scheme smallint NOT NULL DEFAULT 2 CHECK (pin_scheme IN (1, 2)),
    ADD COLUMN pin_locks int NOT NULL DEFAULT 0 CHECK (pin_locks >= 0);
UPDATE accounts SET pin_scheme = 1 WHERE pin_digest IS NOT NULL;
UPDATE merchants SET pin_scheme = 1 WHERE pin_digest IS NOT NULL;

-- What one PIN attempt comes to, and the PIN state to write back. outcome: 'no_pin' (none
-- set), 'locked' (refused unchecked, state unchanged), 'ok' (counters cleared, the digest in
-- the current scheme), 'wrong' (counted; locked_until set when this attempt locked it).
-- Digests are HMACs under a pepper the database never sees, so comparing them with = leaks
-- nothing an attacker could steer.
CREATE TYPE mp_pin_verdict AS (outcome text, failures int, locks int, locked_until timestamptz,
                               digest bytea, scheme smallint);

CREATE FUNCTION mp_pin_judge(p_stored bytea, p_scheme smallint, p_failures int, p_locks int,
                             p_locked_until timestamptz, p_digest bytea, p_legacy bytea)
RETURNS mp_pin_verdict
LANGUAGE plpgsql AS $$
DECLARE
    s mp_settings%ROWTYPE;
    v mp_pin_verdict := ROW(NULL, p_failures, p_locks, p_locked_until, p_stored, p_scheme);
BEGIN
    IF p_stored IS NULL THEN
        v.outcome := 'no_pin';
    ELSIF p_locked_until > now() THEN
        v.outcome := 'locked';
    ELSIF (p_scheme = 2 AND p_stored = p_digest) OR (p_scheme = 1 AND p_stored = p_legacy) THEN
        v := ROW('ok', 0, 0, NULL, p_digest, 2);
    ELSE
        SELECT * INTO STRICT s FROM mp_settings;
        v.outcome := 'wrong';
        -- A lock that has run out starts the count afresh; the lock count goes on.
        v.failures := CASE WHEN p_locked_until IS NOT NULL THEN 1 ELSE p_failures + 1 END;
        v.locked_until := NULL;
        IF v.failures >= s.pin_max_attempts THEN
            v.locks := p_locks + 1;
            v.locked_until := CASE WHEN v.locks > s.pin_max_locks THEN 'infinity'
                ELSE now() + make_interval(secs => least(s.pin_lock_seconds
                                                         * power(4, v.locks - 1), 2592000))
                END;
        END IF;
    END IF;
    RETURN v;
END
$$;

-- Locks the session row and says whether it can still be paid or closed: NULL when it is
-- open; else 'not_found', 'expired' (marked so now if its time ran out), 'already_paid',
-- 'failed' or 'canceled'. The one place the expiry rule is applied to a stored session.
CREATE FUNCTION mp_session_lock(p_session uuid) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_status text;
    v_expires timestamptz;
BEGIN
    SELECT status, expires_at INTO v_status, v_expires
    FROM payment_sessions WHERE id = p_session FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    IF mp_session_status(v_status, v_expires) = 'expired' AND v_status = 'open' THEN
        UPDATE payment_sessions SET status = 'expired', closed_at = now() WHERE id = p_session;
        RETURN 'expired';
    END IF;
    RETURN CASE v_status WHEN 'open' THEN NULL WHEN 'paid' THEN 'already_paid'
                ELSE v_status END;
END
$$;

CREATE OR REPLACE FUNCTION mp_close_session(p_session uuid, p_status text, p_reason text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_closed text := mp_session_lock(p_session);
BEGIN
    IF v_closed IS NOT NULL THEN
        RETURN CASE v_closed WHEN 'already_paid' THEN 'paid' WHEN 'not_found' THEN NULL
                    ELSE v_closed END;
    END IF;
    UPDATE payment_sessions SET status = p_status, failure_reason = p_reason, closed_at = now()
    WHERE id = p_session;
    RETURN p_status;
END
$$;

-- The payment itself, for the intent functions below (which have checked the payer): the
-- session (already locked by mp_session_lock) is debited from p_source (NULL = the funding
-- account) to the merchant, marked paid, and its payment.succeeded event queued. outcome:
-- 'paid'; 'insufficient_funds' (the session is then failed); 'account_unusable' or
-- 'currency_mismatch' (nothing changed, the session stays open).
DROP FUNCTION mp_pay_session(uuid, text, bigint, text, text, boolean);
CREATE FUNCTION mp_pay_session(p_session uuid, p_method text, p_source bigint,
                               p_card_brand text, p_card_last4 text,
                               OUT outcome text, OUT transaction_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
    v_s payment_sessions%ROWTYPE;
    v_source bigint := p_source;
    v_event text;
BEGIN
    SELECT * INTO STRICT v_s FROM payment_sessions WHERE id = p_session;
    IF v_source IS NULL THEN
        v_source := mp_funding_account(v_s.currency);
    END IF;
    BEGIN
        transaction_id := mp_post('payment', v_s.merchant_id, 'session ' || p_session,
            v_s.currency, ARRAY[v_source, mp_merchant_account(v_s.merchant_id, v_s.currency)],
            ARRAY[-v_s.amount, v_s.amount]);
    EXCEPTION
        WHEN SQLSTATE 'MP003' THEN
            UPDATE payment_sessions SET status = 'failed', failure_reason = 'insufficient funds',
                closed_at = now(), payment_method = p_method, customer_account_id = p_source
            WHERE id = p_session;
            outcome := 'insufficient_funds';
            RETURN;
        WHEN SQLSTATE 'MP001' THEN
            outcome := 'account_unusable';
            RETURN;
        WHEN SQLSTATE 'MP002' THEN
            outcome := 'currency_mismatch';
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
        'livemode', mp_environment() = 'production',
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

-- Intent: pay the open session p_session from the customer wallet p_account, unlocked by
-- its PIN. p_digest is the PIN's digest for this account (scheme 2), p_legacy its scheme 1
-- digest (for accounts whose PIN predates scheme 2). The attempt is counted here and
-- committed whatever the outcome. outcome: mp_session_lock's when the session is not open;
-- 'wrong_pin' (also for an unknown account, not a customer's, or without a PIN), 'locked'
-- (locked_until says until when; 'infinity' until the operator lifts it), or mp_pay_session's.
-- locked_until is also set with 'wrong_pin' when this attempt locked the PIN.
CREATE FUNCTION mp_pay_wallet(p_session uuid, p_account text, p_digest bytea, p_legacy bytea,
                              OUT outcome text, OUT transaction_id bigint,
                              OUT locked_until timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    a accounts%ROWTYPE;
    v mp_pin_verdict;
BEGIN
    outcome := mp_session_lock(p_session);
    IF outcome IS NOT NULL THEN
        RETURN;
    END IF;
    SELECT * INTO a FROM accounts WHERE account_number = p_account FOR UPDATE;
    IF NOT FOUND OR a.kind <> 'customer' THEN
        outcome := 'wrong_pin';
        RETURN;
    END IF;
    v := mp_pin_judge(a.pin_digest, a.pin_scheme, a.pin_failures, a.pin_locks,
                      a.pin_locked_until, p_digest, p_legacy);
    locked_until := v.locked_until;
    IF v.outcome IN ('no_pin', 'locked') THEN
        outcome := CASE v.outcome WHEN 'locked' THEN 'locked' ELSE 'wrong_pin' END;
        RETURN;
    END IF;
    IF (v.failures, v.locks, v.locked_until, v.digest, v.scheme) IS DISTINCT FROM
       (a.pin_failures, a.pin_locks, a.pin_locked_until, a.pin_digest, a.pin_scheme) THEN
        UPDATE accounts SET pin_failures = v.failures, pin_locks = v.locks,
            pin_locked_until = v.locked_until, pin_digest = v.digest, pin_scheme = v.scheme
        WHERE id = a.id;
    END IF;
    IF v.outcome = 'wrong' THEN
        IF v.locked_until = 'infinity' THEN
            RAISE LOG 'marketpay: PIN of account % locked until the operator unlocks it',
                a.account_number;
        END IF;
        outcome := 'wrong_pin';
        RETURN;
    END IF;
    SELECT p.outcome, p.transaction_id INTO outcome, transaction_id
    FROM mp_pay_session(p_session, 'wallet', a.id, NULL, NULL) p;
END
$$;

-- Intent: the sandbox test card ending p_last4 pays the open session p_session from the
-- funding account, or (p_decline set) declines it. Refused with MP021 unless this database
-- serves the sandbox. outcome: mp_session_lock's, mp_pay_session's, or 'failed' (declined).
CREATE FUNCTION mp_pay_test_card(p_session uuid, p_card_brand text, p_card_last4 text,
                                 p_decline text, OUT outcome text, OUT transaction_id bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF mp_environment() <> 'sandbox' THEN
        RAISE EXCEPTION 'test cards pay only sandbox sessions' USING ERRCODE = 'MP021';
    END IF;
    outcome := mp_session_lock(p_session);
    IF outcome IS NOT NULL THEN
        RETURN;
    END IF;
    IF p_decline IS NOT NULL THEN
        outcome := mp_close_session(p_session, 'failed', p_decline);
        RETURN;
    END IF;
    SELECT p.outcome, p.transaction_id INTO outcome, transaction_id
    FROM mp_pay_session(p_session, 'test_card', NULL, p_card_brand, p_card_last4) p;
END
$$;

-- Intent: the customer cancels the open session. Returns the status it has afterwards.
CREATE FUNCTION mp_cancel_session(p_session uuid) RETURNS text
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp
RETURN mp_close_session(p_session, 'canceled', NULL);

-- One PIN rule now (mp_pin_judge), inside the intent functions.
DROP FUNCTION mp_pin_failed(bigint, int, int), mp_pin_ok(bigint),
    mp_merchant_pin_failed(bigint, int, int);

-- Nonces of encrypted transfer PINs already used: a captured PIN cannot be sent twice.
CREATE TABLE pin_nonces (
    merchant_id bigint NOT NULL REFERENCES merchants (id),
    nonce       text NOT NULL CHECK (nonce ~ '^[A-Za-z0-9_-]{16,64}$'),
    used_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, nonce)
);
CREATE INDEX pin_nonces_used ON pin_nonces (used_at);

-- Intent: transfer from the calling merchant's own settlement account to vendor accounts,
-- unlocked by the merchant's PIN (p_digest scheme 2, p_legacy scheme 1) whose encrypted form
-- carried p_issued_at (Unix seconds) and p_nonce. One row per vendor on success (outcome
-- 'ok'); otherwise one row whose outcome says why, nothing moved, and the PIN attempt and
-- nonce still recorded: 'not_enabled', 'locked' (locked_until), 'pin_stale', 'pin_reused',
-- 'wrong_pin' (locked_until set when this attempt locked it), or the SQLSTATE of a vendor or
-- ledger refusal (MP011-MP015 with the vendor's 0-based position in detail, MP001, MP003)
-- with its message.
CREATE FUNCTION mp_transfer_send(p_merchant bigint, p_digest bytea, p_legacy bytea,
                                 p_issued_at bigint, p_nonce text, p_accounts text[],
                                 p_amounts bigint[], p_timezone text)
RETURNS TABLE (outcome text, detail text, message text, locked_until timestamptz,
               transfer_id text, amount bigint, transaction_date text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    m merchants%ROWTYPE;
    s mp_settings%ROWTYPE;
    v mp_pin_verdict;
    v_state text;
    v_detail text;
BEGIN
    SELECT * INTO STRICT s FROM mp_settings;
    SELECT * INTO m FROM merchants WHERE id = p_merchant FOR UPDATE;
    IF NOT FOUND OR NOT m.settlement_enabled THEN
        RETURN QUERY SELECT 'not_enabled', NULL, NULL, NULL::timestamptz, NULL, NULL::bigint, NULL;
        RETURN;
    END IF;
    IF m.pin_locked_until > now() THEN
        RETURN QUERY SELECT 'locked', NULL, NULL, m.pin_locked_until, NULL, NULL::bigint, NULL;
        RETURN;
    END IF;
    IF p_issued_at IS NULL OR abs(extract(epoch FROM now()) - p_issued_at) > s.pin_max_age THEN
        RETURN QUERY SELECT 'pin_stale', s.pin_max_age::text, NULL, NULL::timestamptz, NULL,
            NULL::bigint, NULL;
        RETURN;
    END IF;
    INSERT INTO pin_nonces (merchant_id, nonce) VALUES (p_merchant, p_nonce)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'pin_reused', NULL, NULL, NULL::timestamptz, NULL, NULL::bigint, NULL;
        RETURN;
    END IF;
    v := mp_pin_judge(m.pin_digest, m.pin_scheme, m.pin_failures, m.pin_locks,
                      m.pin_locked_until, p_digest, p_legacy);
    IF v.outcome = 'no_pin' THEN
        RETURN QUERY SELECT 'wrong_pin', NULL, NULL, NULL::timestamptz, NULL, NULL::bigint, NULL;
        RETURN;
    END IF;
    IF (v.failures, v.locks, v.locked_until, v.digest, v.scheme) IS DISTINCT FROM
       (m.pin_failures, m.pin_locks, m.pin_locked_until, m.pin_digest, m.pin_scheme) THEN
        UPDATE merchants SET pin_failures = v.failures, pin_locks = v.locks,
            pin_locked_until = v.locked_until, pin_digest = v.digest, pin_scheme = v.scheme
        WHERE id = m.id;
    END IF;
    IF v.outcome = 'wrong' THEN
        IF v.locked_until = 'infinity' THEN
            RAISE LOG 'marketpay: transfer PIN of merchant % locked until the operator unlocks it',
                m.id;
        END IF;
        RETURN QUERY SELECT 'wrong_pin', NULL, NULL, v.locked_until, NULL, NULL::bigint, NULL;
        RETURN;
    END IF;
    -- The PIN was right: its counters and the nonce stay recorded whatever follows.
    BEGIN
        RETURN QUERY SELECT 'ok', NULL, NULL, NULL::timestamptz, t.transfer_id, t.amount,
                            t.transaction_date
            FROM mp_transfer(p_merchant, m.currency, p_accounts, p_amounts, p_timezone) t;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_detail = PG_EXCEPTION_DETAIL;
        IF v_state NOT LIKE 'MP0%' THEN
            RAISE;
        END IF;
        RETURN QUERY SELECT v_state, nullif(v_detail, ''), SQLERRM,
            NULL::timestamptz, NULL, NULL::bigint, NULL;
    END;
END
$$;

-- Old nonces go with the daily purge: past pin_max_age they are refused as stale anyway.
CREATE OR REPLACE FUNCTION mp_purge_idempotency(ttl_seconds integer) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    n bigint;
BEGIN
    DELETE FROM idempotency_keys
     WHERE created_at <= now() - make_interval(secs => greatest(ttl_seconds, 60));
    GET DIAGNOSTICS n = ROW_COUNT;
    DELETE FROM pin_nonces WHERE used_at <= now() - interval '1 day';
    RETURN n;
END
$$;

-- Privileges. Functions are no longer executable by PUBLIC, now or when created later by
-- the migrating role; the workers get the read-only helpers their statements use and the
-- intent functions above.
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM marketpay_app, marketpay_webhookd;
GRANT EXECUTE ON FUNCTION mp_iso(timestamptz), mp_money_text(bigint),
    mp_session_status(text, timestamptz), mp_environment(),
    mp_create_session(bigint, bigint, text, text, text, text, text, int, jsonb)
    TO marketpay_app, marketpay_webhookd, marketpay_readonly;
GRANT EXECUTE ON FUNCTION mp_pay_wallet(uuid, text, bytea, bytea),
    mp_pay_test_card(uuid, text, text, text), mp_cancel_session(uuid),
    mp_transfer_send(bigint, bytea, bytea, bigint, text, text[], bigint[], text),
    mp_purge_idempotency(integer)
    TO marketpay_app;

-- Sessions: the workers insert new (open) sessions and their items, and write nothing else.
REVOKE INSERT, UPDATE ON payment_sessions FROM marketpay_app;
GRANT INSERT (id, merchant_id, amount, currency, user_id, email, redirect_success_url,
              redirect_failure_url, expires_at) ON payment_sessions TO marketpay_app;
REVOKE INSERT ON webhook_events, transfers FROM marketpay_app;
-- Accounts and merchants: readable without their PIN columns and webhook secret; no writes.
REVOKE SELECT, UPDATE ON accounts, merchants FROM marketpay_app;
GRANT SELECT (id, account_number, kind, merchant_id, currency, status, balance, version, name,
              created_at) ON accounts TO marketpay_app;
GRANT SELECT (id, name, currency, webhook_url, status, created_at, settlement_enabled)
    ON merchants TO marketpay_app;
GRANT SELECT ON mp_settings TO marketpay_app, marketpay_webhookd, marketpay_readonly;
GRANT SELECT ON pin_nonces TO marketpay_readonly;
