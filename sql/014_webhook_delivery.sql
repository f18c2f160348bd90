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
-- webhook_breaker_failures it opens: nothing is sent until open_until, then one probe;
-- opens counts the openings since the last success (each one twice as long).
CREATE TABLE webhook_endpoints (
    merchant_id     bigint PRIMARY KEY REFERENCES merchants (id),
    failures        int NOT NULL DEFAULT 0 CHECK (failures >= 0),
    opens           int NOT NULL DEFAULT 0 CHECK (opens >= 0),
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
        UPDATE webhook_endpoints SET failures = 0, opens = 0, open_until = NULL, opened_at = NULL
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
-- most p_per_endpoint of one merchant in flight across all senders, one while its endpoint
-- is failing, none while its breaker is open: its events wait, their attempts unspent, and
-- go out once a probe gets through. The endpoint rows are locked first, in a statement of
-- their own, so the in-flight counts read after them are exact; a merchant another sender
-- is claiming for right now is skipped this time, not waited for.
CREATE FUNCTION mp_webhook_claim(p_owner text, p_max int, p_per_endpoint int, p_lease int)
RETURNS TABLE (id text, merchant_id bigint, body text, attempts int, url text,
               secret bytea, previous bytea)
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
        AND (ep.open_until IS NULL OR ep.open_until <= now())
        FOR NO KEY UPDATE OF ep SKIP LOCKED) l;
    IF v_merchants IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH cap AS (
        SELECT ep.merchant_id, CASE WHEN ep.failures > 0 THEN 1 ELSE p_per_endpoint END -
               (SELECT count(*) FROM webhook_events f WHERE f.merchant_id = ep.merchant_id
                AND f.lease_until > now())::int AS free
        FROM webhook_endpoints ep WHERE ep.merchant_id = ANY (v_merchants)),
    pick AS (
        SELECT c.id, c.next_attempt_at,
               row_number() OVER (PARTITION BY c.merchant_id ORDER BY c.next_attempt_at) AS turn
        FROM cap, LATERAL (
            SELECT e.id, e.merchant_id, e.next_attempt_at FROM webhook_events e
            WHERE e.merchant_id = cap.merchant_id AND e.status = 'pending'
            AND e.next_attempt_at <= now()
            ORDER BY e.next_attempt_at LIMIT greatest(cap.free, 0)
            FOR UPDATE OF e SKIP LOCKED) c),
    chosen AS (
        SELECT pick.id FROM pick ORDER BY turn, next_attempt_at LIMIT p_max),
    leased AS (
        UPDATE webhook_events e SET lease_owner = p_owner,
            lease_until = now() + make_interval(secs => p_lease),
            next_attempt_at = now() + make_interval(secs => p_lease)
        FROM chosen WHERE e.id = chosen.id
        RETURNING e.id, e.merchant_id, e.body, e.attempts)
    SELECT l.id, l.merchant_id, l.body, l.attempts, m.webhook_url, m.webhook_secret_sealed,
           CASE WHEN m.webhook_secret_previous_until > now()
                THEN m.webhook_secret_previous_sealed END
    FROM leased l JOIN merchants m ON m.id = l.merchant_id;
END
$$;

-- Records what the attempts of sender p_owner came to, a batch at once (the arrays run
-- in parallel, one element per attempt): each attempt is numbered on from the event's
-- earlier ones; the event becomes delivered, due again after p_delay seconds (retry), or
-- dead, and leaves its lease, unless the lease is no longer this sender's (it ran out, or
-- the merchant asked for a redelivery meanwhile): then only the attempt is kept. Each
-- endpoint's breaker: a success closes it; p_down (no answer, 408, 429, 5xx) adds a
-- failure, and at p_breaker_failures opens it for p_cooldown seconds, twice as long at each
-- opening after (a failed probe opens it again), up to an hour. Returns how many events changed state.
CREATE FUNCTION mp_webhook_record(p_owner text, p_ids text[], p_outcome text[],
    p_delay int[], p_url text[], p_http int[], p_error text[], p_duration int[],
    p_down boolean[], p_breaker_failures int, p_cooldown int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_changed int;
BEGIN
    INSERT INTO webhook_attempts (event_id, attempt, attempted_at, url, http_status, error,
                                  duration_ms)
    SELECT a.id, coalesce((SELECT max(w.attempt) FROM webhook_attempts w
                           WHERE w.event_id = a.id), 0) + 1,
           clock_timestamp() - make_interval(secs => a.duration / 1000.0),
           a.url, a.http, a.error, a.duration
    FROM unnest(p_ids, p_url, p_http, p_error, p_duration) AS a(id, url, http, error, duration)
    -- Only a sender whose lease ran out (stalled past it) can race another for a number:
    -- its late attempt is then not kept.
    ON CONFLICT (event_id, attempt) DO NOTHING;

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

    WITH b0 AS (
        SELECT e.merchant_id, bool_or(a.outcome = 'delivered') AS ok,
               count(*) FILTER (WHERE a.down)::int AS down, max(a.error) AS error
        FROM unnest(p_ids, p_outcome, p_down, p_error) AS a(id, outcome, down, error)
        JOIN webhook_events e ON e.id = a.id GROUP BY e.merchant_id)
    UPDATE webhook_endpoints ep SET
        failures = CASE WHEN b.ok THEN 0 ELSE ep.failures + b.down END,
        opens = CASE WHEN b.ok THEN 0 WHEN b.opening THEN ep.opens + 1 ELSE ep.opens END,
        open_until = CASE WHEN b.ok THEN NULL
            WHEN b.opening THEN clock_timestamp() + make_interval(secs =>
                least(3600, p_cooldown::float8 * 2 ^ least(20, ep.opens)))
            ELSE ep.open_until END,
        opened_at = CASE WHEN b.ok THEN NULL
            WHEN b.opening THEN coalesce(ep.opened_at, clock_timestamp()) ELSE ep.opened_at END,
        last_failure_at = CASE WHEN b.down > 0 THEN clock_timestamp() ELSE ep.last_failure_at END,
        last_error = CASE WHEN b.down > 0 THEN b.error ELSE ep.last_error END
    FROM (SELECT b0.*, NOT b0.ok AND b0.down > 0
                 AND e.failures + b0.down >= p_breaker_failures
                 AND (e.open_until IS NULL OR e.open_until <= clock_timestamp()) AS opening
          FROM b0 JOIN webhook_endpoints e ON e.merchant_id = b0.merchant_id) b
    WHERE ep.merchant_id = b.merchant_id AND (b.down > 0 OR (b.ok AND ep.failures > 0));
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
       ep.failures, ep.opens, ep.opened_at, ep.open_until, ep.last_failure_at, ep.last_error,
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

-- A redelivery asked while the event is in flight is refused (MP042) as before: in flight is
-- now a live lease, not a held row lock, so mp_redeliver_event's NOWAIT no longer sees it.
-- Checked as the redelivery is recorded, the event row already locked by it; a lease that
-- ran out (its sender died) is dropped, so nothing that sender might still say counts.
CREATE FUNCTION mp_redelivery_lease() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM webhook_events WHERE id = NEW.event_id AND lease_until > now();
    IF FOUND THEN
        RAISE EXCEPTION 'the event is being delivered right now: see its attempts, and ask again if it fails'
            USING ERRCODE = 'MP042';
    END IF;
    UPDATE webhook_events SET lease_owner = NULL, lease_until = NULL
    WHERE id = NEW.event_id AND lease_owner IS NOT NULL;
    RETURN NEW;
END
$$;
CREATE TRIGGER webhook_redeliveries_lease BEFORE INSERT ON webhook_redeliveries
    FOR EACH ROW EXECUTE FUNCTION mp_redelivery_lease();

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_webhook_claim(text, int, int, int),
    mp_webhook_record(text, text[], text[], int[], text[], int[], text[], int[], boolean[],
        int, int) TO marketpay_webhookd;
GRANT UPDATE (lease_owner, lease_until) ON webhook_events TO marketpay_webhookd;
GRANT SELECT, UPDATE (failures, opens, open_until, opened_at, last_failure_at, last_error)
    ON webhook_endpoints TO marketpay_webhookd;
GRANT SELECT ON webhook_endpoints, webhook_endpoint_health TO marketpay_readonly;
CREATE INDEX webhook_endpoints_open ON webhook_endpoints (open_until) WHERE open_until IS NOT NULL;
GRANT SELECT (webhook_secret_previous_sealed, webhook_secret_previous_until) ON merchants
    TO marketpay_webhookd;
