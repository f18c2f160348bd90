-- After the sale: refunds of paid sessions and reversals of transfers.
-- Invariants kept by the database itself, not only by C:
--   * a session's refunds never sum above its amount, a transfer's reversals never above the
--     transfer: each refund (reversal) row adds itself to payment_sessions.amount_refunded
--     (transfers.amount_reversed) in a trigger, under that row's lock, and a CHECK bounds it;
--   * refunds and reversals are append-only, like the ledger;
--   * the workers reach them only through two intent functions, mp_refund_session and
--     mp_reverse_transfer, each one ledger transaction, all or nothing.
-- Lock order (no deadlocks with the payment and transfer functions): the session, the
-- transfers in id order, the customer's wallet, then every account in id order (mp_post).

ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check,
    ADD CONSTRAINT ledger_transactions_kind_check
    CHECK (kind IN ('deposit', 'payment', 'transfer', 'adjustment', 'refund', 'reversal'));

ALTER TABLE payment_sessions DROP CONSTRAINT payment_sessions_status_check,
    ADD CONSTRAINT payment_sessions_status_check
    CHECK (status IN ('open', 'paid', 'failed', 'canceled', 'expired', 'refunded')),
    DROP CONSTRAINT paid_has_payment,
    ADD CONSTRAINT paid_has_payment CHECK (status NOT IN ('paid', 'refunded') OR
        (paid_at IS NOT NULL AND transaction_id IS NOT NULL AND payment_method IS NOT NULL)),
    ADD COLUMN amount_refunded bigint NOT NULL DEFAULT 0,
    ADD CONSTRAINT refunds_within_amount CHECK (amount_refunded BETWEEN 0 AND amount),
    ADD CONSTRAINT refunded_means_all CHECK ((status = 'refunded') = (amount_refunded = amount)),
    ADD CONSTRAINT refunds_only_when_paid CHECK (amount_refunded = 0 OR
        status IN ('paid', 'refunded'));
COMMENT ON COLUMN payment_sessions.amount_refunded IS 'The sum of the session''s refunds, kept by the refunds_count trigger';

ALTER TABLE transfers
    ADD COLUMN amount_reversed bigint NOT NULL DEFAULT 0,
    ADD CONSTRAINT reversals_within_amount CHECK (amount_reversed BETWEEN 0 AND amount);
COMMENT ON COLUMN transfers.amount_reversed IS 'The sum of the transfer''s reversals, kept by the transfer_reversals_count trigger';

CREATE TABLE refunds (
    id                    text PRIMARY KEY CHECK (id ~ '^re_[0-9a-f]{32}$'),
    session_id            uuid NOT NULL REFERENCES payment_sessions (id),
    merchant_id           bigint NOT NULL REFERENCES merchants (id),
    ledger_transaction_id bigint NOT NULL UNIQUE REFERENCES ledger_transactions (id),
    amount                bigint NOT NULL CHECK (amount > 0),
    currency              text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    reason                text CHECK (char_length(reason) <= 500),
    status                text NOT NULL DEFAULT 'succeeded' CHECK (status = 'succeeded'),
    created_at            timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX refunds_session ON refunds (session_id, created_at);
CREATE INDEX refunds_merchant ON refunds (merchant_id, created_at);

CREATE TABLE transfer_reversals (
    id                    text PRIMARY KEY CHECK (id ~ '^trr_[0-9a-f]{32}$'),
    transfer_id           text NOT NULL REFERENCES transfers (id),
    merchant_id           bigint NOT NULL REFERENCES merchants (id),
    refund_id             text REFERENCES refunds (id),
    ledger_transaction_id bigint NOT NULL REFERENCES ledger_transactions (id),
    amount                bigint NOT NULL CHECK (amount > 0),
    currency              text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    reason                text CHECK (char_length(reason) <= 500),
    created_at            timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX transfer_reversals_transfer ON transfer_reversals (transfer_id, created_at);
CREATE INDEX transfer_reversals_merchant ON transfer_reversals (merchant_id, created_at);
CREATE INDEX transfer_reversals_refund ON transfer_reversals (refund_id)
    WHERE refund_id IS NOT NULL;

CREATE TRIGGER refunds_append_only BEFORE UPDATE OR DELETE ON refunds
    FOR EACH ROW EXECUTE FUNCTION mp_refuse_change();
CREATE TRIGGER refunds_no_truncate BEFORE TRUNCATE ON refunds
    FOR EACH STATEMENT EXECUTE FUNCTION mp_refuse_change();
CREATE TRIGGER transfer_reversals_append_only BEFORE UPDATE OR DELETE ON transfer_reversals
    FOR EACH ROW EXECUTE FUNCTION mp_refuse_change();
CREATE TRIGGER transfer_reversals_no_truncate BEFORE TRUNCATE ON transfer_reversals
    FOR EACH STATEMENT EXECUTE FUNCTION mp_refuse_change();

-- Each refund adds itself to its session's total under the session's row lock (the UPDATE
-- waits for, then sees, every refund committed before it), so the CHECK bounds the sum of
-- all of them whoever inserts the row; the last one marks the session refunded.
CREATE FUNCTION mp_refund_count() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    UPDATE payment_sessions
    SET amount_refunded = amount_refunded + NEW.amount,
        status = CASE WHEN amount_refunded + NEW.amount = amount THEN 'refunded' ELSE status END
    WHERE id = NEW.session_id AND merchant_id = NEW.merchant_id AND currency = NEW.currency
      AND status IN ('paid', 'refunded');
    IF NOT FOUND THEN
        RAISE EXCEPTION 'refund % does not match a paid session of its merchant', NEW.id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER refunds_count AFTER INSERT ON refunds
    FOR EACH ROW EXECUTE FUNCTION mp_refund_count();

CREATE FUNCTION mp_reversal_count() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    UPDATE transfers SET amount_reversed = amount_reversed + NEW.amount
    WHERE id = NEW.transfer_id AND merchant_id = NEW.merchant_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'reversal % does not match a transfer of its merchant', NEW.id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER transfer_reversals_count AFTER INSERT ON transfer_reversals
    FOR EACH ROW EXECUTE FUNCTION mp_reversal_count();

-- The API's objects, built once here for the replies and the webhooks alike.
CREATE FUNCTION mp_reversal_json(v transfer_reversals) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE
RETURN json_build_object(
    'id', v.id,
    'transfer_id', v.transfer_id,
    'amount', mp_money_text(v.amount),
    'currency', v.currency,
    'reason', v.reason,
    'refund_id', v.refund_id,
    'created_at', mp_iso(v.created_at));

CREATE FUNCTION mp_refund_json(r refunds) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE
RETURN json_build_object(
    'id', r.id,
    'session_id', r.session_id,
    'amount', mp_money_text(r.amount),
    'currency', r.currency,
    'status', r.status,
    'reason', r.reason,
    'created_at', mp_iso(r.created_at),
    'reversals', (SELECT coalesce(json_agg(mp_reversal_json(v) ORDER BY v.created_at, v.id),
                                   '[]')
                  FROM transfer_reversals v WHERE v.refund_id = r.id));

-- Queues one webhook event of the merchant, committed with the change it reports.
CREATE FUNCTION mp_queue_event(p_merchant bigint, p_type text, p_data json) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_event text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
BEGIN
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

-- Locks the merchant's transfers p_transfers (in id order) and says what to take back from
-- each: p_amounts[i], or (NULL) all not yet reversed. p_field names the request's fields in
-- the messages: NULL for the reversal endpoint ("amount"), 'reverse_transfers' for a refund
-- ("reverse_transfers[0].amount"). Raises MP030 (an unknown transfer, endpoint), MP035 (one
-- in reverse_transfers), MP036 (more than is left to reverse).
CREATE FUNCTION mp_reversal_plan(p_merchant bigint, p_transfers text[], p_amounts bigint[],
                                 p_field text)
RETURNS TABLE (pos int, transfer_id text, vendor bigint, amount bigint)
LANGUAGE plpgsql AS $$
DECLARE
    t record;
    v_name text;
    v_left bigint;
    v_amount bigint;
BEGIN
    PERFORM 1 FROM transfers x WHERE x.id = ANY (p_transfers) AND x.merchant_id = p_merchant
    ORDER BY x.id FOR UPDATE;
    FOR i IN 1 .. coalesce(cardinality(p_transfers), 0) LOOP
        v_name := CASE WHEN p_field IS NULL THEN '' ELSE format('%s[%s].', p_field, i - 1) END;
        SELECT x.id, x.vendor_account_id, x.amount, x.amount_reversed INTO t
        FROM transfers x WHERE x.id = p_transfers[i] AND x.merchant_id = p_merchant;
        IF NOT FOUND THEN
            IF p_field IS NULL THEN
                RAISE EXCEPTION 'transfer not found' USING ERRCODE = 'MP030';
            END IF;
            RAISE EXCEPTION '%transfer_id: no such transfer', v_name USING ERRCODE = 'MP035';
        END IF;
        v_left := t.amount - t.amount_reversed;
        v_amount := coalesce(p_amounts[i], v_left);
        IF v_left = 0 THEN
            RAISE EXCEPTION '%amount: transfer % is reversed in full; nothing is left to reverse',
                v_name, t.id USING ERRCODE = 'MP036';
        ELSIF v_amount > v_left THEN
            RAISE EXCEPTION '%amount % is above what is left to reverse of transfer % (%)',
                v_name, mp_money_text(v_amount), t.id, mp_money_text(v_left)
                USING ERRCODE = 'MP036';
        END IF;
        pos := i - 1;
        transfer_id := t.id;
        vendor := t.vendor_account_id;
        amount := v_amount;
        RETURN NEXT;
    END LOOP;
END
$$;

-- Locks the accounts of a posting in id order (mp_post's order: p_other is the posting's
-- remaining account, if any) and checks, with messages for the merchant, what mp_post would
-- refuse: MP037 a vendor account short, not active or not in p_currency (for the reversal
-- at its p_plan position), MP033 the merchant's account short or not active. p_merchant_net is what the
-- merchant's account gains (negative: loses); p_what names the money taken.
CREATE FUNCTION mp_reversal_funds(p_merchant_account bigint, p_currency text,
                                  p_merchant_net bigint, p_plan jsonb, p_other bigint,
                                  p_field text, p_what text)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v record;
    m record;
    v_name text;
BEGIN
    PERFORM 1 FROM accounts a
    WHERE a.id IN (p_merchant_account, p_other)
       OR a.id IN (SELECT (e->>'vendor')::bigint FROM jsonb_array_elements(p_plan) e)
    ORDER BY a.id FOR UPDATE;
    FOR v IN
        SELECT (e->>'vendor')::bigint AS vendor, sum((e->>'amount')::bigint)::bigint AS amount,
               min((e->>'pos')::int) AS pos, count(*) AS n, a.status, a.balance, a.currency
        FROM jsonb_array_elements(p_plan) e JOIN accounts a ON a.id = (e->>'vendor')::bigint
        GROUP BY 1, a.status, a.balance, a.currency
    LOOP
        v_name := CASE WHEN p_field IS NULL THEN '' ELSE format('%s[%s].', p_field, v.pos) END;
        IF v.currency <> p_currency THEN
            RAISE EXCEPTION '%transfer_id: the vendor account holds %, not %', v_name,
                v.currency, p_currency USING ERRCODE = 'MP037';
        ELSIF v.status <> 'active' THEN
            RAISE EXCEPTION '%transfer_id: the vendor account is %, and cannot be debited',
                v_name, v.status USING ERRCODE = 'MP037';
        ELSIF v.balance < v.amount AND v.n = 1 THEN
            RAISE EXCEPTION '%amount % is above the vendor account''s available balance',
                v_name, mp_money_text(v.amount) USING ERRCODE = 'MP037';
        ELSIF v.balance < v.amount THEN
            RAISE EXCEPTION '%amount: % reversals from one vendor total %, above its balance',
                v_name, v.n, mp_money_text(v.amount) USING ERRCODE = 'MP037';
        END IF;
    END LOOP;
    SELECT a.balance, a.status INTO STRICT m FROM accounts a WHERE a.id = p_merchant_account;
    IF m.status <> 'active' THEN
        RAISE EXCEPTION 'the merchant''s settlement account is %: no money can move',
            m.status USING ERRCODE = 'MP033';
    ELSIF p_merchant_net < 0 AND m.balance + p_merchant_net < 0 THEN
        RAISE EXCEPTION '%: the merchant''s available balance is %, short by %', p_what,
            mp_money_text(m.balance), mp_money_text(-(m.balance + p_merchant_net))
            USING ERRCODE = 'MP033';
    END IF;
END
$$;

-- Records the reversals of a plan posted as ledger transaction p_tx and queues a
-- transfer.reversed event for each. Returns their ids in plan order.
CREATE FUNCTION mp_reversal_record(p_merchant bigint, p_currency text, p_plan jsonb,
                                   p_tx bigint, p_refund text, p_reason text)
RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    e jsonb;
    v transfer_reversals%ROWTYPE;
    t transfers%ROWTYPE;
    v_ids text[] := '{}';
BEGIN
    FOR e IN SELECT x FROM jsonb_array_elements(p_plan) x ORDER BY (x->>'pos')::int LOOP
        INSERT INTO transfer_reversals (id, transfer_id, merchant_id, refund_id,
                                        ledger_transaction_id, amount, currency, reason)
        VALUES ('trr_' || replace(gen_random_uuid()::text, '-', ''), e->>'transfer_id',
                p_merchant, p_refund, p_tx, (e->>'amount')::bigint, p_currency, p_reason)
        RETURNING * INTO v;
        SELECT * INTO STRICT t FROM transfers WHERE id = v.transfer_id;
        PERFORM mp_queue_event(p_merchant, 'transfer.reversed', json_build_object(
            'reversal', mp_reversal_json(v),
            'transfer_id', t.id,
            'vendor_account_number', (SELECT account_number FROM accounts
                                      WHERE id = t.vendor_account_id),
            'amount_reversed', mp_money_text(t.amount_reversed),
            'amount_reversible', mp_money_text(t.amount - t.amount_reversed)));
        v_ids := v_ids || v.id;
    END LOOP;
    RETURN v_ids;
END
$$;

-- Intent: refund p_amount (NULL = all still refundable) of the calling merchant's paid
-- session p_session to where the payment came from (the customer's wallet, or for a sandbox
-- test card the funding account), taking back p_reversal_amounts[i] (NULL = all left) of
-- each of the merchant's transfers p_transfers[i] in the same ledger transaction. Returns the
-- refund as the API shows it. Refusals raise and move nothing: MP030 no such session of this
-- merchant, MP031 not paid, MP032 more than is left to refund, MP033 the merchant's balance
-- short, MP034 the wallet frozen or closed, and mp_reversal_plan's and mp_reversal_funds'.
CREATE FUNCTION mp_refund_session(p_merchant bigint, p_session uuid, p_amount bigint,
                                  p_reason text, p_transfers text[], p_reversal_amounts bigint[])
RETURNS json
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    s payment_sessions%ROWTYPE;
    r refunds%ROWTYPE;
    v_left bigint;
    v_amount bigint;
    v_plan jsonb;
    v_reversed bigint;
    v_status text;
    v_dest bigint;
    v_merchant_account bigint;
    v_accounts bigint[];
    v_amounts bigint[];
BEGIN
    SELECT * INTO s FROM payment_sessions
    WHERE id = p_session AND merchant_id = p_merchant FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'payment session not found' USING ERRCODE = 'MP030';
    END IF;
    IF s.status = 'refunded' THEN
        RAISE EXCEPTION 'amount: the payment session is refunded in full; nothing is left to refund'
            USING ERRCODE = 'MP032';
    ELSIF s.status <> 'paid' THEN
        RAISE EXCEPTION 'the payment session is %, not paid: only a paid session can be refunded',
            mp_session_status(s.status, s.expires_at) USING ERRCODE = 'MP031';
    END IF;
    v_left := s.amount - s.amount_refunded;
    v_amount := coalesce(p_amount, v_left);
    IF v_amount > v_left THEN
        RAISE EXCEPTION 'amount % is above what is left to refund (%)', mp_money_text(v_amount),
            mp_money_text(v_left) USING ERRCODE = 'MP032';
    END IF;

    SELECT coalesce(jsonb_agg(to_jsonb(p) ORDER BY p.pos), '[]'), coalesce(sum(p.amount), 0)
    INTO v_plan, v_reversed
    FROM mp_reversal_plan(p_merchant, p_transfers, p_reversal_amounts, 'reverse_transfers') p;

    -- The wallet first, as mp_pay_wallet locks it, then every account in id order.
    IF s.customer_account_id IS NOT NULL THEN
        v_dest := s.customer_account_id;
        SELECT a.status INTO STRICT v_status FROM accounts a WHERE a.id = v_dest FOR UPDATE;
        IF v_status <> 'active' THEN
            RAISE EXCEPTION 'the customer''s wallet to refund is %: nothing can be refunded to it',
                v_status USING ERRCODE = 'MP034';
        END IF;
    ELSE
        v_dest := mp_funding_account(s.currency);
    END IF;
    v_merchant_account := mp_merchant_account(p_merchant, s.currency);
    PERFORM mp_reversal_funds(v_merchant_account, s.currency, v_reversed - v_amount, v_plan,
        v_dest, 'reverse_transfers', format('amount %s', mp_money_text(v_amount)));

    SELECT array_agg(x.account), array_agg(x.amount) INTO v_accounts, v_amounts
    FROM (SELECT v_dest AS account, v_amount AS amount
          UNION ALL
          SELECT v_merchant_account, v_reversed - v_amount WHERE v_reversed <> v_amount
          UNION ALL
          SELECT (e->>'vendor')::bigint, -sum((e->>'amount')::bigint)
          FROM jsonb_array_elements(v_plan) e GROUP BY 1) x;

    INSERT INTO refunds (id, session_id, merchant_id, ledger_transaction_id, amount, currency,
                         reason)
    VALUES ('re_' || replace(gen_random_uuid()::text, '-', ''), p_session, p_merchant,
            mp_post('refund', p_merchant, 'session ' || p_session, s.currency, v_accounts,
                    v_amounts),
            v_amount, s.currency, p_reason)
    RETURNING * INTO r;
    PERFORM mp_reversal_record(p_merchant, s.currency, v_plan, r.ledger_transaction_id, r.id,
                               p_reason);
    PERFORM mp_queue_event(p_merchant, 'refund.succeeded', json_build_object(
        'refund', mp_refund_json(r),
        'session_id', p_session,
        'user_id', s.user_id,
        'amount_refunded', mp_money_text(s.amount_refunded + v_amount),
        'amount_refundable', mp_money_text(v_left - v_amount)));
    RETURN mp_refund_json(r);
END
$$;

-- Intent: take back p_amount (NULL = all not yet reversed) of the calling merchant's
-- transfer p_transfer from its vendor account to the merchant's settlement account. Returns
-- the reversal as the API shows it. Refusals raise and move nothing: mp_reversal_plan's
-- MP030 and MP036, mp_reversal_funds' MP037.
CREATE FUNCTION mp_reverse_transfer(p_merchant bigint, p_transfer text, p_amount bigint,
                                    p_reason text)
RETURNS json
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_plan jsonb;
    v_amount bigint;
    v_vendor bigint;
    v_currency text;
    v_merchant_account bigint;
    v_tx bigint;
    v_id text;
BEGIN
    SELECT jsonb_agg(to_jsonb(p)), sum(p.amount), min(p.vendor)
    INTO v_plan, v_amount, v_vendor
    FROM mp_reversal_plan(p_merchant, ARRAY[p_transfer], ARRAY[p_amount], NULL) p;
    SELECT m.currency INTO STRICT v_currency FROM merchants m WHERE m.id = p_merchant;
    v_merchant_account := mp_merchant_account(p_merchant, v_currency);
    PERFORM mp_reversal_funds(v_merchant_account, v_currency, v_amount, v_plan, NULL, NULL,
                              NULL);
    v_tx := mp_post('reversal', p_merchant, 'transfer ' || p_transfer, v_currency,
                    ARRAY[v_vendor, v_merchant_account], ARRAY[-v_amount, v_amount]);
    v_id := (mp_reversal_record(p_merchant, v_currency, v_plan, v_tx, NULL, p_reason))[1];
    RETURN (SELECT mp_reversal_json(v) FROM transfer_reversals v WHERE v.id = v_id);
END
$$;

-- A refunded session was paid: the payment functions see it as already paid.
CREATE OR REPLACE FUNCTION mp_session_lock(p_session uuid) RETURNS text
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
    RETURN CASE WHEN v_status = 'open' THEN NULL
                WHEN v_status IN ('paid', 'refunded') THEN 'already_paid'
                ELSE v_status END;
END
$$;

-- A DBA's view: every ledger entry with what it was, refunds and reversals as their own
-- kinds (a vendor's debit inside a refund is the reversal that came with it).
CREATE VIEW ledger_entry_kinds AS
SELECT e.id AS entry_id, e.transaction_id, a.account_number, a.kind AS account_kind,
       CASE WHEN t.kind = 'refund' AND a.kind = 'vendor' THEN 'reversal' ELSE t.kind END
           AS entry_kind,
       e.amount, e.balance_after, e.created_at
FROM ledger_entries e
JOIN accounts a ON a.id = e.account_id
JOIN ledger_transactions t ON t.id = e.transaction_id;

CREATE VIEW refunds_per_day AS
SELECT r.merchant_id, r.currency, (r.created_at AT TIME ZONE 'UTC')::date AS day,
       count(*) AS refunds, sum(r.amount) AS total,
       count(DISTINCT r.session_id) AS sessions
FROM refunds r GROUP BY 1, 2, 3;

-- Privileges: the workers read refunds and reversals (for GET) and call the two intents.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
GRANT SELECT ON refunds, transfer_reversals TO marketpay_app, marketpay_readonly;
GRANT SELECT ON ledger_entry_kinds, refunds_per_day TO marketpay_readonly;
GRANT EXECUTE ON FUNCTION mp_refund_json(refunds), mp_reversal_json(transfer_reversals)
    TO marketpay_app, marketpay_readonly;
GRANT EXECUTE ON FUNCTION mp_refund_session(bigint, uuid, bigint, text, text[], bigint[]),
    mp_reverse_transfer(bigint, text, bigint, text)
    TO marketpay_app;

-- The delivery daemon reads of merchants only what it delivers with: never a PIN digest.
REVOKE SELECT ON merchants FROM marketpay_webhookd;
GRANT SELECT (id, webhook_url, webhook_secret_sealed, status) ON merchants
    TO marketpay_webhookd;
