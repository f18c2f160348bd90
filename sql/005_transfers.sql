-- Multi-vendor settlement: a merchant's balance split across vendor accounts in one request.

ALTER TABLE merchants
    ADD COLUMN settlement_enabled boolean NOT NULL DEFAULT false,
    ADD COLUMN pin_digest bytea CHECK (length(pin_digest) = 32),
    ADD COLUMN pin_failures int NOT NULL DEFAULT 0 CHECK (pin_failures >= 0),
    ADD COLUMN pin_locked_until timestamptz;
COMMENT ON COLUMN merchants.pin_digest IS 'HMAC-SHA256 of the transfer PIN under the pepper file; the PIN itself is never stored';

-- One row per vendor credited: its id is the transaction_id the API returns.
CREATE TABLE transfers (
    id                    text PRIMARY KEY CHECK (id ~ '^tr_[0-9a-f]{32}$'),
    ledger_transaction_id bigint NOT NULL REFERENCES ledger_transactions (id),
    merchant_id           bigint NOT NULL REFERENCES merchants (id),
    vendor_account_id     bigint NOT NULL REFERENCES accounts (id),
    amount                bigint NOT NULL CHECK (amount > 0),
    position              int NOT NULL CHECK (position >= 0),
    created_at            timestamptz NOT NULL DEFAULT now(),
    UNIQUE (ledger_transaction_id, position),
    UNIQUE (ledger_transaction_id, vendor_account_id)
);
CREATE INDEX transfers_merchant ON transfers (merchant_id, created_at);
CREATE INDEX transfers_vendor ON transfers (vendor_account_id, created_at);

-- A wrong transfer PIN: the count, and the lock after p_max in a row (a lock that has run
-- out starts the count afresh). The caller holds the merchant's row lock (FOR UPDATE) from
-- reading the digest to here, so parallel guesses are counted one after another.
CREATE FUNCTION mp_merchant_pin_failed(p_merchant bigint, p_max int, p_lock_seconds int)
RETURNS void
LANGUAGE sql AS $$
    UPDATE merchants SET (pin_failures, pin_locked_until) =
        (SELECT c.n, CASE WHEN c.n >= p_max THEN now() + make_interval(secs => p_lock_seconds) END
         FROM (SELECT CASE WHEN pin_locked_until IS NOT NULL THEN 1
                           ELSE pin_failures + 1 END AS n) c)
    WHERE id = p_merchant;
$$;

-- Pays p_amounts[i] to the vendor account p_accounts[i] from the merchant's settlement
-- account in p_currency, as one ledger transaction. Checks each vendor first; a refusal
-- raises with the vendor's position (0-based) in DETAIL and moves nothing:
-- MP011 no such account, MP012 the merchant's own account, MP013 not a vendor account,
-- MP014 not active, MP015 other currency; mp_post's MP003 when the balance is short.
-- Returns one row per vendor in request order.
CREATE FUNCTION mp_transfer(p_merchant bigint, p_currency text, p_accounts text[],
                            p_amounts bigint[], p_timezone text)
RETURNS TABLE (transfer_id text, amount bigint, transaction_date text)
LANGUAGE plpgsql AS $$
DECLARE
    v_ids bigint[] := '{}';
    v_acc record;
    v_merchant_account bigint;
    v_tx bigint;
    v_total bigint := 0;
    i int;
BEGIN
    FOR i IN 1 .. cardinality(p_accounts) LOOP
        SELECT a.id, a.kind, a.status, a.currency, a.merchant_id INTO v_acc
        FROM accounts a WHERE a.account_number = p_accounts[i];
        IF NOT FOUND THEN
            RAISE EXCEPTION 'no such account' USING ERRCODE = 'MP011', DETAIL = i - 1;
        ELSIF v_acc.kind = 'merchant' AND v_acc.merchant_id = p_merchant THEN
            RAISE EXCEPTION 'the merchant''s own account' USING ERRCODE = 'MP012', DETAIL = i - 1;
        ELSIF v_acc.kind <> 'vendor' THEN
            RAISE EXCEPTION 'not a vendor account' USING ERRCODE = 'MP013', DETAIL = i - 1;
        ELSIF v_acc.status <> 'active' THEN
            RAISE EXCEPTION 'not active' USING ERRCODE = 'MP014', DETAIL = i - 1;
        ELSIF v_acc.currency <> p_currency THEN
            RAISE EXCEPTION 'holds %, not %', v_acc.currency, p_currency
                USING ERRCODE = 'MP015', DETAIL = i - 1;
        END IF;
        v_ids := v_ids || v_acc.id;
        v_total := v_total + p_amounts[i];
    END LOOP;
    v_merchant_account := mp_merchant_account(p_merchant, p_currency);
    v_tx := mp_post('transfer', p_merchant, 'multi-vendor transfer', p_currency,
                    v_merchant_account || v_ids,
                    (-v_total) || p_amounts);
    RETURN QUERY
    INSERT INTO transfers (id, ledger_transaction_id, merchant_id, vendor_account_id, amount,
                           position)
    SELECT 'tr_' || replace(gen_random_uuid()::text, '-', ''), v_tx, p_merchant, x.account,
           x.amount, (x.ord - 1)::int
    FROM unnest(v_ids, p_amounts) WITH ORDINALITY AS x(account, amount, ord)
    ORDER BY x.ord
    RETURNING transfers.id, transfers.amount,
              to_char(transfers.created_at AT TIME ZONE p_timezone, 'YYYY-MM-DD HH24:MI:SS');
END
$$;

CREATE VIEW settlements_per_day AS
SELECT t.merchant_id, a.currency, (t.created_at AT TIME ZONE 'UTC')::date AS day,
       count(DISTINCT t.ledger_transaction_id) AS transfers, count(*) AS vendor_credits,
       sum(t.amount) AS total
FROM transfers t JOIN accounts a ON a.id = t.vendor_account_id
GROUP BY 1, 2, 3;
