-- Cheaper multi-vendor transfers (the performance issue), part one: the ledger's one-column
-- rules become domains, as 018 did for sessions. PostgreSQL reads every CHECK constraint of a
-- table back from its stored form and prepares it again for each statement that writes the
-- table, whichever columns the statement sets: a transfer to five vendors writes accounts
-- (12 CHECKs), ledger_transactions (2), ledger_entries (4), transfers (7), pin_nonces (1) and
-- webhook_events (6), and that was 22 % of the instructions it cost the database (callgrind,
-- bench/pg-instructions transfer). A domain's constraints are prepared once per connection
-- and checked only when a value of the column is written. The same rules, checked on every
-- insert and update, failing with the same SQLSTATE (23514, check_violation); the rules
-- across columns stay CHECKs of their tables: accounts_check (no non-system account below
-- zero), accounts_check1, ledger_entries_check (balance_after = balance_before + amount),
-- reversals_within_amount, webhook_events_lease_whole; so does webhook_events_status_check
-- (the trigger webhook_events_notify names the column in its WHEN: it would have to be made
-- again, for one CHECK).
--
-- Applying it rewrites no table: the columns move to domains over their own types made
-- without constraints (a domain with one would make ALTER COLUMN TYPE rewrite the table), so
-- every index is kept but the partial ones whose predicate names a moved column, which are
-- rebuilt (accounts_one_funding and accounts_one_merchant_account, small); the rules are
-- then added NOT VALID and validated, which reads each table once. From its first ALTER TABLE
-- to its commit the migration holds ACCESS EXCLUSIVE locks on the six tables: payments,
-- transfers and webhook deliveries wait (seconds for millions of entries; tests/upgrade.sh
-- applies it to a database with data and checks that no table or full index was rewritten).
-- The views and SQL-bodied functions that name the moved columns (and those that depend on
-- them) are saved as DDL, dropped, and made again afterwards from their own definitions,
-- with their options, privileges and comments, what they depend on first.

CREATE DOMAIN mp_account_number AS text;
CREATE DOMAIN mp_account_kind AS text;
CREATE DOMAIN mp_account_currency AS text;
CREATE DOMAIN mp_account_status AS text;
CREATE DOMAIN mp_account_version AS bigint;
CREATE DOMAIN mp_account_name AS text;
CREATE DOMAIN mp_pin_digest AS bytea;
CREATE DOMAIN mp_pin_count AS int;
CREATE DOMAIN mp_pin_scheme AS smallint;
CREATE DOMAIN mp_ledger_kind AS text;
CREATE DOMAIN mp_ledger_reference AS text;
CREATE DOMAIN mp_entry_amount AS bigint;
CREATE DOMAIN mp_entry_version AS bigint;
CREATE DOMAIN mp_transfer_id AS text;
CREATE DOMAIN mp_transfer_amount AS bigint;
CREATE DOMAIN mp_transfer_position AS int;
CREATE DOMAIN mp_transfer_group_id AS text;
CREATE DOMAIN mp_idempotency_key AS text;
CREATE DOMAIN mp_pin_nonce AS text;
CREATE DOMAIN mp_event_id AS text;
CREATE DOMAIN mp_event_type AS text;
CREATE DOMAIN mp_event_attempts AS int;

-- The columns that move: table, column, domain, and the CHECK it replaces.
CREATE TEMP TABLE mp_026_move (tab regclass, col name, dom regtype, con name) ON COMMIT DROP;
INSERT INTO mp_026_move VALUES
    ('accounts', 'account_number', 'mp_account_number', 'accounts_account_number_check'),
    ('accounts', 'kind', 'mp_account_kind', 'accounts_kind_check'),
    ('accounts', 'currency', 'mp_account_currency', 'accounts_currency_check'),
    ('accounts', 'status', 'mp_account_status', 'accounts_status_check'),
    ('accounts', 'version', 'mp_account_version', 'accounts_version_check'),
    ('accounts', 'name', 'mp_account_name', 'accounts_name_check'),
    ('accounts', 'pin_digest', 'mp_pin_digest', 'accounts_pin_digest_check'),
    ('accounts', 'pin_failures', 'mp_pin_count', 'accounts_pin_failures_check'),
    ('accounts', 'pin_locks', 'mp_pin_count', 'accounts_pin_locks_check'),
    ('accounts', 'pin_scheme', 'mp_pin_scheme', 'accounts_pin_scheme_check'),
    ('ledger_transactions', 'kind', 'mp_ledger_kind', 'ledger_transactions_kind_check'),
    ('ledger_transactions', 'reference', 'mp_ledger_reference',
     'ledger_transactions_reference_check'),
    ('ledger_entries', 'amount', 'mp_entry_amount', 'ledger_entries_amount_check'),
    ('ledger_entries', 'version', 'mp_entry_version', 'ledger_entries_version_check'),
    ('transfers', 'id', 'mp_transfer_id', 'transfers_id_check'),
    ('transfers', 'amount', 'mp_transfer_amount', 'transfers_amount_check'),
    ('transfers', 'position', 'mp_transfer_position', 'transfers_position_check'),
    ('transfers', 'group_id', 'mp_transfer_group_id', 'transfers_group_id_check'),
    ('transfers', 'idempotency_key', 'mp_idempotency_key', 'transfers_idempotency_key_check'),
    ('pin_nonces', 'nonce', 'mp_pin_nonce', 'pin_nonces_nonce_check'),
    ('webhook_events', 'id', 'mp_event_id', 'webhook_events_id_check'),
    ('webhook_events', 'type', 'mp_event_type', 'webhook_events_type_check'),
    ('webhook_events', 'attempts', 'mp_event_attempts', 'webhook_events_attempts_check');

-- Every view and function that depends on a moved column, directly or through another view
-- or function (a view's row type, too), with its depth: the longest chain from a column.
-- Made again in order of depth (what it depends on first), dropped in the reverse order.
CREATE TEMP TABLE mp_026_dep (kind "char", oid oid, depth int) ON COMMIT DROP;
WITH RECURSIVE dep(kind, oid, depth) AS (
    SELECT CASE d.classid WHEN 'pg_rewrite'::regclass THEN 'v' ELSE 'f' END,
           coalesce(r.ev_class, d.objid), 1
    FROM pg_depend d
    JOIN mp_026_move m ON d.refclassid = 'pg_class'::regclass AND d.refobjid = m.tab
        AND d.refobjsubid = (SELECT attnum FROM pg_attribute
                             WHERE attrelid = m.tab AND attname = m.col)
    LEFT JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND r.oid = d.objid
    WHERE d.classid IN ('pg_rewrite'::regclass, 'pg_proc'::regclass)
      AND (r.ev_class IS NULL OR r.ev_class <> m.tab)
    UNION ALL
    SELECT CASE d.classid WHEN 'pg_rewrite'::regclass THEN 'v' ELSE 'f' END,
           coalesce(r.ev_class, d.objid), dep.depth + 1
    FROM dep
    JOIN pg_depend d ON (dep.kind = 'v' AND d.refclassid = 'pg_class'::regclass
                         AND d.refobjid = dep.oid)
                     OR (dep.kind = 'v' AND d.refclassid = 'pg_type'::regclass
                         AND d.refobjid = (SELECT reltype FROM pg_class WHERE oid = dep.oid))
                     OR (dep.kind = 'f' AND d.refclassid = 'pg_proc'::regclass
                         AND d.refobjid = dep.oid)
    LEFT JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND r.oid = d.objid
    WHERE d.classid IN ('pg_rewrite'::regclass, 'pg_proc'::regclass)
      AND d.deptype = 'n' AND coalesce(r.ev_class, d.objid) <> dep.oid AND dep.depth < 20
)
INSERT INTO mp_026_dep SELECT kind, oid, max(depth) FROM dep GROUP BY kind, oid;

-- Their DDL, to make them again: the definition, then for a function REVOKE from PUBLIC, then
-- each grant but the owner's, then the comment.
CREATE TEMP TABLE mp_026_obj ON COMMIT DROP AS
SELECT d.kind, d.depth, c.oid::regclass::text AS name, c.relacl AS acl, c.relowner AS owner,
       obj_description(c.oid, 'pg_class') AS note,
       format('CREATE VIEW %s%s AS %s', c.oid::regclass,
              CASE WHEN c.reloptions IS NOT NULL
                   THEN format(' WITH (%s)', array_to_string(c.reloptions, ', ')) END,
              pg_get_viewdef(c.oid)) AS ddl
FROM mp_026_dep d JOIN pg_class c ON c.oid = d.oid WHERE d.kind = 'v'
UNION ALL
SELECT d.kind, d.depth, p.oid::regprocedure::text, p.proacl, p.proowner,
       obj_description(p.oid, 'pg_proc'), pg_get_functiondef(p.oid)
FROM mp_026_dep d JOIN pg_proc p ON p.oid = d.oid WHERE d.kind = 'f';
CREATE TEMP TABLE mp_026_redo ON COMMIT DROP AS
SELECT o.depth, o.name, s.step, s.ddl
FROM mp_026_obj o, LATERAL (
    SELECT 1 AS step, o.ddl
    UNION ALL
    SELECT 2, format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', o.name) WHERE o.kind = 'f'
    UNION ALL
    SELECT 3, format('GRANT %s ON %s%s TO %s', a.privilege_type,
                     CASE o.kind WHEN 'f' THEN 'FUNCTION ' ELSE '' END, o.name,
                     CASE a.grantee WHEN 0 THEN 'PUBLIC'
                          ELSE quote_ident(pg_get_userbyid(a.grantee)) END)
    FROM aclexplode(o.acl) a WHERE a.grantee <> o.owner
    UNION ALL
    SELECT 4, format('COMMENT ON %s %s IS %L', CASE o.kind WHEN 'f' THEN 'FUNCTION' ELSE 'VIEW' END,
                     o.name, o.note)
    WHERE o.note IS NOT NULL) s;

DO $$
DECLARE
    o record;
BEGIN
    -- Deepest first; no CASCADE: anything else depending on them stops the migration.
    FOR o IN
        SELECT d.kind, coalesce(c.oid::regclass::text, p.oid::regprocedure::text) AS name
        FROM mp_026_dep d
        LEFT JOIN pg_class c ON d.kind = 'v' AND c.oid = d.oid
        LEFT JOIN pg_proc p ON d.kind = 'f' AND p.oid = d.oid
        ORDER BY d.depth DESC, name DESC
    LOOP
        EXECUTE format('DROP %s %s', CASE o.kind WHEN 'f' THEN 'FUNCTION' ELSE 'VIEW' END,
                       o.name);
    END LOOP;
    -- accounts_status_guard (022) fires on UPDATE OF status: a column's type does not change
    -- under a trigger that names it, so it is made again below, the same.
    DROP TRIGGER accounts_status_guard ON accounts;
    -- Each table in one ALTER: its CHECKs dropped, its columns moved to their domains.
    FOR o IN
        SELECT tab, string_agg(format('DROP CONSTRAINT %I, ALTER COLUMN %I TYPE %s',
                                      con, col, dom), ', ') AS actions
        FROM mp_026_move GROUP BY tab
    LOOP
        EXECUTE format('ALTER TABLE %s %s', o.tab, o.actions);
    END LOOP;
END
$$;

-- The same rules as the CHECKs above. (The sessions' mp_currency and mp_amount have the
-- same rules as accounts.currency and transfers.amount, but a domain with a constraint makes
-- ALTER COLUMN TYPE rewrite the table: the columns move to domains without one first.)
-- The ids written by every transfer (tr_, trg_, evt_ and 32 hexadecimal digits; the PIN
-- nonce) are checked as one run of the allowed characters and a length: the same rule, but
-- PostgreSQL's regular expressions match a bounded repetition such as {32} about seven times
-- slower (3.4 against 0.5 microseconds here), and that was a tenth of a transfer's cost.
ALTER DOMAIN mp_account_number ADD CONSTRAINT mp_account_number_check
    CHECK (VALUE ~ '^[A-Z]{2}[0-9]{10}$') NOT VALID;
ALTER DOMAIN mp_account_kind ADD CONSTRAINT mp_account_kind_check
    CHECK (VALUE IN ('merchant', 'vendor', 'customer', 'system')) NOT VALID;
ALTER DOMAIN mp_account_currency ADD CONSTRAINT mp_account_currency_check
    CHECK (VALUE ~ '^[A-Z]{3}$') NOT VALID;
ALTER DOMAIN mp_account_status ADD CONSTRAINT mp_account_status_check
    CHECK (VALUE IN ('active', 'frozen', 'closed')) NOT VALID;
ALTER DOMAIN mp_account_version ADD CONSTRAINT mp_account_version_check
    CHECK (VALUE >= 0) NOT VALID;
ALTER DOMAIN mp_account_name ADD CONSTRAINT mp_account_name_check
    CHECK (char_length(VALUE) <= 200) NOT VALID;
ALTER DOMAIN mp_pin_digest ADD CONSTRAINT mp_pin_digest_check
    CHECK (length(VALUE) = 32) NOT VALID;
ALTER DOMAIN mp_pin_count ADD CONSTRAINT mp_pin_count_check CHECK (VALUE >= 0) NOT VALID;
ALTER DOMAIN mp_pin_scheme ADD CONSTRAINT mp_pin_scheme_check CHECK (VALUE IN (1, 2)) NOT VALID;
ALTER DOMAIN mp_ledger_kind ADD CONSTRAINT mp_ledger_kind_check
    CHECK (VALUE IN ('deposit', 'payment', 'transfer', 'adjustment', 'refund', 'reversal'))
    NOT VALID;
ALTER DOMAIN mp_ledger_reference ADD CONSTRAINT mp_ledger_reference_check
    CHECK (char_length(VALUE) <= 200) NOT VALID;
ALTER DOMAIN mp_entry_amount ADD CONSTRAINT mp_entry_amount_check CHECK (VALUE <> 0) NOT VALID;
ALTER DOMAIN mp_entry_version ADD CONSTRAINT mp_entry_version_check
    CHECK (VALUE > 0) NOT VALID;
ALTER DOMAIN mp_transfer_id ADD CONSTRAINT mp_transfer_id_check
    CHECK (VALUE ~ '^tr_[0-9a-f]+$' AND char_length(VALUE) = 35) NOT VALID;
ALTER DOMAIN mp_transfer_amount ADD CONSTRAINT mp_transfer_amount_check
    CHECK (VALUE > 0) NOT VALID;
ALTER DOMAIN mp_transfer_position ADD CONSTRAINT mp_transfer_position_check
    CHECK (VALUE >= 0) NOT VALID;
ALTER DOMAIN mp_transfer_group_id ADD CONSTRAINT mp_transfer_group_id_check
    CHECK (VALUE ~ '^trg_[0-9a-f]+$' AND char_length(VALUE) = 36) NOT VALID;
ALTER DOMAIN mp_idempotency_key ADD CONSTRAINT mp_idempotency_key_check
    CHECK (char_length(VALUE) BETWEEN 1 AND 255) NOT VALID;
ALTER DOMAIN mp_pin_nonce ADD CONSTRAINT mp_pin_nonce_check
    CHECK (VALUE ~ '^[A-Za-z0-9_-]+$' AND char_length(VALUE) BETWEEN 16 AND 64) NOT VALID;
ALTER DOMAIN mp_event_id ADD CONSTRAINT mp_event_id_check
    CHECK (VALUE ~ '^evt_[0-9a-f]+$' AND char_length(VALUE) = 36) NOT VALID;
ALTER DOMAIN mp_event_type ADD CONSTRAINT mp_event_type_check
    CHECK (char_length(VALUE) BETWEEN 1 AND 100) NOT VALID;
ALTER DOMAIN mp_event_attempts ADD CONSTRAINT mp_event_attempts_check
    CHECK (VALUE >= 0) NOT VALID;
DO $$
DECLARE
    d record;
BEGIN
    FOR d IN SELECT c.contypid::regtype AS dom, c.conname FROM pg_constraint c
             WHERE NOT c.convalidated AND c.contypid <> 0 LOOP
        EXECUTE format('ALTER DOMAIN %s VALIDATE CONSTRAINT %I', d.dom, d.conname);
    END LOOP;
    FOR d IN SELECT ddl FROM mp_026_redo ORDER BY depth, name, step, ddl LOOP
        EXECUTE d.ddl;
    END LOOP;
END
$$;

-- PL/pgSQL's RETURN QUERY wants the declared types exactly, not a domain over them: the three
-- functions that return a moved column that way cast it back, their bodies otherwise as they
-- are (CREATE OR REPLACE: privileges and comments kept).
DO $$
DECLARE
    f record;
    v_old text;
    v_new text;
BEGIN
    FOR f IN VALUES
        ('mp_webhook_claim(text,integer,integer,integer)',
         'SELECT l.id, l.merchant_id, l.body, l.attempts,',
         'SELECT l.id::text, l.merchant_id, l.body, l.attempts::int,'),
        ('mp_account_set_status(text,text,text[],text,text)', 'RETURNING old.status;',
         'RETURNING old.status::text;'),
        ('mp_transfer(bigint,text,text[],bigint[],text)',
         'RETURNING transfers.id, transfers.amount,',
         'RETURNING transfers.id::text, transfers.amount::bigint,')
    LOOP
        v_old := pg_get_functiondef(f.column1::regprocedure);
        v_new := replace(v_old, f.column2, f.column3);
        IF v_new = v_old THEN
            RAISE EXCEPTION '026: % is not as expected', f.column1;
        END IF;
        EXECUTE v_new;
    END LOOP;
END
$$;

CREATE TRIGGER accounts_status_guard BEFORE UPDATE OF status ON accounts
    FOR EACH ROW EXECUTE FUNCTION mp_account_status_guard();

COMMENT ON DOMAIN mp_entry_amount IS 'A ledger entry''s signed amount in minor units: never zero';
COMMENT ON DOMAIN mp_account_status IS 'A ledger account''s status';
