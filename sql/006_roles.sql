-- Least-privilege roles (marketpay-ledger(7), ROLES). They cannot log in; a deployment grants
-- them to its login roles (CREATE ROLE mp_worker LOGIN IN ROLE marketpay_app).
--   marketpay_app       the FastCGI workers: sessions, idempotency, PIN counters, and
--                       money only through the posting functions. No INSERT, UPDATE or
--                       DELETE on ledger entries or transactions, no write of a balance.
--   marketpay_webhookd  the delivery daemon: the outbox and its attempts.
--   marketpay_readonly  DBAs and reports: read everything.
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['marketpay_app', 'marketpay_webhookd', 'marketpay_readonly'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', r);
        END IF;
    END LOOP;
END
$$;

GRANT USAGE ON SCHEMA public TO marketpay_app, marketpay_webhookd, marketpay_readonly;

GRANT SELECT ON merchants, api_keys, accounts, payment_sessions, session_items,
    ledger_transactions, ledger_entries, transfers, webhook_events TO marketpay_app;
GRANT INSERT ON payment_sessions, session_items, webhook_events, transfers TO marketpay_app;
GRANT SELECT, INSERT, UPDATE ON idempotency_keys TO marketpay_app;
GRANT UPDATE (status, paid_at, payment_method, transaction_id, customer_account_id,
    card_brand, card_last4, failure_reason, closed_at) ON payment_sessions TO marketpay_app;
GRANT UPDATE (pin_failures, pin_locked_until) ON accounts TO marketpay_app;
GRANT UPDATE (pin_failures, pin_locked_until) ON merchants TO marketpay_app;

-- Money moves only through mp_post(), which runs with its owner's rights; the functions
-- that open settlement and funding accounts do too, so the workers need no INSERT on
-- accounts.
ALTER FUNCTION mp_merchant_account(bigint, text) SECURITY DEFINER SET search_path = public, pg_temp;
ALTER FUNCTION mp_funding_account(text) SECURITY DEFINER SET search_path = public, pg_temp;
REVOKE EXECUTE ON FUNCTION mp_post(text, bigint, text, text, bigint[], bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_post(text, bigint, text, text, bigint[], bigint[]) TO marketpay_app;
REVOKE EXECUTE ON FUNCTION mp_merchant_account(bigint, text), mp_funding_account(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_merchant_account(bigint, text), mp_funding_account(text)
    TO marketpay_app;

GRANT SELECT ON merchants, webhook_events, webhook_attempts TO marketpay_webhookd;
GRANT UPDATE (status, attempts, next_attempt_at, delivered_at, last_error)
    ON webhook_events TO marketpay_webhookd;
GRANT INSERT ON webhook_attempts TO marketpay_webhookd;

GRANT SELECT ON ALL TABLES IN SCHEMA public TO marketpay_readonly;
