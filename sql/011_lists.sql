-- Lists: every collection of the merchant API paged the same way (marketpay-api(7), LISTS).
-- Newest first, by (created_at, id), with keyset paging: a page starts strictly after (or
-- before) its cursor's (created_at, id), never at an OFFSET, so rows that arrive while a
-- merchant pages are never shown twice and never push a row off a page.
--
-- One generic function, mp_list, over one view per collection. Each view has the same
-- columns: owner (whose rows: the merchant, or for balance transactions the merchant's
-- settlement account), id (the key the API's cursor names, in its own type), created_at,
-- f1 and f2 (the collection's two filters, text), and object (the item as the API shows it).
-- The collection's name picks the view from a fixed table inside mp_list: no identifier
-- ever comes from a request.

-- The keyset indexes: the owner, then the order, so a page is one index range scan.
CREATE INDEX payment_sessions_keyset ON payment_sessions (merchant_id, created_at, id);
CREATE INDEX refunds_keyset ON refunds (merchant_id, created_at, id);
CREATE INDEX transfers_keyset ON transfers (merchant_id, created_at, id);
CREATE INDEX ledger_entries_keyset ON ledger_entries (account_id, created_at, id);
DROP INDEX payment_sessions_merchant, refunds_merchant, transfers_merchant;

-- An entry is written under its account's row lock (mp_post): with the clock at the insert,
-- rather than at the start of its transaction, an account's entries in (created_at, id)
-- order are in version order, so a page of balance transactions is a piece of one chain.
ALTER TABLE ledger_entries ALTER COLUMN created_at SET DEFAULT clock_timestamp();

-- Transfers: the request they came in (one group id for all of its transfers) and its
-- Idempotency-Key, kept here because idempotency records are purged after a day. The key
-- reaches the insert through the transaction's setting marketpay.idempotency_key, which
-- the worker sets when it takes the key's lock (DB_IDEM_LOCK).
ALTER TABLE transfers
    ADD COLUMN group_id text CHECK (group_id ~ '^trg_[0-9a-f]{32}$'),
    ADD COLUMN idempotency_key text CHECK (char_length(idempotency_key) BETWEEN 1 AND 255);
COMMENT ON COLUMN transfers.group_id IS 'Shared by every transfer of one send-money-MultiVendor request (NULL before migration 011)';

CREATE FUNCTION mp_transfer_group() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Rows inserted before this one by the same statement are visible here.
    SELECT t.group_id INTO NEW.group_id FROM transfers t
    WHERE t.ledger_transaction_id = NEW.ledger_transaction_id LIMIT 1;
    NEW.group_id := coalesce(NEW.group_id, 'trg_' || replace(gen_random_uuid()::text, '-', ''));
    NEW.idempotency_key := nullif(current_setting('marketpay.idempotency_key', true), '');
    RETURN NEW;
END
$$;
CREATE TRIGGER transfers_group BEFORE INSERT ON transfers
    FOR EACH ROW EXECUTE FUNCTION mp_transfer_group();

-- The API's objects, built once here for GET one and for the lists.
-- A session as GET sessions/{id} shows it, without "url" (the worker's checkout_base_url).
CREATE FUNCTION mp_session_json(s payment_sessions) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE
RETURN json_build_object(
    'session_id', s.id,
    'status', mp_session_status(s.status, s.expires_at),
    'amount', mp_money_text(s.amount),
    'currency', s.currency,
    'user_id', s.user_id,
    'email', s.email,
    'redirect_success_url', s.redirect_success_url,
    'redirect_failure_url', s.redirect_failure_url,
    'items', (SELECT coalesce(json_agg(json_build_object('id', i.item_id, 'name', i.name,
                  'price', mp_money_text(i.price)) ORDER BY i.position), '[]')
              FROM session_items i WHERE i.session_id = s.id),
    'created_at', mp_iso(s.created_at),
    'expires_at', mp_iso(s.expires_at),
    'transaction_id', s.transaction_id::text,
    'paid_at', mp_iso(s.paid_at),
    'payment_method', s.payment_method,
    'failure_reason', s.failure_reason,
    'amount_refunded', mp_money_text(s.amount_refunded),
    'refunds', (SELECT coalesce(json_agg(mp_refund_json(r) ORDER BY r.created_at, r.id), '[]')
                FROM refunds r WHERE r.session_id = s.id));

CREATE FUNCTION mp_transfer_json(t transfers) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE
RETURN (SELECT json_build_object(
    'id', t.id,
    'account_number', a.account_number,
    'amount', mp_money_text(t.amount),
    'amount_reversed', mp_money_text(t.amount_reversed),
    'currency', a.currency,
    'created_at', mp_iso(t.created_at),
    'transaction_id', t.ledger_transaction_id::text,
    'group_id', t.group_id,
    'idempotency_key', t.idempotency_key)
    FROM accounts a WHERE a.id = t.vendor_account_id);

-- A balance transaction: one ledger entry of a merchant's settlement account. Its type is
-- the ledger transaction's kind ('reversal' is 'transfer_reversal'); its source the object
-- that moved the money: the session paid, the refund (whose entry is the net of the refund
-- and the reversals it carried), the request's first transfer, the reversal.
CREATE VIEW mp_balance_transactions AS
SELECT e.account_id, e.id, e.created_at,
       CASE t.kind WHEN 'reversal' THEN 'transfer_reversal' ELSE t.kind END AS type,
       e.amount, e.balance_before, e.balance_after, a.currency, e.transaction_id,
       CASE t.kind
           WHEN 'payment' THEN (SELECT s.id::text FROM payment_sessions s
                                WHERE s.transaction_id = t.id)
           WHEN 'refund' THEN (SELECT r.id FROM refunds r WHERE r.ledger_transaction_id = t.id)
           WHEN 'transfer' THEN (SELECT x.id FROM transfers x
                                 WHERE x.ledger_transaction_id = t.id AND x.position = 0)
           WHEN 'reversal' THEN (SELECT v.id FROM transfer_reversals v
                                 WHERE v.ledger_transaction_id = t.id LIMIT 1)
       END AS source
FROM ledger_entries e
JOIN accounts a ON a.id = e.account_id
JOIN ledger_transactions t ON t.id = e.transaction_id;

CREATE INDEX payment_sessions_transaction ON payment_sessions (transaction_id)
    WHERE transaction_id IS NOT NULL;
CREATE INDEX transfer_reversals_transaction ON transfer_reversals (ledger_transaction_id);

CREATE FUNCTION mp_balance_transaction_json(b mp_balance_transactions) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE
RETURN json_build_object(
    'id', 'btx_' || b.id,
    'type', b.type,
    'amount', mp_money_text(b.amount),
    'balance_after', mp_money_text(b.balance_after),
    'currency', b.currency,
    'source', b.source,
    'transaction_id', b.transaction_id::text,
    'created_at', mp_iso(b.created_at));

-- The collections, as mp_list reads them.
CREATE VIEW mp_list_sessions AS
SELECT s.merchant_id AS owner, s.id, s.created_at, s.user_id AS f1,
       mp_session_status(s.status, s.expires_at) AS f2, mp_session_json(s) AS object
FROM payment_sessions s;

CREATE VIEW mp_list_refunds AS
SELECT r.merchant_id AS owner, r.id, r.created_at, r.session_id::text AS f1, NULL::text AS f2,
       mp_refund_json(r) AS object
FROM refunds r;

CREATE VIEW mp_list_transfers AS
SELECT t.merchant_id AS owner, t.id, t.created_at, a.account_number AS f1, NULL::text AS f2,
       mp_transfer_json(t) AS object
FROM transfers t JOIN accounts a ON a.id = t.vendor_account_id;

CREATE VIEW mp_list_balance_transactions AS
SELECT b.account_id AS owner, b.id, b.created_at, b.type AS f1, NULL::text AS f2,
       mp_balance_transaction_json(b) AS object
FROM mp_balance_transactions b;

-- The merchant's settlement account in its currency, or NULL when it was never paid.
CREATE FUNCTION mp_settlement_account(p_merchant bigint) RETURNS bigint
LANGUAGE sql STABLE
RETURN (SELECT a.id FROM accounts a JOIN merchants m ON m.id = a.merchant_id
        WHERE a.merchant_id = p_merchant AND a.kind = 'merchant' AND a.currency = m.currency);

-- The creation time of the item p_id (NULL: none) of view p_view, which must be p_owner's:
-- else MP039 naming the parameter p_param.
CREATE FUNCTION mp_list_cursor(p_view text, p_idtype text, p_prefix text, p_owner bigint,
                               p_id text, p_param text, p_thing text)
RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_at timestamptz;
BEGIN
    IF p_id IS NULL THEN
        RETURN NULL;
    END IF;
    IF p_owner IS NOT NULL AND starts_with(p_id, p_prefix) THEN
        EXECUTE format('SELECT created_at FROM %I WHERE owner = $1 AND id = $2::%s', p_view,
                       p_idtype)
            INTO v_at USING p_owner, substr(p_id, length(p_prefix) + 1);
    END IF;
    IF v_at IS NULL THEN
        RAISE EXCEPTION '%: no such %', p_param, p_thing USING ERRCODE = 'MP039';
    END IF;
    RETURN v_at;
END
$$;

-- One page of collection p_collection of merchant p_merchant, newest first: at most p_limit
-- items (NULL: all), created in [p_gte, p_lt) (either NULL: unbounded), f1 = p_f1 and
-- f2 = p_f2 where given, strictly older than the item p_after and strictly newer than the
-- item p_before. With p_before alone (and not p_desc) the page is the one nearest to
-- p_before, the API's previous page; otherwise the newest of the range (p_desc: the CSV's
-- batches, which walk the whole range downward). A cursor that is not the merchant's item
-- raises MP039 naming the API's parameter. The caller asks one more than it shows to learn
-- whether there are more.
CREATE FUNCTION mp_list(p_collection text, p_merchant bigint, p_limit int, p_after text,
                        p_before text, p_gte timestamptz, p_lt timestamptz, p_f1 text,
                        p_f2 text, p_desc boolean)
RETURNS SETOF json
LANGUAGE plpgsql STABLE AS $$
DECLARE
    c record;
    v_owner bigint;
    v_after timestamptz;
    v_before timestamptz;
    v_up boolean := p_before IS NOT NULL AND p_after IS NULL AND NOT p_desc;
BEGIN
    SELECT x.* INTO c FROM (VALUES
        ('sessions', 'mp_list_sessions', 'uuid', '', 'payment session'),
        ('refunds', 'mp_list_refunds', 'text', '', 'refund'),
        ('transfers', 'mp_list_transfers', 'text', '', 'transfer'),
        ('balance_transactions', 'mp_list_balance_transactions', 'bigint', 'btx_',
         'balance transaction'))
        AS x(name, view, idtype, prefix, thing)
    WHERE x.name = p_collection;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'mp_list: no collection %', p_collection;
    END IF;
    v_owner := CASE WHEN p_collection = 'balance_transactions'
                    THEN mp_settlement_account(p_merchant) ELSE p_merchant END;
    v_after := mp_list_cursor(c.view, c.idtype, c.prefix, v_owner, p_after, 'starting_after',
                              c.thing);
    v_before := mp_list_cursor(c.view, c.idtype, c.prefix, v_owner, p_before, 'ending_before',
                               c.thing);
    IF v_owner IS NULL THEN
        RETURN;
    END IF;
    -- Before a cursor, the page nearest to it is the oldest ones: taken ascending, then
    -- turned round.
    RETURN QUERY EXECUTE format(
        'SELECT object FROM (SELECT object, created_at, id FROM %1$I WHERE owner = $1'
        ' AND ($2::timestamptz IS NULL OR created_at >= $2)'
        ' AND ($3::timestamptz IS NULL OR created_at < $3)'
        ' AND ($4::text IS NULL OR f1 = $4) AND ($5::text IS NULL OR f2 = $5)'
        ' AND ($6::timestamptz IS NULL OR (created_at, id) < ($6, $7::%2$s))'
        ' AND ($8::timestamptz IS NULL OR (created_at, id) > ($8, $9::%2$s))'
        ' ORDER BY created_at %3$s, id %3$s LIMIT $10) x ORDER BY created_at DESC, id DESC',
        c.view, c.idtype, CASE WHEN v_up THEN 'ASC' ELSE 'DESC' END)
    USING v_owner, p_gte, p_lt, p_f1, p_f2, v_after, substr(p_after, length(c.prefix) + 1),
          v_before, substr(p_before, length(c.prefix) + 1), p_limit;
END
$$;

-- The balance: the settlement account's, or none yet (a merchant never paid).
CREATE FUNCTION mp_balance_json(p_merchant bigint) RETURNS json
LANGUAGE sql STABLE
RETURN (SELECT json_build_object(
            'available', mp_money_text(coalesce(a.balance, 0)),
            'currency', m.currency,
            'account_number', a.account_number)
        FROM merchants m LEFT JOIN accounts a ON a.id = mp_settlement_account(m.id)
        WHERE m.id = p_merchant);

-- Privileges: the workers read the collections through mp_list (the views run as their
-- owner, like the tables the workers already read) and the balance.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
GRANT SELECT ON mp_list_sessions, mp_list_refunds, mp_list_transfers,
    mp_list_balance_transactions, mp_balance_transactions TO marketpay_app, marketpay_readonly;
GRANT EXECUTE ON FUNCTION mp_list(text, bigint, int, text, text, timestamptz, timestamptz,
    text, text, boolean), mp_list_cursor(text, text, text, bigint, text, text, text),
    mp_session_json(payment_sessions), mp_transfer_json(transfers),
    mp_balance_transaction_json(mp_balance_transactions), mp_settlement_account(bigint),
    mp_balance_json(bigint)
    TO marketpay_app, marketpay_readonly;

-- The operator's daily settlement summary (marketpayctl report settlements): per merchant,
-- currency and UTC day, what its settlement account took in and gave out, by type (minor
-- units; refunds net of the reversals they carried, as in mp_balance_transactions).
CREATE VIEW merchant_settlement_days AS
SELECT a.merchant_id, b.currency, (b.created_at AT TIME ZONE 'UTC')::date AS day,
       coalesce(sum(b.amount) FILTER (WHERE b.type = 'payment'), 0)::bigint AS payments,
       coalesce(sum(b.amount) FILTER (WHERE b.type = 'refund'), 0)::bigint AS refunds,
       coalesce(sum(b.amount) FILTER (WHERE b.type = 'transfer'), 0)::bigint AS transfers,
       coalesce(sum(b.amount) FILTER (WHERE b.type = 'transfer_reversal'), 0)::bigint
           AS reversals,
       coalesce(sum(b.amount) FILTER (WHERE b.type IN ('deposit', 'adjustment')), 0)::bigint
           AS other,
       sum(b.amount)::bigint AS net, count(*) AS entries
FROM mp_balance_transactions b JOIN accounts a ON a.id = b.account_id
WHERE a.kind = 'merchant'
GROUP BY 1, 2, 3;
GRANT SELECT ON merchant_settlement_days TO marketpay_readonly;
