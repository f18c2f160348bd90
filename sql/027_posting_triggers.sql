-- Cheaper multi-vendor transfers (the performance issue), part two: the ledger's triggers
-- fire once per statement instead of once per row, and mp_transfer reads its vendors in one
-- statement. Counted with callgrind (bench/pg-instructions transfer; bench/README.md).
--
-- * ledger_entries_balanced was a deferred constraint trigger FOR EACH ROW: at commit it ran
--   mp_check_balanced once per entry (six times for a transfer to five vendors), each
--   summing the same transaction's entries again. It is now an AFTER INSERT trigger FOR EACH
--   STATEMENT with the statement's new rows as a transition table: at the end of every
--   INSERT into ledger_entries, each ledger transaction that received entries must have at
--   least two and they must sum to zero (SQLSTATE 23514, check_violation, as before). The
--   rule holds for every role and every statement, the owner's too; what changes is when:
--   a posting's entries must now all be written by one statement (mp_post does), where before
--   a transaction could write them in several and be checked at commit.
--
-- * transfers_group ran mp_transfer_group FOR EACH ROW: once per vendor, each looking up the
--   group id of the rows before it. mp_transfer now writes the group id (one per request)
--   and the Idempotency-Key (the transaction's marketpay.idempotency_key) itself, and the row
--   trigger fires only for a row written without a group id (WHEN, evaluated without calling
--   a function), which it fills as before. What it guaranteed for every writer is checked
--   once per statement by transfers_one_group: all transfers of one ledger transaction carry
--   one group id, and the new rows the transaction's Idempotency-Key (SQLSTATE 23514).
--
-- * mp_transfer looked each vendor up with a SELECT of its own: one statement for all of
--   them now, the same refusals in the same order (the first refused vendor in request
--   order, with its position in DETAIL).
--
-- Locks: the trigger changes take ACCESS EXCLUSIVE on ledger_entries and transfers for the
-- moment of the DDL; no table is read or rewritten.

DROP TRIGGER ledger_entries_balanced ON ledger_entries;
CREATE OR REPLACE FUNCTION mp_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v record;
BEGIN
    -- From the statement's transactions to their entries (an index lookup each): never a
    -- scan of the whole table, however large it grows.
    SELECT t.transaction_id, s.n, s.total INTO v
    FROM (SELECT DISTINCT n.transaction_id FROM new_entries n) t,
         LATERAL (SELECT count(*) AS n, coalesce(sum(e.amount), 0) AS total
                  FROM ledger_entries e WHERE e.transaction_id = t.transaction_id) s
    WHERE s.n < 2 OR s.total <> 0
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'ledger transaction % is unbalanced: % entries summing to %',
            v.transaction_id, v.n, v.total USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT EXECUTE FUNCTION mp_check_balanced();

DROP TRIGGER transfers_group ON transfers;
CREATE TRIGGER transfers_group BEFORE INSERT ON transfers
    FOR EACH ROW WHEN (NEW.group_id IS NULL) EXECUTE FUNCTION mp_transfer_group();

CREATE FUNCTION mp_transfer_one_group() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v bigint;
BEGIN
    SELECT x.ledger_transaction_id INTO v
    FROM (SELECT DISTINCT n.ledger_transaction_id FROM new_transfers n) x,
         LATERAL (SELECT count(DISTINCT t.group_id) AS groups,
                         bool_or(t.group_id IS NULL) AS ungrouped
                  FROM transfers t WHERE t.ledger_transaction_id = x.ledger_transaction_id) s
    WHERE s.groups <> 1 OR s.ungrouped
    LIMIT 1;
    IF NOT FOUND THEN
        SELECT n.ledger_transaction_id INTO v FROM new_transfers n
        WHERE n.idempotency_key IS DISTINCT FROM
              nullif(current_setting('marketpay.idempotency_key', true), '')
        LIMIT 1;
    END IF;
    IF FOUND THEN
        RAISE EXCEPTION 'the transfers of ledger transaction % are not one request''s', v
            USING ERRCODE = 'check_violation',
                  DETAIL = 'One group id per ledger transaction, and the Idempotency-Key of '
                           'the transaction that writes them (marketpay.idempotency_key).';
    END IF;
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION mp_transfer_one_group() FROM PUBLIC;
CREATE TRIGGER transfers_one_group AFTER INSERT ON transfers
    REFERENCING NEW TABLE AS new_transfers
    FOR EACH STATEMENT EXECUTE FUNCTION mp_transfer_one_group();

-- As in 005 (refusals MP011 to MP015 with the vendor's 0-based position in DETAIL), the
-- vendors read by one statement, and the group id and Idempotency-Key written here.
CREATE OR REPLACE FUNCTION mp_transfer(p_merchant bigint, p_currency text, p_accounts text[],
                                       p_amounts bigint[], p_timezone text)
RETURNS TABLE (transfer_id text, amount bigint, transaction_date text)
LANGUAGE plpgsql AS $$
DECLARE
    v_group text := 'trg_' || replace(gen_random_uuid()::text, '-', '');
    v_ids bigint[] := '{}';
    v_total bigint := 0;
    v_acc record;
    v_tx bigint;
BEGIN
    -- Each vendor with its refusal (NULL: none), in request order: the first one raises.
    FOR v_acc IN
        SELECT x.ord, a.id,
               CASE WHEN a.id IS NULL THEN 'MP011'
                    WHEN a.kind = 'merchant' AND a.merchant_id = p_merchant THEN 'MP012'
                    WHEN a.kind <> 'vendor' THEN 'MP013'
                    WHEN a.status <> 'active' THEN 'MP014'
                    WHEN a.currency <> p_currency THEN 'MP015' END AS code,
               CASE WHEN a.id IS NULL THEN 'no such account'
                    WHEN a.kind = 'merchant' AND a.merchant_id = p_merchant
                    THEN 'the merchant''s own account'
                    WHEN a.kind <> 'vendor' THEN 'not a vendor account'
                    WHEN a.status <> 'active' THEN 'not active'
                    ELSE format('holds %s, not %s', a.currency, p_currency) END AS message
        FROM unnest(p_accounts) WITH ORDINALITY AS x(account_number, ord)
        LEFT JOIN accounts a ON a.account_number = x.account_number
        ORDER BY x.ord
    LOOP
        IF v_acc.code IS NOT NULL THEN
            RAISE EXCEPTION '%', v_acc.message
                USING ERRCODE = v_acc.code, DETAIL = v_acc.ord - 1;
        END IF;
        v_ids := v_ids || v_acc.id;
        v_total := v_total + p_amounts[v_acc.ord];
    END LOOP;
    v_tx := mp_post('transfer', p_merchant, 'multi-vendor transfer', p_currency,
                    mp_merchant_account(p_merchant, p_currency) || v_ids,
                    (-v_total) || p_amounts);
    RETURN QUERY
    INSERT INTO transfers (id, ledger_transaction_id, merchant_id, vendor_account_id, amount,
                           position, group_id, idempotency_key)
    SELECT 'tr_' || replace(gen_random_uuid()::text, '-', ''), v_tx, p_merchant, x.account,
           x.amount, (x.ord - 1)::int, v_group,
           nullif(current_setting('marketpay.idempotency_key', true), '')
    FROM unnest(v_ids, p_amounts) WITH ORDINALITY AS x(account, amount, ord)
    ORDER BY x.ord
    RETURNING transfers.id::text, transfers.amount::bigint,
              to_char(transfers.created_at AT TIME ZONE p_timezone, 'YYYY-MM-DD HH24:MI:SS');
END
$$;
