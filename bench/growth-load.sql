-- Preloads a marketpay database with the history of a busy service, for bench/growth and
-- tests/growth-load.sh (run by bench/growth-load, as the database owner, with psql -v):
--   sessions   how many payment sessions (each with 2 items)
--   batch      sessions per transaction (committed one by one; progress on stderr)
--   merchants  how many merchants share them (a skewed share: a few big ones, many small)
--   days       the sessions' created_at spread evenly over this many days before now
--   currency   the merchants' currency (the config's sandbox default is AFN)
--   triggers   on: every trigger and foreign key fires, as for rows the service writes;
--              off: session_replication_role = replica, as pg_restore --disable-triggers
--              (needs a superuser; ten times faster; marketpayctl ledger verify checks after)
-- The rows are shaped like the service's own: 65 % of the sessions paid by the sandbox test
-- card (a payment transaction with its two balanced ledger entries, the funding account's
-- and the merchant's version chains and balances carried on), 30 % expired, 5 % canceled,
-- none open; an Idempotency-Key record for 30 %; an event for each session's end
-- (payment.succeeded, session.expired, session.canceled), 99 % delivered with one attempt,
-- 1 % dead after 8. No session is open, so marketpay-webhookd has nothing to expire.
\set ON_ERROR_STOP 1
SET synchronous_commit = off;  -- a crash mid-load means loading again, nothing else
CREATE TEMP TABLE growth_params AS SELECT :sessions::bigint AS sessions, :batch::bigint AS batch,
    :merchants::int AS merchants, :days::int AS days, :'currency'::text AS currency,
    now() - interval '1 hour' AS t_end;

-- The merchants (through their insert trigger: the webhook endpoint rows), an API key and a
-- settlement account each, and the currency's funding account.
CREATE TEMP TABLE growth_merchants AS
WITH m AS (
    INSERT INTO merchants (name, currency, webhook_url)
    SELECT 'Growth merchant ' || i, p.currency, 'https://shop-' || i || '.example/hooks'
    FROM growth_params p, generate_series(1, p.merchants) i
    RETURNING id)
SELECT row_number() OVER (ORDER BY id) AS idx, id FROM m;
INSERT INTO api_keys (merchant_id, prefix, digest, environment)
SELECT id, 'mp_test_' || substr(md5(id::text), 1, 8), sha256(('growth-key-' || id)::bytea), 'sandbox'
FROM growth_merchants;
SELECT count(mp_merchant_account(id, (SELECT currency FROM growth_params))) FROM growth_merchants;
SELECT mp_funding_account(currency) FROM growth_params;
-- The bulk of the rows: with or without their triggers (the merchants above had theirs).
SELECT set_config('session_replication_role', CASE :'triggers' WHEN 'off' THEN 'replica'
    ELSE 'origin' END, false);

CREATE TEMP TABLE growth_batch (n bigint, id uuid, merchant bigint, created timestamptz,
    st text, a1 bigint, a2 bigint, tx bigint, ended timestamptz, evt text);

DO $load$
DECLARE
    p growth_params%ROWTYPE;
    v_lo bigint := 1;
    v_hi bigint;
    v_fund bigint;
    v_step interval;
    v_started timestamptz := clock_timestamp();
BEGIN
    SELECT * INTO p FROM growth_params;
    v_fund := mp_funding_account(p.currency);
    v_step := (p.days * interval '1 day') / p.sessions;
    WHILE v_lo <= p.sessions LOOP
        v_hi := least(v_lo + p.batch - 1, p.sessions);
        TRUNCATE growth_batch;
        -- One row per session, in the order they were made. The merchant: the square of a
        -- uniform draw, so the first merchants get most sessions.
        INSERT INTO growth_batch
        SELECT n, gen_random_uuid(), m.id, c.created,
               CASE WHEN n % 20 < 13 THEN 'paid' WHEN n % 20 < 19 THEN 'expired' ELSE 'canceled' END,
               100 + (n * 7919) % 9900, 50 + (n * 104729) % 1950,
               CASE WHEN n % 20 < 13 THEN nextval(pg_get_serial_sequence('ledger_transactions', 'id')) END,
               CASE WHEN n % 20 < 13 THEN c.created + (20 + (n * 31) % 600) * interval '1 second'
                    WHEN n % 20 < 19 THEN c.created + interval '30 minutes'
                    ELSE c.created + interval '5 minutes' END,
               'evt_' || replace(gen_random_uuid()::text, '-', '')
        FROM generate_series(v_lo, v_hi) n
        CROSS JOIN LATERAL (SELECT p.t_end - p.days * interval '1 day' + (n - 1) * v_step AS created,
            1 + floor(p.merchants * ((hashint8(n) & 2147483647) / 2147483648.0) ^ 2)::int AS idx) c
        JOIN growth_merchants m ON m.idx = c.idx
        ORDER BY n;

        INSERT INTO ledger_transactions (id, kind, merchant_id, reference, created_at)
        OVERRIDING SYSTEM VALUE
        SELECT tx, 'payment', merchant, 'session ' || id, ended FROM growth_batch
        WHERE tx IS NOT NULL ORDER BY tx;

        INSERT INTO payment_sessions (id, merchant_id, status, amount, currency, user_id, email,
            redirect_success_url, redirect_failure_url, created_at, expires_at, paid_at,
            payment_method, transaction_id, card_brand, card_last4, closed_at)
        SELECT id, merchant, st, a1 + a2, p.currency, 'order-' || n,
               CASE WHEN n % 3 <> 0 THEN 'buyer' || n % 100000 || '@example.com' END,
               'https://shop.example/ok', 'https://shop.example/fail', created,
               created + interval '30 minutes', CASE WHEN st = 'paid' THEN ended END,
               CASE WHEN st = 'paid' THEN 'test_card' END, tx,
               CASE WHEN st = 'paid' THEN 'visa' END, CASE WHEN st = 'paid' THEN '4242' END, ended
        FROM growth_batch ORDER BY n;

        INSERT INTO session_items (session_id, position, item_id, name, price)
        SELECT id, i.pos, i.item_id, i.name, i.price FROM growth_batch,
            LATERAL (VALUES (0, 'sku-' || n % 5000, 'Item ' || n % 5000, a1),
                            (1, 'ship', 'Shipping', a2)) i(pos, item_id, name, price)
        ORDER BY n, i.pos;

        -- The two entries of each payment: the funding account pays, the merchant's
        -- settlement account is credited; each account's versions and balances run on from
        -- what it holds now, in the order of the transactions.
        INSERT INTO ledger_entries (transaction_id, account_id, amount, balance_before,
            balance_after, version, created_at)
        SELECT tx, account, amount, balance + run - amount, balance + run, version + k, ended
        FROM (
            SELECT e.tx, e.account, e.amount, e.ended, a.balance, a.version,
                   sum(e.amount) OVER w AS run, row_number() OVER w AS k, e.side
            FROM (SELECT tx, v_fund AS account, -(a1 + a2) AS amount, ended, 0 AS side
                  FROM growth_batch WHERE tx IS NOT NULL
                  UNION ALL
                  SELECT b.tx, ma.id, a1 + a2, ended, 1
                  FROM growth_batch b JOIN accounts ma ON ma.merchant_id = b.merchant
                      AND ma.kind = 'merchant' AND ma.currency = p.currency
                  WHERE b.tx IS NOT NULL) e
            JOIN accounts a ON a.id = e.account
            WINDOW w AS (PARTITION BY e.account ORDER BY e.tx)) x
        ORDER BY tx, side;
        -- As mp_post() does: the balance guard lets this transaction's postings through.
        PERFORM set_config('marketpay.posting', 'on', true);
        UPDATE accounts a SET balance = a.balance + s.total, version = a.version + s.n
        FROM (SELECT e.account_id, sum(e.amount) AS total, count(*) AS n FROM ledger_entries e
              JOIN growth_batch b ON b.tx = e.transaction_id GROUP BY e.account_id) s
        WHERE a.id = s.account_id;

        INSERT INTO idempotency_keys (merchant_id, key, request_hash, status_code, body, created_at)
        SELECT merchant, 'order-' || n, sha256(('growth-' || n)::bytea), 200,
               json_build_object('status_code', 10, 'success', true,
                   'message', 'Payment session created.',
                   'url', 'https://pay.example/checkout/' || id,
                   'expires_at', mp_iso(created + interval '30 minutes'), 'session_id', id)::text,
               created
        FROM growth_batch WHERE n % 10 < 3 ORDER BY n;

        INSERT INTO webhook_events (id, merchant_id, type, body, status, attempts,
            next_attempt_at, created_at, delivered_at, last_error)
        SELECT evt, merchant, t.type,
               json_build_object('id', evt, 'type', t.type, 'created_at', mp_iso(ended),
                   'livemode', false, 'data', json_build_object('session_id', id,
                   'transaction_id', tx::text, 'user_id', 'order-' || n,
                   'amount', mp_money_text(a1 + a2), 'currency', p.currency,
                   'items', json_build_array(
                       json_build_object('id', 'sku-' || n % 5000, 'name', 'Item ' || n % 5000,
                                         'price', mp_money_text(a1)),
                       json_build_object('id', 'ship', 'name', 'Shipping',
                                         'price', mp_money_text(a2))),
                   'status', st, 'closed_at', mp_iso(ended)))::text,
               CASE WHEN n % 97 = 96 THEN 'dead' ELSE 'delivered' END,
               CASE WHEN n % 97 = 96 THEN 8 ELSE 1 END, ended, ended,
               CASE WHEN n % 97 <> 96 THEN ended + interval '80 milliseconds' END,
               CASE WHEN n % 97 = 96 THEN 'HTTP 500' END
        FROM growth_batch,
            LATERAL (SELECT CASE st WHEN 'paid' THEN 'payment.succeeded'
                     WHEN 'expired' THEN 'session.expired' ELSE 'session.canceled' END AS type) t
        ORDER BY n;
        INSERT INTO webhook_attempts (event_id, attempt, attempted_at, url, http_status, duration_ms)
        SELECT b.evt, a, b.ended + a * interval '1 minute', 'https://shop-' || m.idx || '.example/hooks',
               CASE WHEN b.n % 97 = 96 THEN 500 ELSE 200 END, 40 + b.n % 60
        FROM growth_batch b JOIN growth_merchants m ON m.id = b.merchant,
            generate_series(1, CASE WHEN b.n % 97 = 96 THEN 8 ELSE 1 END) a
        ORDER BY b.n, a;

        COMMIT;
        RAISE NOTICE 'growth-load: % of % sessions (% s)', v_hi, p.sessions,
            round(extract(epoch FROM clock_timestamp() - v_started));
        v_lo := v_hi + 1;
    END LOOP;
END
$load$;
RESET session_replication_role;
