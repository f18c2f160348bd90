-- Cheaper session writes, continued (the performance issue). sql/018 moved the rules on one
-- column of payment_sessions into domains; the six left as CHECKs of the table (five across
-- columns, and the locale's shape of 017) still cost every statement that writes the table
-- about 200,000 instructions, a quarter of a create-session (callgrind, bench/pg-instructions):
-- PostgreSQL reads each CHECK back from its stored form and prepares it again for every such
-- statement. One CHECK calling one PL/pgSQL function holds the same six rules: the call is
-- read and prepared in a fraction of that, and the function's expression keeps its plan for
-- the connection.
--
-- The rules are exactly those of the CHECKs they replace, with a CHECK's meaning (a rule
-- fails only when it is false, not when it is NULL), for every role and every statement. A
-- row that breaks one fails as before: SQLSTATE 23514 (check_violation), the message and the
-- constraint name of the rule it breaks (payment_sessions_check, paid_has_payment,
-- refunds_within_amount, refunded_means_all, refunds_only_when_paid,
-- payment_sessions_locale_check), the first of them in that order when it breaks several;
-- only the DETAIL with the failing row is gone.
--
-- Applying it: the new CHECK is added NOT VALID and then validated, which reads the table
-- once and calls the function per row (the old CHECKs held for every row), under the lock
-- the migration takes on payment_sessions (ACCESS EXCLUSIVE, for the whole transaction);
-- then the old CHECKs are dropped. No table is rewritten.
CREATE FUNCTION mp_session_rules(p_status text, p_amount bigint, p_refunded bigint,
    p_paid_at timestamptz, p_transaction bigint, p_method text, p_created timestamptz,
    p_expires timestamptz, p_locale text)
RETURNS boolean LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    v_rule text := CASE
        WHEN NOT (p_expires > p_created) THEN 'payment_sessions_check'
        WHEN NOT (p_status NOT IN ('paid', 'refunded') OR (p_paid_at IS NOT NULL
                  AND p_transaction IS NOT NULL AND p_method IS NOT NULL))
            THEN 'paid_has_payment'
        WHEN NOT (p_refunded BETWEEN 0 AND p_amount) THEN 'refunds_within_amount'
        WHEN NOT ((p_status = 'refunded') = (p_refunded = p_amount)) THEN 'refunded_means_all'
        WHEN NOT (p_refunded = 0 OR p_status IN ('paid', 'refunded'))
            THEN 'refunds_only_when_paid'
        WHEN NOT (p_locale ~ '^[a-z]{2,3}(_[A-Z]{2})?$') THEN 'payment_sessions_locale_check'
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
COMMENT ON FUNCTION mp_session_rules(text, bigint, bigint, timestamptz, bigint, text,
    timestamptz, timestamptz, text) IS
    'The rules across columns of payment_sessions, for its CHECK payment_sessions_rules: true, or check_violation naming the rule broken';
-- The CHECK calls it with the privileges of the role writing the table: the workers' role
-- inserts sessions and sets their locale; the SECURITY DEFINER functions write as the owner.
REVOKE EXECUTE ON FUNCTION mp_session_rules(text, bigint, bigint, timestamptz, bigint, text,
    timestamptz, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_session_rules(text, bigint, bigint, timestamptz, bigint, text,
    timestamptz, timestamptz, text) TO marketpay_app;

ALTER TABLE payment_sessions ADD CONSTRAINT payment_sessions_rules CHECK (mp_session_rules(
    status, amount, amount_refunded, paid_at, transaction_id, payment_method, created_at,
    expires_at, locale)) NOT VALID;
ALTER TABLE payment_sessions VALIDATE CONSTRAINT payment_sessions_rules;
ALTER TABLE payment_sessions
    DROP CONSTRAINT payment_sessions_check,
    DROP CONSTRAINT paid_has_payment,
    DROP CONSTRAINT refunds_within_amount,
    DROP CONSTRAINT refunded_means_all,
    DROP CONSTRAINT refunds_only_when_paid,
    DROP CONSTRAINT payment_sessions_locale_check;
