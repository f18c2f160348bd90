-- An event queued while its merchant has no webhook URL is recorded as skipped, like one of
-- a type the merchant does not subscribe to: GET /api/v1/payment/events lists it, and it is
-- sent only if redelivered once an endpoint is set. Before, it was queued pending and
-- marketpay-webhookd went through its whole retry schedule for nothing: an attempt, a warning
-- in the log and a row in webhook_attempts each time, then dead. On bench/transfer, whose
-- merchants have no endpoint, that churn took a core of the database's CPU on its own
-- (two delivery attempts per transfer within the run). An endpoint receives the events made
-- after it was set, as it receives only the types it subscribes to.
CREATE OR REPLACE FUNCTION mp_queue_event(p_merchant bigint, p_type text, p_data json)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_event text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
    v_send boolean;
BEGIN
    IF p_type IS NULL OR p_type <> ALL (mp_event_types()) THEN
        RAISE EXCEPTION 'mp_queue_event: unknown event type %', p_type
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT m.webhook_url IS NOT NULL
           AND (m.webhook_event_types IS NULL OR p_type = ANY (m.webhook_event_types))
    INTO v_send
    FROM merchants m WHERE m.id = p_merchant;
    INSERT INTO webhook_events (id, merchant_id, type, status, body)
    VALUES (v_event, p_merchant, p_type, CASE WHEN v_send THEN 'pending' ELSE 'skipped' END,
        json_build_object(
            'id', v_event,
            'type', p_type,
            'created_at', mp_iso(now()),
            'livemode', mp_environment() = 'production',
            'data', p_data)::text);
    RETURN v_event;
END
$$;
