-- A transfer under way no longer holds up its merchant's sales (the performance issue).
--
-- mp_transfer_send locked the merchant's row FOR UPDATE, for its whole transaction: the PIN's
-- verdict, the posting, the transfers and the event. FOR UPDATE also conflicts with FOR KEY
-- SHARE, the lock every foreign-key check takes on the row it points to, and the sales of
-- that merchant insert rows pointing to it: a create-session (payment_sessions), a checkout
-- or wallet payment (ledger_transactions, webhook_events). Each of them waited for the
-- merchant's transfer to commit. FOR NO KEY UPDATE is what an UPDATE of the row's other
-- columns takes, as the PIN's counters are: it still excludes another transfer, and lets the
-- foreign keys through.
--
-- The refunds and reversals took the row FOR KEY SHARE first, so that one waited for a
-- transfer under way before it held any account (009's lock order; a refund then a
-- transfer of the same merchant never deadlock). They take FOR NO KEY UPDATE now, which a
-- transfer's lock conflicts with as before: a merchant's transfers, refunds and reversals
-- still run one at a time, in the order 009 gives, and everything else of that merchant
-- goes on beside them. Two refunds of one merchant, which waited for each other at the
-- merchant's balance (mp_post), now wait at its row, before either locks its session.
--
-- The three functions are made again from their own current definitions with only that
-- clause changed; the migration fails unless each holds it exactly once.
--
-- Locks: the three functions' definitions, for a moment; no table is read or rewritten.
DO $$
DECLARE
    f regprocedure;
    v_old text;
    v_def text;
BEGIN
    FOR f, v_old IN
        SELECT 'mp_transfer_send(bigint, bytea, bytea, bigint, text, text[], bigint[], text)'
                   ::regprocedure,
               'FROM merchants WHERE id = p_merchant FOR UPDATE;'
        UNION ALL
        SELECT 'mp_refund_session(bigint, uuid, bigint, text, text[], bigint[])'::regprocedure,
               'FROM merchants WHERE id = p_merchant FOR KEY SHARE;'
        UNION ALL
        SELECT 'mp_reverse_transfer(bigint, text, bigint, text)'::regprocedure,
               'FROM merchants WHERE id = p_merchant FOR KEY SHARE;'
    LOOP
        v_def := pg_get_functiondef(f);
        IF array_length(string_to_array(v_def, v_old), 1) <> 2 THEN
            RAISE EXCEPTION '037: % does not lock the merchant with "%" exactly once', f, v_old;
        END IF;
        EXECUTE replace(v_def, v_old, 'FROM merchants WHERE id = p_merchant FOR NO KEY UPDATE;');
    END LOOP;
END
$$;
