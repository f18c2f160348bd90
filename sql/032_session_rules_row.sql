-- The CHECK payment_sessions_rules (029) passes the row itself to mp_session_rules, not nine
-- of its columns (the performance issue). PostgreSQL reads a table's CHECKs back from their
-- stored form for every statement that writes the table: a call with nine column arguments,
-- each cast from its domain, took about 38,000 instructions to read back on each
-- create-session, the call of the row about a tenth of that (bench/pg-instructions
-- create-session: 676,006 -> 643,490 instructions with 031). The rules are the same six, in
-- the same order, with a CHECK's meaning (a rule fails only when it is false), and a row
-- that breaks one fails as before: SQLSTATE 23514, the message and the constraint name of
-- the rule it breaks.
--
-- The function takes the table's row type, so it follows the columns the table gets later;
-- it is called with the rights of whoever writes the row, as before. The nine-argument form
-- is dropped with the CHECK that called it.
--
-- Applying it: the new CHECK is added NOT VALID and then validated (one read of the table,
-- one call per row) under the lock the migration takes on payment_sessions (ACCESS
-- EXCLUSIVE, for the whole transaction). No table is rewritten.
CREATE FUNCTION mp_session_rules(p payment_sessions)
RETURNS boolean LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    v_rule text := CASE
        WHEN NOT (p.expires_at > p.created_at) THEN 'payment_sessions_check'
        WHEN NOT (p.status NOT IN ('paid', 'refunded') OR (p.paid_at IS NOT NULL
                  AND p.transaction_id IS NOT NULL AND p.payment_method IS NOT NULL))
            THEN 'paid_has_payment'
        WHEN NOT (p.amount_refunded BETWEEN 0 AND p.amount) THEN 'refunds_within_amount'
        WHEN NOT ((p.status = 'refunded') = (p.amount_refunded = p.amount))
            THEN 'refunded_means_all'
        WHEN NOT (p.amount_refunded = 0 OR p.status IN ('paid', 'refunded'))
            THEN 'refunds_only_when_paid'
        WHEN NOT (p.locale ~ '^[a-z]{2,3}(_[A-Z]{2})?$') THEN 'payment_sessions_locale_check'
    END;
BEGIN
    IF v_rule IS NULL THEN
        RETURN true;
    END IF;
    RAISE EXCEPTION 'new row for relation "payment_sessions" violates check constraint "%"',
        v_rule USING ERRCODE = 'check_violation', CONSTRAINT = v_rule,
        TABLE = 'payment_sessions';
END
$$;
REVOKE EXECUTE ON FUNCTION mp_session_rules(payment_sessions) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_session_rules(payment_sessions) TO marketpay_app;
COMMENT ON FUNCTION mp_session_rules(payment_sessions) IS
    'The rules across columns of payment_sessions, for its CHECK payment_sessions_rules: true, or check_violation naming the rule broken';

ALTER TABLE payment_sessions DROP CONSTRAINT payment_sessions_rules;
ALTER TABLE payment_sessions ADD CONSTRAINT payment_sessions_rules
    CHECK (mp_session_rules(payment_sessions)) NOT VALID;
ALTER TABLE payment_sessions VALIDATE CONSTRAINT payment_sessions_rules;
DROP FUNCTION mp_session_rules(text, bigint, bigint, timestamptz, bigint, text, timestamptz,
    timestamptz, text);
