-- Retention: delivered webhook events with their attempts and redeliveries, and sessions that
-- ended unpaid with their items, are deleted once older than marketpay.conf's
-- retention_events_days and retention_sessions_days (marketpayctl purge, run daily by the
-- marketpay-purge@ timer as the workers' role). Like mp_purge_idempotency (007), these
-- functions run with their owner's rights and check their own limits: whatever age they are
-- given, nothing younger than 30 days goes (reconciliation reads events and sessions that
-- far back), never an event still to be sent, never a paid session or one a ledger
-- transaction or refund refers to. Each call deletes one batch and commits with its
-- statement, so locks stay short; marketpayctl calls again until a batch comes back short.
-- Ledger rows are never deleted (marketpay-ledger(7) says how a DBA partitions or archives
-- them).

CREATE FUNCTION mp_purge_events(p_days integer, p_batch integer,
    OUT events bigint, OUT attempts bigint, OUT redeliveries bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_cutoff timestamptz := now() - make_interval(days => greatest(p_days, 30));
    v_ids text[];
BEGIN
    -- Settled events only ('pending' is still to be sent), whose last attempt is old too (a
    -- dead event redelivered lately is recent history). SKIP LOCKED: an event a sender or a
    -- redelivery holds is left for the next run.
    SELECT array_agg(e.id) INTO v_ids FROM (
        SELECT e.id FROM webhook_events e
         WHERE e.status IN ('delivered', 'dead', 'skipped')
           AND e.created_at <= v_cutoff
           AND coalesce(e.delivered_at, e.created_at) <= v_cutoff
           AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.event_id = e.id
                           AND a.attempted_at > v_cutoff)
           AND NOT EXISTS (SELECT 1 FROM webhook_redeliveries r WHERE r.event_id = e.id
                           AND r.requested_at > v_cutoff)
         LIMIT least(greatest(p_batch, 1), 10000)
         FOR UPDATE OF e SKIP LOCKED) e;
    events := 0; attempts := 0; redeliveries := 0;
    IF v_ids IS NULL THEN
        RETURN;
    END IF;
    -- The children first: both refer to the event.
    DELETE FROM webhook_attempts WHERE event_id = ANY (v_ids);
    GET DIAGNOSTICS attempts = ROW_COUNT;
    DELETE FROM webhook_redeliveries WHERE event_id = ANY (v_ids);
    GET DIAGNOSTICS redeliveries = ROW_COUNT;
    DELETE FROM webhook_events WHERE id = ANY (v_ids);
    GET DIAGNOSTICS events = ROW_COUNT;
END
$$;
COMMENT ON FUNCTION mp_purge_events(integer, integer) IS 'One batch of retention: delivered, dead and skipped webhook events older than the days given (at least 30), with their attempts and redeliveries (marketpayctl purge)';

CREATE FUNCTION mp_purge_sessions(p_days integer, p_batch integer,
    OUT sessions bigint, OUT items bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_cutoff timestamptz := now() - make_interval(days => greatest(p_days, 30));
    v_ids uuid[];
BEGIN
    -- Expired (also an open one past its expiry) or canceled, never paid: no ledger
    -- transaction, no refund. Aged from when it ended.
    SELECT array_agg(s.id) INTO v_ids FROM (
        SELECT s.id FROM payment_sessions s
         WHERE mp_session_status(s.status, s.expires_at) IN ('expired', 'canceled')
           AND s.transaction_id IS NULL AND s.paid_at IS NULL
           AND greatest(s.expires_at, coalesce(s.closed_at, s.expires_at)) <= v_cutoff
           AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.session_id = s.id)
         LIMIT least(greatest(p_batch, 1), 10000)
         FOR UPDATE OF s SKIP LOCKED) s;
    sessions := 0; items := 0;
    IF v_ids IS NULL THEN
        RETURN;
    END IF;
    DELETE FROM session_items WHERE session_id = ANY (v_ids);
    GET DIAGNOSTICS items = ROW_COUNT;
    DELETE FROM payment_sessions WHERE id = ANY (v_ids);
    GET DIAGNOSTICS sessions = ROW_COUNT;
END
$$;
COMMENT ON FUNCTION mp_purge_sessions(integer, integer) IS 'One batch of retention: expired and canceled sessions, never paid, ended more than the days given (at least 30) ago, with their items (marketpayctl purge)';

REVOKE EXECUTE ON FUNCTION mp_purge_events(integer, integer),
    mp_purge_sessions(integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_purge_events(integer, integer),
    mp_purge_sessions(integer, integer) TO marketpay_app;
