-- A create-session no longer locks its merchant's row (the performance issue).
--
-- payment_sessions.merchant_id was a foreign key, and so was idempotency_keys.merchant_id,
-- written by every request that carries an Idempotency-Key. A foreign key's check takes
-- FOR KEY SHARE on the merchant's row until the end of the inserting transaction, and a
-- merchant's sessions are created concurrently: open transactions holding a lock on one
-- row share it through a MultiXact, made again, with the members of the one before copied
-- into it, each time another one joins, and written to the WAL and to pg_multixact.
-- Through a pool of 8 workers a create-session made 0.34 MultiXacts of 0.72 members in all;
-- with 32 clients creating sessions for one merchant, one MultiXact of about 22 members
-- (bench/merchant-lock). The members share a space of 2^32, and past half of it
-- PostgreSQL vacuums every table aggressively.
--
-- What the foreign keys guaranteed holds by two rules of the database instead:
-- - A merchant is never deleted, and its id never changes (merchants_kept): its record
--   stays beside its ledger; a merchant stops trading by its status. Nothing deleted one
--   before: every other table that names a merchant keeps its foreign key, so a DELETE
--   failed anyway once anything had been written for it.
-- - A session's merchant, and an idempotency record's, exists when the row is written
--   (payment_sessions_merchant, idempotency_keys_merchant): a plain read of the merchant,
--   without a lock, for a row that can be neither deleted nor renumbered needs none. A
--   merchant that another transaction has not yet committed is not found, and the row is
--   refused, as the foreign key would after that merchant's transaction rolled back.
-- The refusal is the foreign key's: SQLSTATE 23503, the constraint's old name, and its
-- detail. The ledger's tables and the events keep their foreign keys: a session is paid
-- at most once, refunds and transfers are rarer still, and those references are the ones
-- an audit of the ledger reads.
--
-- Locks: ACCESS EXCLUSIVE on payment_sessions, idempotency_keys and merchants for a moment
-- (the triggers and the constraints); no table is read or rewritten.

CREATE FUNCTION mp_refuse_merchant_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'a merchant is never deleted nor renumbered: % refused', TG_OP
        USING ERRCODE = 'restrict_violation',
              HINT = 'Set the merchant''s status instead (marketpayctl merchant).';
END
$$;
CREATE TRIGGER merchants_kept BEFORE UPDATE OF id OR DELETE ON merchants
    FOR EACH ROW EXECUTE FUNCTION mp_refuse_merchant_change();
CREATE TRIGGER merchants_kept_no_truncate BEFORE TRUNCATE ON merchants
    FOR EACH STATEMENT EXECUTE FUNCTION mp_refuse_merchant_change();

CREATE FUNCTION mp_merchant_exists() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM FROM merchants WHERE id = NEW.merchant_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'insert or update on table "%" violates foreign key constraint "%"',
                TG_TABLE_NAME, TG_ARGV[0]
            USING ERRCODE = 'foreign_key_violation',
                  DETAIL = format('Key (merchant_id)=(%s) is not present in table "merchants".',
                                  NEW.merchant_id),
                  CONSTRAINT = TG_ARGV[0], TABLE = TG_TABLE_NAME, COLUMN = 'merchant_id';
    END IF;
    RETURN NEW;
END
$$;
ALTER TABLE payment_sessions DROP CONSTRAINT payment_sessions_merchant_id_fkey;
CREATE TRIGGER payment_sessions_merchant BEFORE INSERT OR UPDATE OF merchant_id
    ON payment_sessions FOR EACH ROW
    EXECUTE FUNCTION mp_merchant_exists('payment_sessions_merchant_id_fkey');
COMMENT ON COLUMN payment_sessions.merchant_id IS
    'The merchant (merchants.id): checked by the trigger payment_sessions_merchant, without '
    'a foreign key''s row lock; merchants are never deleted (trigger merchants_kept).';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_merchant_id_fkey;
CREATE TRIGGER idempotency_keys_merchant BEFORE INSERT OR UPDATE OF merchant_id
    ON idempotency_keys FOR EACH ROW
    EXECUTE FUNCTION mp_merchant_exists('idempotency_keys_merchant_id_fkey');
COMMENT ON COLUMN idempotency_keys.merchant_id IS
    'The merchant (merchants.id): checked by the trigger idempotency_keys_merchant, without '
    'a foreign key''s row lock; merchants are never deleted (trigger merchants_kept).';
-- Trigger functions: no role calls them (a trigger runs its function without the check).
REVOKE EXECUTE ON FUNCTION mp_refuse_merchant_change(), mp_merchant_exists() FROM PUBLIC;
