-- An event is placed (its created_at: the order of GET events, and the body's created_at) at
-- the moment it is recorded, not at the start of the transaction that records it.
--
-- With now(), an event that took longer to make than a later one became visible after it
-- while being placed before it: a refund begun after a transfer, committed first, had the
-- newer time. A merchant polling GET events with ending_before (the newest event it has)
-- then never saw the transfer's event: it arrived behind the cursor. check_lists_paging
-- caught it as a rare failure with a refund and a transfer made at the same time.
--
-- The events of money moves (payment.succeeded, refund.succeeded, transfer.succeeded,
-- transfer.reversed) are recorded after the posting, which holds the row lock of the
-- merchant's balance in that currency until the transaction ends: the next one's clock is
-- read after this one committed, so in one currency they are placed in the order they
-- become visible, as the balance transactions already are (011). Other events are placed
-- within the few milliseconds before their request ends; marketpay-api(7) says so.
--
-- Events recorded before keep their time. Locks: webhook_events (ACCESS EXCLUSIVE, for the
-- column default, no rewrite) and the function's definition, for a moment.
ALTER TABLE webhook_events ALTER COLUMN created_at SET DEFAULT clock_timestamp();

CREATE OR REPLACE FUNCTION mp_queue_event(p_merchant bigint, p_type text, p_data json)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_event text := 'evt_' || replace(mp_uuid_v7()::text, '-', '');
    v_send boolean;
    v_at timestamptz;
BEGIN
    IF p_type IS NULL OR p_type <> ALL (mp_event_types()) THEN
        RAISE EXCEPTION 'mp_queue_event: unknown event type %', p_type
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT m.webhook_url IS NOT NULL
           AND (m.webhook_event_types IS NULL OR p_type = ANY (m.webhook_event_types))
    INTO v_send
    FROM merchants m WHERE m.id = p_merchant;
    v_at := clock_timestamp();
    INSERT INTO webhook_events (id, merchant_id, type, status, body, created_at)
    VALUES (v_event, p_merchant, p_type, CASE WHEN v_send THEN 'pending' ELSE 'skipped' END,
        json_build_object(
            'id', v_event,
            'type', p_type,
            'created_at', mp_iso(v_at),
            'livemode', mp_environment() = 'production',
            'data', p_data)::text,
        v_at);
    RETURN v_event;
END
$$;
