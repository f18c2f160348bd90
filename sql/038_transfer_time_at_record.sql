-- A transfer is placed (its created_at: the order of GET transfers, and its
-- transaction_date) when it is recorded, after its posting, not at the start of its
-- transaction (036 did the same for events).
--
-- With now(), a transfer whose transaction began before another's but reached the
-- merchant's row after it (037: one at a time) was recorded after it and placed before it:
-- a merchant polling GET transfers with ending_before (the newest transfer it has) never saw
-- it. The transfers of one request still share one time: the clock is read once, by the
-- INSERT's uncorrelated subquery, which PostgreSQL evaluates once per statement. Read after
-- the posting, under the lock of the merchant's balance, it orders the transfers as their
-- balance transactions are ordered (011), and as refunds (whose time is read by their
-- INSERT, after their posting) already were.
--
-- mp_transfer is made again from its own current definition with only the INSERT's column
-- list and values changed; the migration fails unless each is found exactly once.
-- Transfers made before keep their time.
--
-- Locks: the function's definition, for a moment; no table is read or rewritten.
DO $$
DECLARE
    f regprocedure := 'mp_transfer(bigint, text, text[], bigint[], text)'::regprocedure;
    v_def text := pg_get_functiondef(f);
    v_columns text := 'position, group_id, idempotency_key)';
    v_values text := 'nullif(current_setting(''marketpay.idempotency_key'', true), '''')';
BEGIN
    IF array_length(string_to_array(v_def, v_columns), 1) <> 2
       OR array_length(string_to_array(v_def, v_values), 1) <> 2 THEN
        RAISE EXCEPTION '038: % does not insert the transfers as 027 wrote it', f;
    END IF;
    v_def := replace(v_def, v_columns, 'position, group_id, idempotency_key, created_at)');
    EXECUTE replace(v_def, v_values, v_values || ', (SELECT clock_timestamp())');
END
$$;
