-- Metrics: what a scrape of the workers' metrics endpoint (marketpay-fcgi(8)) reads from the
-- database each time: the webhook backlog (events still to be sent), how long the oldest of
-- them has waited, and the dead events kept (retention_events_days). The workers' role
-- cannot read webhook_events itself: this function, run with its owner's rights, gives it
-- these three figures and nothing else. The pending figures come from the partial index
-- webhook_events_due; dead events get one of their own, small (an event dies rarely) and
-- kept off the hot path of delivery, so a count never reads the table of delivered events.

CREATE INDEX webhook_events_dead ON webhook_events (created_at) WHERE status = 'dead';

CREATE FUNCTION mp_webhook_backlog(OUT pending bigint, OUT oldest_pending_ms bigint,
    OUT dead bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT (SELECT count(*) FROM webhook_events WHERE status = 'pending'),
           (SELECT coalesce(floor(extract(epoch FROM now() - min(created_at)) * 1000), 0)::bigint
              FROM webhook_events WHERE status = 'pending'),
           (SELECT count(*) FROM webhook_events WHERE status = 'dead');
$$;
COMMENT ON FUNCTION mp_webhook_backlog() IS 'The metrics endpoint''s webhook figures: events pending, the oldest pending one''s age in milliseconds (0: none), dead events kept';

REVOKE EXECUTE ON FUNCTION mp_webhook_backlog() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_webhook_backlog() TO marketpay_app;
