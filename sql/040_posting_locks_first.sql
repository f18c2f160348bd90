-- A payment waiting for its merchant's balance no longer holds its merchant's row (the
-- performance issue).
--
-- mp_post inserted its ledger transaction first and locked its accounts after. The foreign
-- key of ledger_transactions.merchant_id takes FOR KEY SHARE on the merchant's row, held until
-- the transaction ends, so every payment of a busy merchant took that share, then queued for
-- the merchant's balance (the account row, FOR UPDATE) holding it: all of the queue shared
-- the row through a MultiXact, made again, with the members of the one before copied into
-- it, each time another payment joined. bench/merchant-lock counted it (bench/README.md).
--
-- The ledger transaction is now inserted once the accounts are locked and checked. The
-- payments of one balance then take the merchant's share one after the other, each after the
-- one before committed, and no MultiXact is needed. Nothing else changes: the same accounts
-- locked in the same order, the same refusals (a refused posting now ends before it writes
-- anything), the same rows written. The foreign key stays, and so does the lock order of
-- marketpay-ledger(7): the merchant's row (transfers, refunds and reversals take it first,
-- FOR NO KEY UPDATE, 037), then the accounts.
--
-- The function is made again from its own current definition with only that statement
-- moved; the migration fails unless each piece is found exactly once.
--
-- Locks: the function's definition, for a moment; no table is read or rewritten.
DO $$
DECLARE
    f constant regprocedure :=
        'mp_post(text, bigint, text, text, bigint[], bigint[])'::regprocedure;
    v_insert constant text :=
        E'    INSERT INTO ledger_transactions (kind, merchant_id, reference)\n'
        || E'    VALUES (p_kind, p_merchant, p_reference) RETURNING id INTO v_tx;\n';
    v_after constant text :=
        E'        RAISE EXCEPTION ''unknown account in posting'' USING ERRCODE = ''MP001'';\n'
        || E'    END IF;\n';
    v_def text := pg_get_functiondef(f);
BEGIN
    IF array_length(string_to_array(v_def, v_insert), 1) <> 2
       OR array_length(string_to_array(v_def, v_after), 1) <> 2
       OR strpos(v_def, v_insert) > strpos(v_def, v_after) THEN
        RAISE EXCEPTION '040: % does not insert its ledger transaction before it checks '
            'its accounts, as 024 wrote it', f;
    END IF;
    v_def := replace(v_def, v_insert, '');
    EXECUTE replace(v_def, v_after, v_after || E'    -- Only now, the accounts locked, does '
        || E'the foreign key share the merchant''s row (040).\n' || v_insert);
END
$$;
