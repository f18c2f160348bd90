-- pgbench side of GET /checkout/{id}: the one statement the worker sends for the page
-- (src/worker_sql.c: checkout_get, the session and its items, one row per item), with
-- -M prepared like the worker's prepared statements. Variables from -D:   sid  the session's id
-- (HH24\x3aMI is the worker's HH24:MI: pgbench would take :MI for a variable.)
SELECT x.*, i.name, i.price FROM (SELECT s.id, mp_session_status(s.status, s.expires_at), s.amount, s.currency, s.redirect_success_url, s.redirect_failure_url, s.user_id, to_char(s.expires_at AT TIME ZONE 'UTC', E'YYYY-MM-DD HH24\x3aMI'), m.name, s.failure_reason, s.locale FROM payment_sessions s JOIN merchants m ON m.id = s.merchant_id WHERE s.id = :sid::uuid OFFSET 0) x LEFT JOIN session_items i ON i.session_id = x.id ORDER BY i.position;
