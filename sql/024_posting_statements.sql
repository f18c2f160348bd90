-- Cheaper multi-vendor transfers (the performance issue). Counted with callgrind
-- (bench/pg-instructions transfer), a transfer to five vendors cost the database about 8.9
-- million instructions, twelve create-sessions' worth; two things stood out:
--
-- * mp_post wrote each account's entry and new balance in a loop: for a transfer to five
--   vendors, six INSERTs into ledger_entries and six UPDATEs of accounts. Each statement
--   starts an executor of its own and prepares again, from their stored form, the CHECKs of
--   the table it writes (accounts has twelve). It now locks and checks the accounts in the
--   same order as before, with the same refusals, then writes all entries in one INSERT and
--   all balances in one UPDATE. What is written is the same, row for row: entries in account
--   id order, each with the balance before and after and the account's next version.
--
-- * mp_transfer_event was a SQL function that PostgreSQL cannot inline (an aggregate over a
--   join): its body was planned again at every call (pg_stat_statements: as many plans as
--   calls). It is PL/pgSQL now, with the same expression, so its plan is kept by the
--   connection.

CREATE OR REPLACE FUNCTION mp_post(p_kind text, p_merchant bigint, p_reference text,
                                   p_currency text, p_accounts bigint[], p_amounts bigint[])
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_tx bigint;
    v_acc record;
    v_seen int := 0;
BEGIN
    IF p_accounts IS NULL OR p_amounts IS NULL OR cardinality(p_accounts) < 2
       OR cardinality(p_accounts) <> cardinality(p_amounts)
       OR (SELECT count(DISTINCT a) FROM unnest(p_accounts) a) <> cardinality(p_accounts)
       OR EXISTS (SELECT 1 FROM unnest(p_amounts) a WHERE a IS NULL OR a = 0)
       OR (SELECT sum(a) FROM unnest(p_amounts) a) <> 0 THEN
        RAISE EXCEPTION 'malformed posting' USING ERRCODE = 'MP004';
    END IF;
    INSERT INTO ledger_transactions (kind, merchant_id, reference)
    VALUES (p_kind, p_merchant, p_reference) RETURNING id INTO v_tx;
    PERFORM set_config('marketpay.posting', 'on', true);
    -- Every account locked in id order (two postings never deadlock) and checked, in that
    -- order, before anything is written.
    FOR v_acc IN
        SELECT a.account_number, a.kind, a.status, a.currency, a.balance, x.amount
        FROM accounts a
        JOIN unnest(p_accounts, p_amounts) AS x(account, amount) ON x.account = a.id
        ORDER BY a.id FOR UPDATE OF a
    LOOP
        v_seen := v_seen + 1;
        IF v_acc.status <> 'active' THEN
            RAISE EXCEPTION 'account % is %', v_acc.account_number, v_acc.status
                USING ERRCODE = 'MP001';
        END IF;
        IF v_acc.currency <> p_currency THEN
            RAISE EXCEPTION 'account % holds %, not %', v_acc.account_number, v_acc.currency,
                p_currency USING ERRCODE = 'MP002';
        END IF;
        IF v_acc.kind <> 'system' AND v_acc.balance + v_acc.amount < 0 THEN
            RAISE EXCEPTION 'insufficient funds in account %', v_acc.account_number
                USING ERRCODE = 'MP003';
        END IF;
    END LOOP;
    IF v_seen <> cardinality(p_accounts) THEN
        RAISE EXCEPTION 'unknown account in posting' USING ERRCODE = 'MP001';
    END IF;
    -- The rows are locked: the balances read here are the ones the entries start from.
    INSERT INTO ledger_entries (transaction_id, account_id, amount, balance_before,
                                balance_after, version)
    SELECT v_tx, a.id, x.amount, a.balance, a.balance + x.amount, a.version + 1
    FROM accounts a
    JOIN unnest(p_accounts, p_amounts) AS x(account, amount) ON x.account = a.id
    ORDER BY a.id;
    UPDATE accounts a SET balance = a.balance + x.amount, version = a.version + 1
    FROM unnest(p_accounts, p_amounts) AS x(account, amount)
    WHERE a.id = x.account;
    PERFORM set_config('marketpay.posting', 'off', true);
    RETURN v_tx;
END
$$;

CREATE OR REPLACE FUNCTION mp_transfer_event(p_tx bigint) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    RETURN (SELECT mp_queue_event(min(t.merchant_id), 'transfer.succeeded', json_build_object(
                'transaction_id', p_tx::text,
                'amount', mp_money_text(sum(t.amount)::bigint),
                'currency', min(a.currency),
                'transfers', json_agg(json_build_object(
                    'id', t.id,
                    'account_number', a.account_number,
                    'amount', mp_money_text(t.amount),
                    'created_at', mp_iso(t.created_at)) ORDER BY t.position)))
            FROM transfers t JOIN accounts a ON a.id = t.vendor_account_id
            WHERE t.ledger_transaction_id = p_tx);
END
$$;
