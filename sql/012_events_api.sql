-- The events API (marketpay-api(7), EVENTS): every event of the merchant with its payload and
-- its delivery, listed like the other collections, and redelivered on the merchant's own
-- request, rate-limited.
--
-- Every event is now recorded, also one of a type the merchant's endpoint does not subscribe
-- to: that one is stored 'skipped' (never sent unless redelivered), so GET events is the
-- merchant's whole history whatever its subscriptions. Events are never deleted by the
-- service: the API promises at least 30 days.

ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_status_check,
    ADD CONSTRAINT webhook_events_status_check
        CHECK (status IN ('pending', 'delivered', 'dead', 'skipped'));
COMMENT ON COLUMN webhook_events.status IS 'pending: to be sent (attempts counts those since it was queued or last redelivered); delivered: a 2xx came; dead: every scheduled attempt failed; skipped: the merchant does not subscribe to its type';

-- The keyset index of the list, replacing the merchant's plain one.
CREATE INDEX webhook_events_keyset ON webhook_events (merchant_id, created_at, id);
DROP INDEX webhook_events_merchant;

-- Only an event to send wakes marketpay-webhookd.
DROP TRIGGER webhook_events_notify ON webhook_events;
CREATE TRIGGER webhook_events_notify AFTER INSERT ON webhook_events
    FOR EACH ROW WHEN (NEW.status = 'pending') EXECUTE FUNCTION mp_notify_webhook();

-- As in 010, with an event of a type the merchant does not subscribe to recorded as
-- 'skipped' instead of not at all. Returns the event's id.
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
    SELECT m.webhook_event_types IS NULL OR p_type = ANY (m.webhook_event_types) INTO v_send
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
COMMENT ON COLUMN merchants.webhook_event_types IS 'The event types sent to the merchant''s endpoint (marketpayctl merchant webhook --events); NULL: every type. Events of other types are recorded as skipped';

-- Redeliveries the merchant asked for (POST events/{id}/redeliver): the rate limit counts
-- them, and they stay as the record of who asked when.
CREATE TABLE webhook_redeliveries (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id     text NOT NULL REFERENCES webhook_events (id),
    merchant_id  bigint NOT NULL REFERENCES merchants (id),
    requested_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_redeliveries_merchant ON webhook_redeliveries (merchant_id, requested_at);
CREATE INDEX webhook_redeliveries_event ON webhook_redeliveries (event_id);

ALTER TABLE mp_settings ADD COLUMN redeliveries_per_minute int NOT NULL DEFAULT 10
    CHECK (redeliveries_per_minute BETWEEN 1 AND 1000);
COMMENT ON COLUMN mp_settings.redeliveries_per_minute IS 'How many redeliveries one merchant may ask for in any 60 seconds (marketpay.conf redeliveries_per_minute)';

-- An event as the API shows it, with its delivery: the latest 20 attempts (attempt_count has
-- them all).
CREATE FUNCTION mp_event_json(e webhook_events) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE
RETURN json_build_object(
    'id', e.id,
    'type', e.type,
    'created_at', mp_iso(e.created_at),
    'payload', e.body::json,
    'delivery', json_build_object(
        'status', e.status,
        'attempt_count', (SELECT count(*) FROM webhook_attempts a WHERE a.event_id = e.id),
        'next_attempt_at', CASE WHEN e.status = 'pending' THEN mp_iso(e.next_attempt_at) END,
        'delivered_at', mp_iso(e.delivered_at),
        'last_error', e.last_error,
        'redeliveries', (SELECT count(*) FROM webhook_redeliveries r WHERE r.event_id = e.id),
        'attempts', (SELECT coalesce(json_agg(json_build_object(
                         'attempt', a.attempt,
                         'attempted_at', mp_iso(a.attempted_at),
                         'url', a.url,
                         'http_status', a.http_status,
                         'error', a.error,
                         'duration_ms', a.duration_ms) ORDER BY a.attempt), '[]')
                     FROM (SELECT * FROM webhook_attempts a WHERE a.event_id = e.id
                           ORDER BY a.attempt DESC LIMIT 20) a)));

CREATE VIEW mp_list_events AS
SELECT e.merchant_id AS owner, e.id, e.created_at, e.type AS f1, e.status AS f2,
       mp_event_json(e) AS object
FROM webhook_events e;

-- As in 011, with the events.
CREATE OR REPLACE FUNCTION mp_list(p_collection text, p_merchant bigint, p_limit int,
                                   p_after text, p_before text, p_gte timestamptz,
                                   p_lt timestamptz, p_f1 text, p_f2 text, p_desc boolean)
RETURNS SETOF json
LANGUAGE plpgsql STABLE AS $$
DECLARE
    c record;
    v_owner bigint;
    v_after timestamptz;
    v_before timestamptz;
    v_up boolean := p_before IS NOT NULL AND p_after IS NULL AND NOT p_desc;
BEGIN
    SELECT x.* INTO c FROM (VALUES
        ('sessions', 'mp_list_sessions', 'uuid', '', 'payment session'),
        ('refunds', 'mp_list_refunds', 'text', '', 'refund'),
        ('transfers', 'mp_list_transfers', 'text', '', 'transfer'),
        ('balance_transactions', 'mp_list_balance_transactions', 'bigint', 'btx_',
         'balance transaction'),
        ('events', 'mp_list_events', 'text', '', 'event'))
        AS x(name, view, idtype, prefix, thing)
    WHERE x.name = p_collection;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'mp_list: no collection %', p_collection;
    END IF;
    v_owner := CASE WHEN p_collection = 'balance_transactions'
                    THEN mp_settlement_account(p_merchant) ELSE p_merchant END;
    v_after := mp_list_cursor(c.view, c.idtype, c.prefix, v_owner, p_after, 'starting_after',
                              c.thing);
    v_before := mp_list_cursor(c.view, c.idtype, c.prefix, v_owner, p_before, 'ending_before',
                               c.thing);
    IF v_owner IS NULL THEN
        RETURN;
    END IF;
    -- Before a cursor, the page nearest to it is the oldest ones: taken ascending, then
    -- turned round.
    RETURN QUERY EXECUTE format(
        'SELECT object FROM (SELECT object, created_at, id FROM %1$I WHERE owner = $1'
        ' AND ($2::timestamptz IS NULL OR created_at >= $2)'
        ' AND ($3::timestamptz IS NULL OR created_at < $3)'
        ' AND ($4::text IS NULL OR f1 = $4) AND ($5::text IS NULL OR f2 = $5)'
        ' AND ($6::timestamptz IS NULL OR (created_at, id) < ($6, $7::%2$s))'
        ' AND ($8::timestamptz IS NULL OR (created_at, id) > ($8, $9::%2$s))'
        ' ORDER BY created_at %3$s, id %3$s LIMIT $10) x ORDER BY created_at DESC, id DESC',
        c.view, c.idtype, CASE WHEN v_up THEN 'ASC' ELSE 'DESC' END)
    USING v_owner, p_gte, p_lt, p_f1, p_f2, v_after, substr(p_after, length(c.prefix) + 1),
          v_before, substr(p_before, length(c.prefix) + 1), p_limit;
END
$$;

-- Intent: the calling merchant asks for its event p_event to be sent again, now, whatever
-- its state (a delivered one too: the merchant lost it). The schedule starts again; the
-- attempts made stay, numbered on; the webhook-id stays the event's id. Returns the event.
-- Refusals raise and change nothing: MP030 no such event of this merchant, MP040 the
-- merchant has no webhook endpoint, MP041 the merchant asked redeliveries_per_minute times
-- in the last 60 seconds (DETAIL: the seconds until it may ask again), MP042 the event is
-- being sent right now (its row held by marketpay-webhookd: never waited for).
-- Lock order: the merchant row (serialises one merchant's requests, so the count is exact),
-- then the event row.
CREATE FUNCTION mp_redeliver_event(p_merchant bigint, p_event text) RETURNS json
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_url text;
    v_limit int;
    v_oldest timestamptz;
    v_count int;
    e webhook_events%ROWTYPE;
BEGIN
    SELECT webhook_url INTO v_url FROM merchants WHERE id = p_merchant FOR NO KEY UPDATE;
    PERFORM 1 FROM webhook_events WHERE id = p_event AND merchant_id = p_merchant;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'event not found' USING ERRCODE = 'MP030';
    END IF;
    IF v_url IS NULL THEN
        RAISE EXCEPTION 'no webhook endpoint is configured for this merchant: an event can be redelivered only to one'
            USING ERRCODE = 'MP040';
    END IF;
    SELECT redeliveries_per_minute INTO v_limit FROM mp_settings;
    SELECT count(*), min(requested_at) INTO v_count, v_oldest FROM (
        SELECT requested_at FROM webhook_redeliveries
        WHERE merchant_id = p_merchant AND requested_at > clock_timestamp() - interval '60 s'
        ORDER BY requested_at DESC LIMIT v_limit) r;
    IF v_count >= v_limit THEN
        RAISE EXCEPTION 'too many redeliveries: at most % in any 60 seconds', v_limit
            USING ERRCODE = 'MP041',
                  DETAIL = greatest(1, ceil(extract(epoch FROM
                      v_oldest + interval '60 s' - clock_timestamp())))::int::text;
    END IF;
    BEGIN
        SELECT * INTO e FROM webhook_events WHERE id = p_event FOR UPDATE NOWAIT;
    EXCEPTION WHEN lock_not_available THEN
        RAISE EXCEPTION 'the event is being delivered right now: see its attempts, and ask again if it fails'
            USING ERRCODE = 'MP042';
    END;
    INSERT INTO webhook_redeliveries (event_id, merchant_id) VALUES (p_event, p_merchant);
    UPDATE webhook_events SET status = 'pending', attempts = 0, next_attempt_at = now(),
        delivered_at = NULL
    WHERE id = p_event RETURNING * INTO e;
    PERFORM pg_notify('marketpay_webhooks', p_event);
    RETURN mp_event_json(e);
END
$$;

-- Privileges: the workers list events through mp_list and the view (reading an event's
-- attempts and redeliveries, never writing them), and redeliver through the intent.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
GRANT SELECT ON mp_list_events TO marketpay_app, marketpay_readonly;
GRANT SELECT ON webhook_attempts, webhook_redeliveries TO marketpay_app;
GRANT SELECT ON webhook_redeliveries TO marketpay_readonly;
GRANT EXECUTE ON FUNCTION mp_list(text, bigint, int, text, text, timestamptz, timestamptz,
    text, text, boolean), mp_event_json(webhook_events) TO marketpay_app, marketpay_readonly;
GRANT EXECUTE ON FUNCTION mp_redeliver_event(bigint, text) TO marketpay_app;
