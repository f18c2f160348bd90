-- bench/webhooks' ceiling B: the outbox's claim-and-mark SQL as marketpay-webhookd's sender
-- sends it (src/webhook_sql.c), without the HTTP in between: mp_webhook_claim leases a batch
-- of due events (at most :max, :per of one merchant, for :lease seconds), committed; then
-- mp_webhook_record marks that batch delivered in one statement, committed, as a sender
-- records its finished attempts. Each pgbench client is one sender (its owner name made of
-- its client id). The arrays are those the sender builds, one element per event: outcome,
-- retry delay, URL (:url, as long as the receivers'), HTTP status, error, duration, down.
-- Variables: max, per, lease, url (-D).
SELECT coalesce(array_agg(id), '{}') AS ids, count(*) AS n
FROM mp_webhook_claim('pgbench:' || :client_id, :max::int, :per::int, :lease::int) \gset
SELECT mp_webhook_record('pgbench:' || :client_id, :ids::text[],
    array_fill('delivered'::text, ARRAY[:n::int]), array_fill(0, ARRAY[:n::int]),
    array_fill(:url::text, ARRAY[:n::int]), array_fill(204, ARRAY[:n::int]),
    array_fill(NULL::text, ARRAY[:n::int]), array_fill(100, ARRAY[:n::int]),
    array_fill(false, ARRAY[:n::int]), 5, 30);
