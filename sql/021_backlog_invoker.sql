-- mp_webhook_backlog (020) ran with its owner's rights on the belief that the workers' role
-- cannot read webhook_events; it can (the events API reads it), so the function needs no
-- rights of its own and runs with the caller's, like the other readers: one SECURITY DEFINER
-- function fewer that the workers can reach.
ALTER FUNCTION mp_webhook_backlog() SECURITY INVOKER RESET search_path;
COMMENT ON FUNCTION mp_webhook_backlog() IS 'The metrics endpoint''s webhook figures: events pending, the oldest pending one''s age in milliseconds (0: none), dead events kept; runs with the caller''s rights';
