-- What GET /checkout/{id} sent before it became one statement (bench/pgbench-checkout-page.sql):
-- checkout_get, the session, then session_items, its items, each in its own implicit
-- transaction, -M prepared. bench/checkout-page and bench/pg-instructions (case
-- checkout-page-two) measure it beside the one statement. Variables from -D:   sid
-- (HH24\x3aMI is the worker's HH24:MI: pgbench would take :MI for a variable.)
SELECT s.id, mp_session_status(s.status, s.expires_at), s.amount, s.currency, s.redirect_success_url, s.redirect_failure_url, s.user_id, to_char(s.expires_at AT TIME ZONE 'UTC', E'YYYY-MM-DD HH24\x3aMI'), m.name, s.failure_reason, s.locale FROM payment_sessions s JOIN merchants m ON m.id = s.merchant_id WHERE s.id = :sid::uuid;
SELECT item_id, name, price FROM session_items WHERE session_id = :sid::uuid ORDER BY position;
