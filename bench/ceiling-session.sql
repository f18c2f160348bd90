-- The tables of the minimal-insert ceiling (bench/pgbench-ceiling-session.sql), made afresh
-- by bench/create-session in its own database before the run.
DROP SCHEMA IF EXISTS ceiling CASCADE;
CREATE SCHEMA ceiling;
CREATE TABLE ceiling.sessions (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), merchant_id int NOT NULL,
  user_id text, email text, amount_minor bigint NOT NULL, currency text NOT NULL,
  redirect_success_url text, expires_at timestamptz NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE ceiling.items (session_id uuid NOT NULL REFERENCES ceiling.sessions(id), pos int NOT NULL,
  item_id text NOT NULL, name text NOT NULL, price_minor bigint NOT NULL, PRIMARY KEY (session_id, pos));
