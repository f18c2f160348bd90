-- The double-entry ledger: accounts, transactions and their entries.
-- Invariants kept by the database itself, not only by C:
--   * every ledger transaction has at least two entries and they sum to zero (checked at
--     commit by a deferred constraint trigger);
--   * entries and transactions are append-only (UPDATE, DELETE and TRUNCATE are refused);
--   * a non-system account never goes below zero (CHECK);
--   * each entry records the account's balance before and after and the account's new
--     version, UNIQUE (account_id, version): every account has one linear history.
-- Money is bigint minor units.

CREATE TABLE accounts (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_number   text NOT NULL UNIQUE CHECK (account_number ~ '^[A-Z]{2}[0-9]{10}$'),
    kind             text NOT NULL CHECK (kind IN ('merchant', 'vendor', 'customer', 'system')),
    merchant_id      bigint REFERENCES merchants (id),
    currency         text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    status           text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'frozen', 'closed')),
    balance          bigint NOT NULL DEFAULT 0,
    version          bigint NOT NULL DEFAULT 0 CHECK (version >= 0),
    name             text CHECK (char_length(name) <= 200),
    pin_digest       bytea CHECK (length(pin_digest) = 32),
    pin_failures     int NOT NULL DEFAULT 0 CHECK (pin_failures >= 0),
    pin_locked_until timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CHECK (kind = 'system' OR balance >= 0),
    CHECK (kind <> 'merchant' OR merchant_id IS NOT NULL)
);
CREATE INDEX accounts_merchant ON accounts (merchant_id, kind) WHERE merchant_id IS NOT NULL;
-- One funding account per currency: deposits come from it.
CREATE UNIQUE INDEX accounts_one_funding ON accounts (currency) WHERE kind = 'system';
-- One settlement account per merchant and currency: payments are credited to it.
CREATE UNIQUE INDEX accounts_one_merchant_account ON accounts (merchant_id, currency)
    WHERE kind = 'merchant';
COMMENT ON COLUMN accounts.pin_digest IS 'HMAC-SHA256 of the wallet PIN under the pepper file; the PIN itself is never stored';

CREATE TABLE ledger_transactions (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        text NOT NULL CHECK (kind IN ('deposit', 'payment', 'transfer', 'adjustment')),
    merchant_id bigint REFERENCES merchants (id),
    reference   text CHECK (char_length(reference) <= 200),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_transactions_merchant ON ledger_transactions (merchant_id, created_at);

CREATE TABLE ledger_entries (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transaction_id bigint NOT NULL REFERENCES ledger_transactions (id),
    account_id     bigint NOT NULL REFERENCES accounts (id),
    amount         bigint NOT NULL CHECK (amount <> 0),
    balance_before bigint NOT NULL,
    balance_after  bigint NOT NULL,
    version        bigint NOT NULL CHECK (version > 0),
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, version),
    CHECK (balance_after = balance_before + amount)
);
CREATE INDEX ledger_entries_transaction ON ledger_entries (transaction_id);

-- Append-only: the history is never rewritten; a correction is a new transaction.
CREATE FUNCTION mp_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION mp_refuse_change();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
    FOR EACH STATEMENT EXECUTE FUNCTION mp_refuse_change();
CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions
    FOR EACH ROW EXECUTE FUNCTION mp_refuse_change();
CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions
    FOR EACH STATEMENT EXECUTE FUNCTION mp_refuse_change();

-- At commit: each transaction touched has >= 2 entries summing to zero.
CREATE FUNCTION mp_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v_sum bigint;
    v_n int;
BEGIN
    SELECT coalesce(sum(amount), 0), count(*) INTO v_sum, v_n
    FROM ledger_entries WHERE transaction_id = NEW.transaction_id;
    IF v_n < 2 OR v_sum <> 0 THEN
        RAISE EXCEPTION 'ledger transaction % is unbalanced: % entries summing to %',
            NEW.transaction_id, v_n, v_sum USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION mp_check_balanced();

-- Balances and versions change only together with an entry: a direct UPDATE of balance or
-- version outside mp_post() is refused.
CREATE FUNCTION mp_guard_balance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW.balance, NEW.version) IS DISTINCT FROM (OLD.balance, OLD.version)
       AND coalesce(current_setting('marketpay.posting', true), '') <> 'on' THEN
        RAISE EXCEPTION 'account % balance changes only through mp_post()', OLD.account_number
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER accounts_guard_balance BEFORE UPDATE ON accounts
    FOR EACH ROW EXECUTE FUNCTION mp_guard_balance();

-- Posts one balanced ledger transaction in one call. p_accounts and p_amounts pair up
-- (signed minor units, debits negative; each account once). Locks the accounts in id order
-- (a fixed order: no deadlocks between postings), checks that each is active and in
-- p_currency and that no non-system account would go below zero, writes the entries and
-- the new balances. SQLSTATEs for the callers: MP001 account unknown or not active, MP002
-- currency mismatch, MP003 insufficient funds, MP004 malformed posting.
CREATE FUNCTION mp_post(p_kind text, p_merchant bigint, p_reference text, p_currency text,
                        p_accounts bigint[], p_amounts bigint[])
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_tx bigint;
    v_acc record;
    v_seen int := 0;
BEGIN
    IF p_accounts IS NULL OR p_amounts IS NULL OR cardinality(p_accounts) < 2
       OR cardinality(p_accounts) <> cardinality(p_amounts)
       OR (SELECT count(DISTINCT a) FROM unnest(p_accounts) a) <> cardinality(p_accounts)
       OR EXISTS (SELECT 1 FROM unnest(p_amounts) a WHERE a IS NULL OR a = 0)
       OR (SELECT sum(a) FROM unnest(p_amounts) a) <> 0 THEN
        RAISE EXCEPTION 'malformed posting' USING ERRCODE = 'MP004';
    END IF;
    INSERT INTO ledger_transactions (kind, merchant_id, reference)
    VALUES (p_kind, p_merchant, p_reference) RETURNING id INTO v_tx;
    PERFORM set_config('marketpay.posting', 'on', true);
    FOR v_acc IN
        SELECT a.id, a.account_number, a.kind, a.status, a.currency, a.balance, a.version,
               x.amount
        FROM accounts a
        JOIN unnest(p_accounts, p_amounts) AS x(account, amount) ON x.account = a.id
        ORDER BY a.id FOR UPDATE OF a
    LOOP
        v_seen := v_seen + 1;
        IF v_acc.status <> 'active' THEN
            RAISE EXCEPTION 'account % is %', v_acc.account_number, v_acc.status
                USING ERRCODE = 'MP001';
        END IF;
        IF v_acc.currency <> p_currency THEN
            RAISE EXCEPTION 'account % holds %, not %', v_acc.account_number, v_acc.currency,
                p_currency USING ERRCODE = 'MP002';
        END IF;
        IF v_acc.kind <> 'system' AND v_acc.balance + v_acc.amount < 0 THEN
            RAISE EXCEPTION 'insufficient funds in account %', v_acc.account_number
                USING ERRCODE = 'MP003';
        END IF;
        INSERT INTO ledger_entries (transaction_id, account_id, amount, balance_before,
                                    balance_after, version)
        VALUES (v_tx, v_acc.id, v_acc.amount, v_acc.balance, v_acc.balance + v_acc.amount,
                v_acc.version + 1);
        UPDATE accounts SET balance = balance + v_acc.amount, version = version + 1
        WHERE id = v_acc.id;
    END LOOP;
    IF v_seen <> cardinality(p_accounts) THEN
        RAISE EXCEPTION 'unknown account in posting' USING ERRCODE = 'MP001';
    END IF;
    PERFORM set_config('marketpay.posting', 'off', true);
    RETURN v_tx;
END
$$;

-- Views for DBAs.
CREATE VIEW account_balances AS
SELECT a.account_number, a.kind, a.merchant_id, a.currency, a.status, a.balance,
       a.version, a.created_at
FROM accounts a;

-- Per currency, every entry ever posted sums to zero: the trial balance must read 0.
CREATE VIEW trial_balance AS
SELECT a.currency, sum(e.amount) AS total, count(*) AS entries,
       sum(e.amount) FILTER (WHERE e.amount > 0) AS credits,
       -sum(e.amount) FILTER (WHERE e.amount < 0) AS debits
FROM ledger_entries e JOIN accounts a ON a.id = e.account_id
GROUP BY a.currency;

CREATE VIEW account_statement AS
SELECT a.account_number, e.version, e.created_at, t.id AS transaction_id, t.kind,
       t.reference, e.amount, e.balance_before, e.balance_after,
       sum(e.amount) OVER (PARTITION BY e.account_id ORDER BY e.version) AS running_balance
FROM ledger_entries e
JOIN accounts a ON a.id = e.account_id
JOIN ledger_transactions t ON t.id = e.transaction_id;
