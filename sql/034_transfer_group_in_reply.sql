-- mp_transfer_send (010) also returns the transfers' group id, on every row (the performance
-- issue): the worker read it with a statement of its own after the call, a second round
-- trip on every transfer. The function reads it with the ledger transaction's id, from the
-- first transfer's row, in the statement that already read that id for the
-- transfer.succeeded event. Nothing else changes: the PIN, the nonce, the refusals, the
-- posting and the event are 010's, and a refusal's row has a NULL group id.
--
-- A new result column needs the function dropped and created again, in this migration's one
-- transaction; its privileges are set again as they were: the workers' role only, not PUBLIC
-- (008's default privileges cover only functions made by the role that set them, and
-- tests/integ/check_roles caught this one executable by every role without the REVOKE). A
-- worker of before this migration still works against it, its statement prepared: it names
-- the columns it reads, whose types are unchanged (tests/upgrade.sh).
--
-- Locks: the function's definition, for a moment; no table is read or rewritten.
DROP FUNCTION mp_transfer_send(bigint, bytea, bytea, bigint, text, text[], bigint[], text);

CREATE FUNCTION mp_transfer_send(p_merchant bigint, p_digest bytea, p_legacy bytea,
                                 p_issued_at bigint, p_nonce text,
                                 p_accounts text[], p_amounts bigint[],
                                 p_timezone text)
RETURNS TABLE (outcome text, detail text, message text, locked_until timestamptz,
               transfer_id text, amount bigint, transaction_date text, group_id text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    m merchants%ROWTYPE;
    s mp_settings%ROWTYPE;
    v mp_pin_verdict;
    t record;
    v_state text;
    v_detail text;
    v_tx bigint;
BEGIN
    SELECT * INTO STRICT s FROM mp_settings;
    SELECT * INTO m FROM merchants WHERE id = p_merchant FOR UPDATE;
    IF NOT FOUND OR NOT m.settlement_enabled THEN
        RETURN QUERY SELECT 'not_enabled', NULL, NULL, NULL::timestamptz, NULL, NULL::bigint,
            NULL, NULL;
        RETURN;
    END IF;
    IF m.pin_locked_until > now() THEN
        RETURN QUERY SELECT 'locked', NULL, NULL, m.pin_locked_until, NULL, NULL::bigint,
            NULL, NULL;
        RETURN;
    END IF;
    IF p_issued_at IS NULL OR abs(extract(epoch FROM now()) - p_issued_at) > s.pin_max_age THEN
        RETURN QUERY SELECT 'pin_stale', s.pin_max_age::text, NULL, NULL::timestamptz, NULL,
            NULL::bigint, NULL, NULL;
        RETURN;
    END IF;
    INSERT INTO pin_nonces (merchant_id, nonce) VALUES (p_merchant, p_nonce)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'pin_reused', NULL, NULL, NULL::timestamptz, NULL, NULL::bigint,
            NULL, NULL;
        RETURN;
    END IF;
    v := mp_pin_attempt('merchants', m.id, 'transfer PIN of merchant ' || m.id, m.pin_digest,
                        m.pin_scheme, m.pin_failures, m.pin_locks, m.pin_locked_until,
                        p_digest, p_legacy);
    IF v.outcome <> 'ok' THEN
        RETURN QUERY SELECT 'wrong_pin', NULL, NULL,
            CASE WHEN v.outcome = 'wrong' THEN v.locked_until END, NULL, NULL::bigint, NULL,
            NULL;
        RETURN;
    END IF;
    -- The PIN was right: its counters and the nonce stay recorded whatever follows.
    BEGIN
        FOR t IN SELECT * FROM mp_transfer(p_merchant, m.currency, p_accounts, p_amounts,
                                           p_timezone) LOOP
            IF v_tx IS NULL THEN
                SELECT x.ledger_transaction_id, x.group_id INTO v_tx, group_id
                FROM transfers x WHERE x.id = t.transfer_id;
            END IF;
            outcome := 'ok';
            transfer_id := t.transfer_id;
            amount := t.amount;
            transaction_date := t.transaction_date;
            RETURN NEXT;
        END LOOP;
        IF v_tx IS NOT NULL THEN
            PERFORM mp_transfer_event(v_tx);
        END IF;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_detail = PG_EXCEPTION_DETAIL;
        IF v_state NOT LIKE 'MP0%' THEN
            RAISE;
        END IF;
        RETURN QUERY SELECT v_state, nullif(v_detail, ''), SQLERRM,
            NULL::timestamptz, NULL, NULL::bigint, NULL, NULL;
    END;
END
$$;

REVOKE EXECUTE ON FUNCTION
    mp_transfer_send(bigint, bytea, bytea, bigint, text, text[], bigint[], text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    mp_transfer_send(bigint, bytea, bytea, bigint, text, text[], bigint[], text)
    TO marketpay_app;
