-- Every lifecycle event: beside payment.succeeded, refund.succeeded and transfer.reversed,
--   payment.failed      a test card declined, or a wallet short of the amount (the reason)
--   session.canceled    the customer canceled on the checkout page
--   session.expired     an open session expired: past expires_at (stored by the sweeper of
--                       marketpay-webhookd, or by whoever next touches the session), or
--                       at once through the expire endpoint
--   transfer.succeeded  one per send-money-MultiVendor request, listing its transfers
-- Each is queued through mp_queue_event in the transaction of the change it reports, and
-- only when the merchant subscribes to its type (merchants.webhook_event_types, NULL: all):
-- an event of another type is not queued, not recorded, never sent.
-- A session becomes expired in one place only, mp_session_expire, under its row lock and
-- only from open: its session.expired event goes out exactly once, and a session paid at
-- the last second (its row locked by the payment) is never also expired.

-- The event types, the one list of the database (src/event_type.c is the C one; the
-- check_events suite compares them).
CREATE FUNCTION mp_event_types() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY['payment.succeeded', 'payment.failed', 'session.canceled', 'session.expired',
             'refund.succeeded', 'transfer.succeeded', 'transfer.reversed'];

ALTER TABLE merchants ADD COLUMN webhook_event_types text[]
    CONSTRAINT webhook_event_types_known
    CHECK (cardinality(webhook_event_types) > 0 AND webhook_event_types <@ mp_event_types());
COMMENT ON COLUMN merchants.webhook_event_types IS 'The event types queued for the merchant (marketpayctl merchant webhook --events); NULL: every type. Events of other types are not queued at all';

-- Sweeping finds open sessions by expiry without reading the closed ones.
CREATE INDEX payment_sessions_open_expiry ON payment_sessions (expires_at)
    WHERE status = 'open';

-- Queues one webhook event of the merchant, committed with the change it reports, when the
-- merchant subscribes to its type; returns its id, or NULL when it was not queued. An
-- unknown type is a bug of ours: it raises.
CREATE OR REPLACE FUNCTION mp_queue_event(p_merchant bigint, p_type text, p_data json)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_event text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
BEGIN
    IF p_type IS NULL OR p_type <> ALL (mp_event_types()) THEN
        RAISE EXCEPTION 'mp_queue_event: unknown event type %', p_type
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM 1 FROM merchants m WHERE m.id = p_merchant
        AND (m.webhook_event_types IS NULL OR p_type = ANY (m.webhook_event_types));
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    INSERT INTO webhook_events (id, merchant_id, type, body)
    VALUES (v_event, p_merchant, p_type, json_build_object(
        'id', v_event,
        'type', p_type,
        'created_at', mp_iso(now()),
        'livemode', mp_environment() = 'production',
        'data', p_data)::text);
    RETURN v_event;
END
$$;

-- A session's items as the events show them: id, name, price as text, in request order.
CREATE FUNCTION mp_session_items_json(p_session uuid) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE
RETURN (SELECT json_agg(json_build_object('id', i.item_id, 'name', i.name,
                                          'price', mp_money_text(i.price)) ORDER BY i.position)
        FROM session_items i WHERE i.session_id = p_session);

-- Queues p_type (payment.failed, session.canceled, session.expired) about the session as it
-- is stored now: what the merchant made it with, its status and how it ended.
CREATE FUNCTION mp_session_event(p_session uuid, p_type text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    s payment_sessions%ROWTYPE;
BEGIN
    SELECT * INTO STRICT s FROM payment_sessions WHERE id = p_session;
    RETURN mp_queue_event(s.merchant_id, p_type, json_build_object(
        'session_id', s.id,
        'user_id', s.user_id,
        'email', s.email,
        'amount', mp_money_text(s.amount),
        'currency', s.currency,
        'items', mp_session_items_json(s.id),
        'status', s.status,
        'reason', s.failure_reason,
        'payment_method', s.payment_method,
        'expires_at', mp_iso(s.expires_at),
        'closed_at', mp_iso(s.closed_at)));
END
$$;

-- Expires the session p_session if it is open (the caller holds its row lock) and queues
-- its session.expired event. closed_at is when it expired: its expires_at when that has
-- passed, else now. True when this call expired it.
CREATE FUNCTION mp_session_expire(p_session uuid) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE payment_sessions SET status = 'expired', closed_at = least(now(), expires_at)
    WHERE id = p_session AND status = 'open';
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM mp_session_event(p_session, 'session.expired');
    RETURN true;
END
$$;

-- As in 009, with the expiry stored (and its event queued) by mp_session_expire.
CREATE OR REPLACE FUNCTION mp_session_lock(p_session uuid) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    s payment_sessions%ROWTYPE;
BEGIN
    SELECT * INTO s FROM payment_sessions WHERE id = p_session FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    ELSIF s.status = 'open' AND mp_session_status(s.status, s.expires_at) = 'expired' THEN
        PERFORM mp_session_expire(p_session);
        RETURN 'expired';
    END IF;
    RETURN CASE WHEN s.status = 'open' THEN NULL
                WHEN s.status IN ('paid', 'refunded') THEN 'already_paid'
                ELSE s.status END;
END
$$;

-- As in 008, queueing payment.failed ('failed') or session.canceled ('canceled').
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
    PERFORM mp_session_event(p_session, CASE p_status WHEN 'failed' THEN 'payment.failed'
                                                      WHEN 'canceled' THEN 'session.canceled'
                                                      END);
    RETURN p_status;
END
$$;

-- As in 008, through mp_queue_event, and a wallet short of the amount queues payment.failed.
CREATE OR REPLACE FUNCTION mp_pay_session(p_session uuid, p_method text, p_source bigint,
                                          p_card_brand text, p_card_last4 text,
                                          OUT outcome text, OUT transaction_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
    v_s payment_sessions%ROWTYPE;
    v_source bigint := p_source;
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
            PERFORM mp_session_event(p_session, 'payment.failed');
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
    PERFORM mp_queue_event(v_s.merchant_id, 'payment.succeeded', json_build_object(
        'session_id', p_session,
        'transaction_id', mp_pay_session.transaction_id::text,
        'user_id', v_s.user_id,
        'email', v_s.email,
        'amount', mp_money_text(v_s.amount),
        'currency', v_s.currency,
        'items', mp_session_items_json(p_session),
        'paid_at', mp_iso(now()),
        'payment_method', p_method));
    outcome := 'paid';
END
$$;

-- As in 008; a declined card is recorded on the failed session (method, brand, last four)
-- as a wallet short of the amount records its wallet, and its payment.failed says so.
CREATE OR REPLACE FUNCTION mp_pay_test_card(p_session uuid, p_card_brand text,
                                            p_card_last4 text, p_decline text,
                                            OUT outcome text, OUT transaction_id bigint)
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
        UPDATE payment_sessions SET payment_method = 'test_card', card_brand = p_card_brand,
            card_last4 = p_card_last4
        WHERE id = p_session;
        outcome := mp_close_session(p_session, 'failed', p_decline);
        RETURN;
    END IF;
    SELECT p.outcome, p.transaction_id INTO outcome, transaction_id
    FROM mp_pay_session(p_session, 'test_card', NULL, p_card_brand, p_card_last4) p;
END
$$;

-- One PIN attempt against the PIN stored in row p_id of p_table (accounts or merchants),
-- whose PIN columns the caller has read under the row's lock: mp_pin_judge's verdict,
-- written back when it changes anything, and a hard lock logged (p_who names the PIN).
CREATE FUNCTION mp_pin_attempt(p_table text, p_id bigint, p_who text, p_stored bytea,
                               p_scheme smallint, p_failures int, p_locks int,
                               p_locked_until timestamptz, p_digest bytea, p_legacy bytea)
RETURNS mp_pin_verdict
LANGUAGE plpgsql AS $$
DECLARE
    v mp_pin_verdict := mp_pin_judge(p_stored, p_scheme, p_failures, p_locks, p_locked_until,
                                     p_digest, p_legacy);
BEGIN
    IF p_table NOT IN ('accounts', 'merchants') THEN
        RAISE EXCEPTION 'mp_pin_attempt: % holds no PIN', p_table
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (v.failures, v.locks, v.locked_until, v.digest, v.scheme) IS DISTINCT FROM
       (p_failures, p_locks, p_locked_until, p_stored, p_scheme) THEN
        EXECUTE format('UPDATE %I SET pin_failures = $1, pin_locks = $2, pin_locked_until = $3,'
                       ' pin_digest = $4, pin_scheme = $5 WHERE id = $6', p_table)
        USING v.failures, v.locks, v.locked_until, v.digest, v.scheme, p_id;
    END IF;
    IF v.outcome = 'wrong' AND v.locked_until = 'infinity' THEN
        RAISE LOG 'marketpay: % locked until the operator unlocks it', p_who;
    END IF;
    RETURN v;
END
$$;

-- As in 008, the PIN attempt through mp_pin_attempt.
CREATE OR REPLACE FUNCTION mp_pay_wallet(p_session uuid, p_account text, p_digest bytea,
                                         p_legacy bytea, OUT outcome text,
                                         OUT transaction_id bigint, OUT locked_until timestamptz)
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
    v := mp_pin_attempt('accounts', a.id, 'PIN of account ' || a.account_number, a.pin_digest,
                        a.pin_scheme, a.pin_failures, a.pin_locks, a.pin_locked_until,
                        p_digest, p_legacy);
    locked_until := v.locked_until;
    IF v.outcome <> 'ok' THEN
        outcome := CASE v.outcome WHEN 'locked' THEN 'locked' ELSE 'wrong_pin' END;
        RETURN;
    END IF;
    SELECT p.outcome, p.transaction_id INTO outcome, transaction_id
    FROM mp_pay_session(p_session, 'wallet', a.id, NULL, NULL) p;
END
$$;

-- The transfer.succeeded event of the send-money-MultiVendor request posted as ledger
-- transaction p_tx: its transfers in request order, with their vendors' account numbers.
CREATE FUNCTION mp_transfer_event(p_tx bigint) RETURNS text
LANGUAGE sql AS $$
    SELECT mp_queue_event(min(t.merchant_id), 'transfer.succeeded', json_build_object(
        'transaction_id', p_tx::text,
        'amount', mp_money_text(sum(t.amount)::bigint),
        'currency', min(a.currency),
        'transfers', json_agg(json_build_object(
            'id', t.id,
            'account_number', a.account_number,
            'amount', mp_money_text(t.amount),
            'created_at', mp_iso(t.created_at)) ORDER BY t.position)))
    FROM transfers t JOIN accounts a ON a.id = t.vendor_account_id
    WHERE t.ledger_transaction_id = p_tx;
$$;

-- As in 008, the PIN attempt through mp_pin_attempt and a transfer.succeeded event queued
-- with the transfers.
CREATE OR REPLACE FUNCTION mp_transfer_send(p_merchant bigint, p_digest bytea, p_legacy bytea,
                                            p_issued_at bigint, p_nonce text,
                                            p_accounts text[], p_amounts bigint[],
                                            p_timezone text)
RETURNS TABLE (outcome text, detail text, message text, locked_until timestamptz,
               transfer_id text, amount bigint, transaction_date text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    m merchants%ROWTYPE;
    s mp_settings%ROWTYPE;
    v mp_pin_verdict;
    t record;
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
    v := mp_pin_attempt('merchants', m.id, 'transfer PIN of merchant ' || m.id, m.pin_digest,
                        m.pin_scheme, m.pin_failures, m.pin_locks, m.pin_locked_until,
                        p_digest, p_legacy);
    IF v.outcome <> 'ok' THEN
        RETURN QUERY SELECT 'wrong_pin', NULL, NULL,
            CASE WHEN v.outcome = 'wrong' THEN v.locked_until END, NULL, NULL::bigint, NULL;
        RETURN;
    END IF;
    -- The PIN was right: its counters and the nonce stay recorded whatever follows.
    BEGIN
        FOR t IN SELECT * FROM mp_transfer(p_merchant, m.currency, p_accounts, p_amounts,
                                           p_timezone) LOOP
            outcome := 'ok';
            transfer_id := t.transfer_id;
            amount := t.amount;
            transaction_date := t.transaction_date;
            RETURN NEXT;
        END LOOP;
        PERFORM mp_transfer_event(x.ledger_transaction_id) FROM transfers x
        WHERE x.id = transfer_id;
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

-- The sweeper of marketpay-webhookd (every expire_interval seconds): expires at most
-- p_limit (1 to 1000) open sessions past their expiry, oldest first, each with its
-- session.expired event, in the caller's one transaction. A session whose row another
-- transaction holds (a payment under way) is skipped, not waited for: the payment decides
-- it, and a later sweep finds it again if it is still open. Returns how many it expired.
CREATE FUNCTION mp_expire_sessions(p_limit int) RETURNS int
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_id uuid;
    n int := 0;
BEGIN
    FOR v_id IN
        SELECT id FROM payment_sessions
        WHERE status = 'open' AND expires_at <= now()
        ORDER BY expires_at LIMIT greatest(least(p_limit, 1000), 1)
        FOR UPDATE SKIP LOCKED
    LOOP
        IF mp_session_expire(v_id) THEN
            n := n + 1;
        END IF;
    END LOOP;
    RETURN n;
END
$$;

-- Intent: the calling merchant expires its open session p_session at once (the expire
-- endpoint); no money moves. Returns 'expired'. Refusals raise and change nothing: MP030 no
-- such session of this merchant, MP038 not open (its status as the API shows it).
CREATE FUNCTION mp_expire_session(p_merchant bigint, p_session uuid) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    s payment_sessions%ROWTYPE;
BEGIN
    SELECT * INTO s FROM payment_sessions
    WHERE id = p_session AND merchant_id = p_merchant FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'payment session not found' USING ERRCODE = 'MP030';
    END IF;
    IF mp_session_status(s.status, s.expires_at) <> 'open' THEN
        RAISE EXCEPTION 'the payment session is %, not open: only an open session can be expired',
            mp_session_status(s.status, s.expires_at) USING ERRCODE = 'MP038';
    END IF;
    PERFORM mp_session_expire(p_session);
    RETURN 'expired';
END
$$;

-- Privileges: the workers call the expire intent, the delivery daemon the sweeper; nothing
-- else of this file is anyone's but the owner's.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_expire_session(bigint, uuid) TO marketpay_app;
GRANT EXECUTE ON FUNCTION mp_expire_sessions(int) TO marketpay_webhookd;
