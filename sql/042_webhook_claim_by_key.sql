-- A webhook claim leases its events by their key, never by a scan of the outbox (the
-- performance issue).
--
-- mp_webhook_claim (014) updated the events it chose with UPDATE ... FROM chosen WHERE
-- e.id = chosen.id. The planner expects chosen to hold p_max rows (200, the daemon's batch)
-- where a claim takes at most webhook_endpoint_in_flight of each merchant (10): for it, a
-- hash join over a sequential scan of webhook_events then looks cheaper than 200 probes of
-- the key while the table holds some tens of thousands of rows (18,000 did, 78,000 not).
-- So with one merchant's backlog of 15,000 events, each claim read and hashed the whole
-- outbox for its 10: 3.2 of the claim's 3.9 ms (auto_explain under
-- bench/pgbench-webhook-claim.sql). The events are now updated WHERE e.id = ANY
-- (ARRAY(...)): a set of keys that only an index scan of the primary key reads, whatever
-- the planner expects of it. The choice is the same: the same events, in the same order,
-- at most p_max of them. The function is made again from its own current definition with
-- those two pieces replaced; the migration fails unless each is found exactly once.
-- tests/integ/check_webhook_slow (test_claim_reads_by_key) counts a claim's scans.
--
-- Locks: the function's definition, for a moment; no table is read or rewritten. Its
-- grants are kept (CREATE OR REPLACE).
DO $$
DECLARE
    f constant regprocedure := 'mp_webhook_claim(text, int, int, int)'::regprocedure;
    -- 014's CTE of the chosen events, and the update's join to it.
    v_chosen constant text := E'    chosen AS (\n        SELECT pick.id FROM pick '
        'ORDER BY turn, next_attempt_at LIMIT p_max),\n';
    v_join constant text := E'        FROM chosen WHERE e.id = chosen.id\n';
    v_keys constant text := E'        WHERE e.id = ANY (ARRAY(SELECT pick.id FROM pick\n'
        || E'                                ORDER BY turn, next_attempt_at LIMIT p_max))\n';
    v_def text := pg_get_functiondef(f);
BEGIN
    IF array_length(string_to_array(v_def, v_chosen), 1) <> 2
       OR array_length(string_to_array(v_def, v_join), 1) <> 2 THEN
        RAISE EXCEPTION '042: % does not update its events as 014 wrote', f;
    END IF;
    EXECUTE replace(replace(v_def, v_chosen, ''), v_join, v_keys);
END
$$;
