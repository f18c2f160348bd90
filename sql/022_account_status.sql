-- Freezing and closing ledger accounts (marketpayctl account freeze|unfreeze|close), an
-- operator's action, recorded. What the states mean for money is mp_post's rule since 002: it
-- locks every account it posts to and refuses one that is not active (MP001), debit or
-- credit alike, so a frozen account neither pays nor is paid and a closed one takes nothing.
-- Credits are refused too, on purpose: money sent to a frozen account could neither be spent
-- nor sent back until the freeze ends, so it stays with its payer (a refund is refused and
-- the merchant pays back another way; a transfer to a frozen vendor is refused as a whole).
-- What this migration adds, enforced here whatever the client (marketpayctl or psql):
--   * closed is final: a closed account never changes status again;
--   * only an account at zero can be closed (it takes nothing afterwards, so nothing could
--     ever leave it); a system (funding) account is neither frozen nor closed;
--   * every change of status is recorded in account_status_changes (append-only): who (the
--     database login, and the operator's OS user when marketpayctl says it), when, why, and
--     the account's balance and version at that moment. The change holds the account's row
--     lock, as every posting does, so the version recorded divides its history: entries up to
--     it were posted before the change, none after it while the account is not active.
-- Refusals raise MP050 with the reason in the message.

CREATE TABLE account_status_changes (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id  bigint NOT NULL REFERENCES accounts (id),
    old_status  text NOT NULL,
    new_status  text NOT NULL CHECK (new_status IN ('active', 'frozen', 'closed')),
    balance     bigint NOT NULL,
    version     bigint NOT NULL,
    reason      text CHECK (char_length(reason) <= 500),
    changed_by  text NOT NULL DEFAULT session_user,
    os_user     text CHECK (char_length(os_user) <= 64),
    changed_at  timestamptz NOT NULL DEFAULT now(),
    CHECK (old_status <> new_status)
);
CREATE INDEX account_status_changes_account ON account_status_changes (account_id, id);
COMMENT ON TABLE account_status_changes IS 'Every change of an account''s status (freeze, unfreeze, close): who, when, why, and the balance and version at that moment; append-only';
CREATE TRIGGER account_status_changes_append_only BEFORE UPDATE OR DELETE
    ON account_status_changes FOR EACH ROW EXECUTE FUNCTION mp_refuse_change();
CREATE TRIGGER account_status_changes_no_truncate BEFORE TRUNCATE ON account_status_changes
    FOR EACH STATEMENT EXECUTE FUNCTION mp_refuse_change();

-- The rules above, for any UPDATE of a status; the reason and OS user come from the
-- transaction's settings marketpay.status_reason and marketpay.os_user (mp_account_set_status
-- sets them), else none is recorded.
CREATE FUNCTION mp_account_status_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status = OLD.status THEN
        RETURN NEW;
    ELSIF OLD.kind = 'system' THEN
        RAISE EXCEPTION 'account % is the funding account of %: it is never frozen or closed',
            OLD.account_number, OLD.currency USING ERRCODE = 'MP050';
    ELSIF OLD.status = 'closed' THEN
        RAISE EXCEPTION 'account % is closed: closing is final', OLD.account_number
            USING ERRCODE = 'MP050';
    ELSIF NEW.status = 'closed' AND NEW.balance <> 0 THEN
        RAISE EXCEPTION 'account % holds %: only an account at zero can be closed',
            OLD.account_number, mp_money_text(NEW.balance) USING ERRCODE = 'MP050';
    END IF;
    INSERT INTO account_status_changes (account_id, old_status, new_status, balance, version,
                                        reason, os_user)
    VALUES (OLD.id, OLD.status, NEW.status, NEW.balance, NEW.version,
            nullif(current_setting('marketpay.status_reason', true), ''),
            nullif(current_setting('marketpay.os_user', true), ''));
    RETURN NEW;
END
$$;
CREATE TRIGGER accounts_status_guard BEFORE UPDATE OF status ON accounts
    FOR EACH ROW EXECUTE FUNCTION mp_account_status_guard();

-- The operator's change (marketpayctl account freeze|unfreeze|close): account p_account to
-- p_status, from p_from (the states it may be in: freeze from active, unfreeze from frozen,
-- close from either), for p_reason, by p_os_user. Returns the status it had, or no row when
-- there is no such account or it is not in a state of p_from (nothing changed then). Waits
-- for postings that hold the account's row: the change commits between two of them.
CREATE FUNCTION mp_account_set_status(p_account text, p_status text, p_from text[],
                                      p_reason text, p_os_user text)
RETURNS TABLE (old_status text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('marketpay.status_reason', coalesce(p_reason, ''), true);
    PERFORM set_config('marketpay.os_user', coalesce(p_os_user, ''), true);
    RETURN QUERY
    WITH old AS (
        SELECT a.id, a.status FROM accounts a WHERE a.account_number = p_account FOR UPDATE)
    UPDATE accounts a SET status = p_status FROM old
    WHERE a.id = old.id AND old.status = ANY (p_from)
    RETURNING old.status;
    PERFORM set_config('marketpay.status_reason', '', true);
    PERFORM set_config('marketpay.os_user', '', true);
END
$$;
REVOKE EXECUTE ON FUNCTION mp_account_set_status(text, text, text[], text, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION mp_account_status_guard() FROM PUBLIC;
GRANT SELECT ON account_status_changes TO marketpay_readonly;
