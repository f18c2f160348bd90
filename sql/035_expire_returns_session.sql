-- mp_expire_session (010) returns the session it expired as the API shows it
-- (mp_session_json), where it returned 'expired' (the performance issue): the worker then
-- read the session with a statement of its own for the reply, a second round trip on every
-- expire. The reply's session is read after the expiry, in the same transaction, under the
-- row lock the function took. The rules are 010's: MP030 when the merchant has no such
-- session, MP038 when it is not open; nothing changes then.
--
-- The result stays text (the object's JSON text), so the function is replaced in place: its
-- privileges stay, and a worker of before this migration, whose statement is prepared
-- until it is restarted, still runs it (a new result type would fail that statement with
-- "cached plan must not change result type": tests/upgrade.sh); it read nothing of the
-- result.
--
-- Locks: the function's definition, for a moment; no table is read or rewritten.
CREATE OR REPLACE FUNCTION mp_expire_session(p_merchant bigint, p_session uuid) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    s payment_sessions%ROWTYPE;
BEGIN
    SELECT * INTO s FROM payment_sessions
    WHERE id = p_session AND merchant_id = p_merchant FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'payment session not found' USING ERRCODE = 'MP030';
    END IF;
    IF mp_session_status(s.status, s.expires_at) <> 'open' THEN
        RAISE EXCEPTION 'the payment session is %, not open: only an open session can be expired',
            mp_session_status(s.status, s.expires_at) USING ERRCODE = 'MP038';
    END IF;
    PERFORM mp_session_expire(p_session);
    RETURN (SELECT mp_session_json(x)::text FROM payment_sessions x WHERE x.id = p_session);
END
$$;
COMMENT ON FUNCTION mp_expire_session(bigint, uuid) IS
    'Intent: the merchant expires its open session at once; returns the session as the API shows it (MP030 no such session, MP038 not open)';

