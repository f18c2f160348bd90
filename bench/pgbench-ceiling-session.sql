-- The floor of what any implementation must ask of PostgreSQL to store one session durably
-- (issue "Performance"): a session row and its two items in one statement, in tables with
-- nothing but their keys (bench/ceiling-session.sql makes them). bench/create-session runs it
-- with pgbench -n -M prepared -c 32 -j 2 beside the service, same database, same run.
\set m random(1, 100)
WITH s AS (INSERT INTO ceiling.sessions (merchant_id, user_id, email, amount_minor, currency,
  redirect_success_url, expires_at) VALUES (:m, 'bench-1', 'b@example.com', 3750, 'AFN',
  'https://shop.example/ok', now() + interval '30 min') RETURNING id)
INSERT INTO ceiling.items SELECT s.id, v.pos, v.item_id, v.name, v.price FROM s,
  (VALUES (1, 'sku-1', 'Green tea', 1250), (2, 'sku-2', 'Cup', 2500)) v(pos, item_id, name, price);
