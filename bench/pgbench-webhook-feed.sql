-- bench/webhooks' feed: one event enqueued in a transaction of its own, as a payment enqueues
-- its payment.succeeded, for one of :n merchants (:ids, a bigint[] literal) taken at random;
-- the outbox's trigger NOTIFYs marketpay-webhookd. Run at a fixed rate (pgbench -R).
-- Variables: ids, n, body (-D).
\set i random(1, :n)
INSERT INTO webhook_events (id, merchant_id, type, body)
VALUES ('evt_' || replace(gen_random_uuid()::text, '-', ''), (:ids::bigint[])[:i], 'test', :body);
