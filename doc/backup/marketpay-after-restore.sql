-- Run once in each marketpay database after a point-in-time restore, before the programs
-- start again (marketpay-backup(7)): psql -d marketpay_production -f marketpay-after-restore.sql
--
-- The restore forgets every number a sequence gave out after the target time, so the next
-- payment could get the ledger transaction id (the "transaction_id" of payment.succeeded) of a
-- payment that was lost, which a merchant may already have recorded. Moving every sequence a
-- million on makes the ids after the restore new ones: raise the margin if more than a million
-- ids of one sequence could have been given out between the target and the failure.
DO $$
DECLARE
    s record;
BEGIN
    FOR s IN SELECT schemaname, sequencename, coalesce(last_value, 0) AS v FROM pg_sequences LOOP
        PERFORM setval(format('%I.%I', s.schemaname, s.sequencename), s.v + 1000000);
    END LOOP;
END
$$;
