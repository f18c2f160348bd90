-- A payment posts without a subtransaction (the performance issue).
--
-- mp_pay_session called mp_post inside an exception block, to make its refusals the payment's
-- outcome: MP001 (an account unusable), MP002 (another currency), MP003 (a wallet short of
-- the amount). So every payment ran its posting in a subtransaction. A wallet payment's
-- wallet is locked first, by mp_pay_wallet, for the PIN's verdict; mp_post then updated its
-- balance from within the subtransaction, and PostgreSQL keeps the parent's lock beside a
-- subtransaction's update in a MultiXact: one for each wallet payment (bench/merchant-lock,
-- bench/README.md).
--
-- mp_pay_session now locks the two accounts itself, in id order as mp_post does, and reads
-- mp_post's refusals there first, in mp_post's order: the first account, in id order, that
-- is not active, else holds another currency, else (not a system account) would go below
-- zero. A refused payment ends as before, with nothing posted, and a wallet short of the
-- amount fails its session. The merchant's account in the session's currency, when it has
-- none yet, is made only for a payment that goes ahead (a refused one made it within the
-- subtransaction, which took it back): a new account refuses nothing. An accepted one calls
-- mp_post, which locks the same rows (held already) and checks the same rules again: were the
-- two ever to differ, a payment could only fail with mp_post's error, never be posted where
-- mp_post refuses it.
--
-- The function is made again from its own current definition (010's) with the exception
-- block replaced; the migration fails unless each piece is found exactly once.
--
-- Locks: the function's definition, for a moment; no table is read or rewritten.
DO $$
DECLARE
    f constant regprocedure := 'mp_pay_session(uuid, text, bigint, text, text)'::regprocedure;
    -- The exception block, from its first line to the first line after it.
    v_from constant text := E'    BEGIN\n        transaction_id := mp_post(''payment''';
    v_end constant text := E'    END;\n';
    v_to constant text := v_end || E'    UPDATE payment_sessions SET status = ''paid''';
    v_decl constant text := E'    v_source bigint := p_source;\n';
    v_def text := pg_get_functiondef(f);
    i int := strpos(v_def, v_from);
    j int := strpos(v_def, v_to);
BEGIN
    IF array_length(string_to_array(v_def, v_from), 1) <> 2
       OR array_length(string_to_array(v_def, v_to), 1) <> 2
       OR array_length(string_to_array(v_def, v_decl), 1) <> 2 OR i > j THEN
        RAISE EXCEPTION '041: % does not post in the exception block 010 wrote', f;
    END IF;
    v_def := substr(v_def, 1, i - 1) || ltrim($new$
    -- The merchant's account in the currency, if it has one yet: a new one refuses nothing,
    -- and is made below only for a payment that goes ahead, as it was before.
    SELECT id INTO v_merchant FROM accounts
    WHERE merchant_id = v_s.merchant_id AND currency = v_s.currency AND kind = 'merchant';
    -- mp_post's locks and refusals, in its order (041).
    FOR v_acc IN
        SELECT id, status, currency, kind, balance FROM accounts
        WHERE id IN (v_source, v_merchant) ORDER BY id FOR UPDATE
    LOOP
        v_seen := v_seen + 1;
        outcome := coalesce(outcome, CASE
            WHEN v_acc.status <> 'active' THEN 'account_unusable'
            WHEN v_acc.currency <> v_s.currency THEN 'currency_mismatch'
            WHEN v_acc.id = v_source AND v_acc.kind <> 'system'
                 AND v_acc.balance < v_s.amount THEN 'insufficient_funds' END);
    END LOOP;
    IF v_seen <> 1 + (v_merchant IS NOT NULL)::int THEN
        outcome := coalesce(outcome, 'account_unusable');
    END IF;
    IF outcome = 'insufficient_funds' THEN
        UPDATE payment_sessions SET status = 'failed', failure_reason = 'insufficient funds',
            closed_at = now(), payment_method = p_method, customer_account_id = p_source
        WHERE id = p_session;
        PERFORM mp_session_event(p_session, 'payment.failed');
    END IF;
    IF outcome IS NOT NULL THEN
        RETURN;
    END IF;
    v_merchant := coalesce(v_merchant, mp_merchant_account(v_s.merchant_id, v_s.currency));
    transaction_id := mp_post('payment', v_s.merchant_id, 'session ' || p_session,
        v_s.currency, ARRAY[v_source, v_merchant], ARRAY[-v_s.amount, v_s.amount]);
$new$, E'\n') || substr(v_def, j + length(v_end));
    EXECUTE replace(v_def, v_decl, v_decl || E'    v_merchant bigint;\n    v_acc record;\n'
        || E'    v_seen int := 0;\n');
END
$$;
