-- Cheaper replies (the performance issue). PostgreSQL inlines a SQL function into the query
-- that calls it only when its body is a bare expression; a body with a sub-SELECT or a FROM
-- is planned again at every execution of the calling statement. mp_session_json (a session
-- with its items and refunds) was such a function: reading one session cost the database 2.3
-- million instructions, three quarters of them planning mp_session_json's body again
-- (callgrind; bench/pg-instructions measures it). The API's object builders of that kind are
-- therefore made PL/pgSQL functions with the very same expression: PL/pgSQL keeps the plan
-- of each statement for the life of the connection. The bodies are taken from the functions
-- as they are, not written out again here, so the objects cannot change; with
-- #variable_conflict use_column a name keeps meaning what it meant in SQL (a column before a
-- parameter). Their volatility, privileges and comments stay as they were.

DO $$
DECLARE
    f regprocedure;
    def text;
BEGIN
    FOREACH f IN ARRAY ARRAY[
        'mp_session_json(payment_sessions)', 'mp_session_items_json(uuid)',
        'mp_refund_json(refunds)', 'mp_transfer_json(transfers)',
        'mp_event_json(webhook_events)', 'mp_balance_json(bigint)',
        'mp_settlement_account(bigint)']::regprocedure[]
    LOOP
        def := pg_get_functiondef(f);
        IF def !~ '\n LANGUAGE sql\n' OR def !~ '\nRETURN ' THEN
            RAISE EXCEPTION '% is not a SQL function with a RETURN body', f;
        END IF;
        def := regexp_replace(def, '\n LANGUAGE sql\n', E'\n LANGUAGE plpgsql\n');
        def := regexp_replace(def, '\nRETURN (.*)$',
            E'\nAS $body$\n#variable_conflict use_column\nBEGIN\n    RETURN \\1;\nEND\n$body$');
        EXECUTE def;
    END LOOP;
END
$$;
