-- Webhook delivery at scale: the merchant's previous signing secret, still signed with
-- during a rotation window, so a merchant rotating its secret misses no delivery.

ALTER TABLE merchants ADD COLUMN webhook_secret_previous_sealed bytea,
    ADD COLUMN webhook_secret_previous_until timestamptz,
    ADD CONSTRAINT webhook_secret_previous_whole
    CHECK ((webhook_secret_previous_sealed IS NULL) = (webhook_secret_previous_until IS NULL));
COMMENT ON COLUMN merchants.webhook_secret_previous_sealed IS 'The signing secret before the last rotation, sealed like webhook_secret_sealed; deliveries are signed with it too until webhook_secret_previous_until';
COMMENT ON COLUMN merchants.webhook_secret_previous_until IS 'End of the rotation window: after it only webhook_secret_sealed signs';

-- Leases: marketpay-webhookd claims a batch of due events and commits at once, then keeps
-- many deliveries in flight with no transaction open. A claimed event's next_attempt_at
-- moves to the end of its lease, so no other daemon takes it meanwhile; if the daemon dies,
-- the event falls due again when the lease ends and is sent again, same webhook-id.
ALTER TABLE webhook_events ADD COLUMN lease_owner text,
    ADD COLUMN lease_until timestamptz,
    ADD CONSTRAINT webhook_events_lease_whole CHECK ((lease_owner IS NULL) = (lease_until IS NULL));
COMMENT ON COLUMN webhook_events.lease_owner IS 'The marketpay-webhookd sender (host:pid) sending it now; NULL when nobody is';
COMMENT ON COLUMN webhook_events.lease_until IS 'When the sender''s claim ends if it never reports (killed): the event is due again then';
CREATE INDEX webhook_events_leased ON webhook_events (merchant_id) WHERE lease_until IS NOT NULL;
-- Per merchant, the pending events in due order: the claim walks merchants, not events.
CREATE INDEX webhook_events_merchant_due ON webhook_events (merchant_id, next_attempt_at)
    WHERE status = 'pending';

-- One row per merchant: its endpoint's health, the circuit breaker. failures counts the
-- consecutive attempts the endpoint itself failed (no answer, 408, 429, 5xx); while it is
-- above 0 the endpoint gets one delivery at a time; at the daemon's
-- webhook_breaker_failures it opens: nothing is sent until open_until, then one probe.
CREATE TABLE webhook_endpoints (
    merchant_id     bigint PRIMARY KEY REFERENCES merchants (id),
    failures        int NOT NULL DEFAULT 0 CHECK (failures >= 0),
    open_until      timestamptz,
    opened_at       timestamptz,
    last_failure_at timestamptz,
    last_error      text
);
COMMENT ON TABLE webhook_endpoints IS 'The health of each merchant''s webhook endpoint as marketpay-webhookd sees it (the circuit breaker); see webhook_endpoint_health';
INSERT INTO webhook_endpoints (merchant_id) SELECT id FROM merchants;

CREATE FUNCTION mp_merchant_endpoint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO webhook_endpoints (merchant_id) VALUES (NEW.id);
    ELSE
        -- A new URL is a new endpoint: whatever the old one did no longer counts.
        UPDATE webhook_endpoints SET failures = 0, open_until = NULL, opened_at = NULL
        WHERE merchant_id = NEW.id;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER merchants_endpoint AFTER INSERT ON merchants
    FOR EACH ROW EXECUTE FUNCTION mp_merchant_endpoint();
CREATE TRIGGER merchants_endpoint_url AFTER UPDATE OF webhook_url ON merchants
    FOR EACH ROW WHEN (OLD.webhook_url IS DISTINCT FROM NEW.webhook_url)
    EXECUTE FUNCTION mp_merchant_endpoint();

-- Claims at most p_max due events for sender p_owner, for p_lease seconds: round-robin
-- across merchants (every merchant's oldest due event before any merchant's second), at
-- most p_per_endpoint of one merchant in flight across all senders (one while its endpoint
-- is failing). The due events of an endpoint whose breaker is open come back too, at most
-- p_max more, with open_until set: the sender records them as failed attempts without a
-- request, so they keep to the retry schedule. The endpoint rows are locked first, in a
-- statement of their own, so the in-flight counts read after them are exact; a merchant
-- another sender is claiming for right now is skipped this time, not waited for.
CREATE FUNCTION mp_webhook_claim(p_owner text, p_max int, p_per_endpoint int, p_lease int)
RETURNS TABLE (id text, merchant_id bigint, body text, attempts int, url text,
               secret bytea, previous bytea, open_until timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    v_merchants bigint[];
BEGIN
    SELECT array_agg(l.merchant_id) INTO v_merchants FROM (
        SELECT ep.merchant_id FROM webhook_endpoints ep
        WHERE ep.merchant_id IN (
            WITH RECURSIVE m(id) AS (
                (SELECT e.merchant_id FROM webhook_events e WHERE e.status = 'pending'
                 ORDER BY e.merchant_id LIMIT 1)
                UNION ALL
                SELECT (SELECT e.merchant_id FROM webhook_events e
                        WHERE e.status = 'pending' AND e.merchant_id > m.id
                        ORDER BY e.merchant_id LIMIT 1)
                FROM m WHERE m.id IS NOT NULL)
            SELECT m.id FROM m WHERE m.id IS NOT NULL AND EXISTS (
                SELECT 1 FROM webhook_events e WHERE e.merchant_id = m.id
                AND e.status = 'pending' AND e.next_attempt_at <= now()))
        FOR NO KEY UPDATE OF ep SKIP LOCKED) l;
    IF v_merchants IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH cap AS (
        SELECT ep.merchant_id, ep.open_until > now() AS open,
               CASE WHEN ep.open_until > now() THEN p_max
                    WHEN ep.failures > 0 THEN 1 ELSE p_per_endpoint END -
               CASE WHEN ep.open_until > now() THEN 0 ELSE
               (SELECT count(*) FROM webhook_events f WHERE f.merchant_id = ep.merchant_id
                AND f.lease_until > now())::int END AS free
        FROM webhook_endpoints ep WHERE ep.merchant_id = ANY (v_merchants)),
    pick AS (
        SELECT c.id, cap.open, c.next_attempt_at,
               row_number() OVER (PARTITION BY c.merchant_id ORDER BY c.next_attempt_at) AS turn
        FROM cap, LATERAL (
            SELECT e.id, e.merchant_id, e.next_attempt_at FROM webhook_events e
            WHERE e.merchant_id = cap.merchant_id AND e.status = 'pending'
            AND e.next_attempt_at <= now()
            ORDER BY e.next_attempt_at LIMIT greatest(cap.free, 0)
            FOR UPDATE OF e SKIP LOCKED) c),
    chosen AS (
        (SELECT pick.id FROM pick WHERE NOT pick.open ORDER BY turn, next_attempt_at
         LIMIT p_max)
        UNION ALL
        (SELECT pick.id FROM pick WHERE pick.open ORDER BY next_attempt_at LIMIT p_max)),
    leased AS (
        UPDATE webhook_events e SET lease_owner = p_owner,
            lease_until = now() + make_interval(secs => p_lease),
            next_attempt_at = now() + make_interval(secs => p_lease)
        FROM chosen WHERE e.id = chosen.id
        RETURNING e.id, e.merchant_id, e.body, e.attempts)
    SELECT l.id, l.merchant_id, l.body, l.attempts, m.webhook_url, m.webhook_secret_sealed,
           CASE WHEN m.webhook_secret_previous_until > now()
                THEN m.webhook_secret_previous_sealed END,
           CASE WHEN ep.open_until > now() THEN ep.open_until END
    FROM leased l JOIN merchants m ON m.id = l.merchant_id
    JOIN webhook_endpoints ep ON ep.merchant_id = l.merchant_id;
END
$$;

-- Records what the attempts of sender p_owner came to, a batch at once (the arrays run
-- in parallel, one element per attempt): each attempt is numbered on from the event's
-- earlier ones; the event becomes delivered, due again after p_delay seconds (retry), or
-- dead, and leaves its lease, unless the lease is no longer this sender's (it ran out, or
-- the merchant asked for a redelivery meanwhile): then only the attempt is kept. Each
-- endpoint's breaker: a success closes it; p_down (no answer, 408, 429, 5xx) adds a
-- failure, and at p_breaker_failures opens it for p_cooldown seconds, doubling with each
-- further failure up to an hour. Returns how many events changed state.
CREATE FUNCTION mp_webhook_record(p_owner text, p_ids text[], p_outcome text[],
    p_delay int[], p_url text[], p_http int[], p_error text[], p_duration int[],
    p_down boolean[], p_breaker_failures int, p_cooldown int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_changed int;
BEGIN
    INSERT INTO webhook_attempts (event_id, attempt, url, http_status, error, duration_ms)
    SELECT a.id, coalesce((SELECT max(w.attempt) FROM webhook_attempts w
                           WHERE w.event_id = a.id), 0) + 1,
           a.url, a.http, a.error, a.duration
    FROM unnest(p_ids, p_url, p_http, p_error, p_duration) AS a(id, url, http, error, duration);

    UPDATE webhook_events e SET
        status = CASE a.outcome WHEN 'retry' THEN 'pending' ELSE a.outcome END,
        attempts = e.attempts + 1,
        delivered_at = CASE a.outcome WHEN 'delivered' THEN clock_timestamp() END,
        last_error = a.error,
        next_attempt_at = CASE a.outcome WHEN 'retry'
            THEN clock_timestamp() + make_interval(secs => a.delay) ELSE e.next_attempt_at END,
        lease_owner = NULL, lease_until = NULL
    FROM unnest(p_ids, p_outcome, p_delay, p_error) AS a(id, outcome, delay, error)
    WHERE e.id = a.id AND e.lease_owner = p_owner AND e.status = 'pending';
    GET DIAGNOSTICS v_changed = ROW_COUNT;

    WITH b AS (
        SELECT e.merchant_id, bool_or(a.outcome = 'delivered') AS ok,
               count(*) FILTER (WHERE a.down)::int AS down, max(a.error) AS error
        FROM unnest(p_ids, p_outcome, p_down, p_error) AS a(id, outcome, down, error)
        JOIN webhook_events e ON e.id = a.id GROUP BY e.merchant_id)
    UPDATE webhook_endpoints ep SET
        failures = CASE WHEN b.ok THEN 0 ELSE ep.failures + b.down END,
        open_until = CASE WHEN b.ok THEN NULL
            WHEN ep.failures + b.down >= p_breaker_failures THEN clock_timestamp() +
                make_interval(secs => least(3600, p_cooldown::float8 *
                    2 ^ least(20, ep.failures + b.down - p_breaker_failures)))
            ELSE ep.open_until END,
        opened_at = CASE WHEN b.ok THEN NULL
            WHEN ep.failures + b.down >= p_breaker_failures
            THEN coalesce(ep.opened_at, clock_timestamp()) ELSE ep.opened_at END,
        last_failure_at = CASE WHEN b.down > 0 THEN clock_timestamp() ELSE ep.last_failure_at END,
        last_error = CASE WHEN b.down > 0 THEN b.error ELSE ep.last_error END
    FROM b WHERE ep.merchant_id = b.merchant_id AND (b.down > 0 OR (b.ok AND ep.failures > 0));
    RETURN v_changed;
END
$$;

-- What an operator looks at: each endpoint with something to send or a failure on record.
CREATE VIEW webhook_endpoint_health AS
SELECT ep.merchant_id, m.webhook_url AS url,
       CASE WHEN ep.open_until > now() THEN 'open'
            WHEN ep.opened_at IS NOT NULL THEN 'half-open'
            WHEN ep.failures > 0 THEN 'failing'
            ELSE 'closed' END AS state,
       ep.failures, ep.opened_at, ep.open_until, ep.last_failure_at, ep.last_error,
       (SELECT count(*) FROM webhook_events e WHERE e.merchant_id = ep.merchant_id
        AND e.lease_until > now()) AS in_flight,
       (SELECT count(*) FROM webhook_events e WHERE e.merchant_id = ep.merchant_id
        AND e.status = 'pending' AND e.next_attempt_at <= now()) AS due,
       (SELECT min(e.created_at) FROM webhook_events e WHERE e.merchant_id = ep.merchant_id
        AND e.status = 'pending') AS oldest_pending
FROM webhook_endpoints ep JOIN merchants m ON m.id = ep.merchant_id
WHERE ep.failures > 0 OR EXISTS (SELECT 1 FROM webhook_events e
    WHERE e.merchant_id = ep.merchant_id AND e.status = 'pending');
COMMENT ON VIEW webhook_endpoint_health IS 'Webhook endpoints with events pending or failures on record: breaker state, in flight, due (marketpayctl webhook endpoints)';

-- A redelivery asked while the event is in flight is refused (MP042) as before; in flight
-- is now a live lease, not a held row lock.
CREATE OR REPLACE FUNCTION mp_redeliver_event(p_merchant bigint, p_event text) RETURNS json
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
        e.lease_until := 'infinity';
    END;
    IF e.lease_until > now() THEN
        RAISE EXCEPTION 'the event is being delivered right now: see its attempts, and ask again if it fails'
            USING ERRCODE = 'MP042';
    END IF;
    INSERT INTO webhook_redeliveries (event_id, merchant_id) VALUES (p_event, p_merchant);
    UPDATE webhook_events SET status = 'pending', attempts = 0, next_attempt_at = now(),
        delivered_at = NULL, lease_owner = NULL, lease_until = NULL
    WHERE id = p_event RETURNING * INTO e;
    PERFORM pg_notify('marketpay_webhooks', p_event);
    RETURN mp_event_json(e);
END
$$;

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_webhook_claim(text, int, int, int),
    mp_webhook_record(text, text[], text[], int[], text[], int[], text[], int[], boolean[],
        int, int) TO marketpay_webhookd;
GRANT EXECUTE ON FUNCTION mp_redeliver_event(bigint, text) TO marketpay_app;
GRANT UPDATE (lease_owner, lease_until) ON webhook_events TO marketpay_webhookd;
GRANT SELECT, UPDATE (failures, open_until, opened_at, last_failure_at, last_error)
    ON webhook_endpoints TO marketpay_webhookd;
GRANT SELECT ON webhook_endpoints, webhook_endpoint_health TO marketpay_readonly;
CREATE INDEX webhook_endpoints_open ON webhook_endpoints (open_until) WHERE open_until IS NOT NULL;
GRANT SELECT (webhook_secret_previous_sealed, webhook_secret_previous_until) ON merchants
    TO marketpay_webhookd;
