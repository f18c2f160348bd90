-- Cheaper session writes (the performance issue). PostgreSQL reads every CHECK constraint of
-- a table back from its stored form, plans and prepares it again for each statement that
-- writes the table: with the 20 CHECKs of payment_sessions and the 4 of session_items that
-- was 46 % of the instructions one create-session cost the database (callgrind;
-- bench/session-costs measures it). The rules on one column each therefore move into domains,
-- whose constraints every backend keeps prepared: the same rules, checked on every insert and
-- update, failing with the same SQLSTATE (23514, check_violation). The rules across columns
-- (payment_sessions_check, paid_has_payment, refunds_within_amount, refunded_means_all,
-- refunds_only_when_paid) stay CHECKs of the table.
--
-- Also: mp_iso is STABLE, as the to_char it calls is, and mp_money_text is no longer STRICT
-- (its body gives NULL for NULL anyway): both are then inlined into the statements that use
-- them instead of being called as SQL functions, which cost a create-session 7 % of its
-- instructions and every JSON reply with a time or an amount as much again.
--
-- Applying it rewrites no table: the domains are made without constraints, the columns moved
-- to them (a domain over the column's own type: no rewrite, the full indexes kept; the two
-- partial indexes on these columns, payment_sessions_user_id and payment_sessions_open_expiry,
-- are rebuilt, under the migration's lock), then the rules added NOT VALID (the table CHECKs
-- they replace held for every row) and validated, which reads both tables once
-- (tests/upgrade.sh). The views and SQL functions that name these columns must be
-- dropped for the type change and are made again from their own definitions, with their
-- privileges and comments, in the order they were made.

-- payment_sessions_transaction (011) indexed what the unique payment_sessions_one_payment
-- (004) already does, the same column under the same condition: one is enough.
DROP INDEX payment_sessions_transaction;

ALTER FUNCTION mp_iso(timestamptz) STABLE;
ALTER FUNCTION mp_money_text(bigint) CALLED ON NULL INPUT;

CREATE DOMAIN mp_amount AS bigint;
CREATE DOMAIN mp_currency AS text;
CREATE DOMAIN mp_user_id AS text;
CREATE DOMAIN mp_email AS text;
CREATE DOMAIN mp_redirect_url AS text;
CREATE DOMAIN mp_session_state AS text;
CREATE DOMAIN mp_payment_method AS text;
CREATE DOMAIN mp_card_brand AS text;
CREATE DOMAIN mp_card_last4 AS text;
CREATE DOMAIN mp_failure_reason AS text;
CREATE DOMAIN mp_item_position AS int;
CREATE DOMAIN mp_item_id AS text;
CREATE DOMAIN mp_item_name AS text;

-- The views and functions that depend on the columns, saved as DDL (creation order), dropped
-- (reverse order, no CASCADE: anything else depending on them stops the migration).
CREATE TEMP TABLE mp_018_redo (n serial, ddl text NOT NULL) ON COMMIT DROP;
CREATE TEMP TABLE mp_018_drop (n serial, kind "char" NOT NULL, name text NOT NULL) ON COMMIT DROP;
DO $$
DECLARE
    o record;
    a record;
BEGIN
    FOR o IN
        SELECT 'v' AS kind, c.oid, c.oid::regclass::text AS name, c.relacl AS acl,
               c.relowner AS owner, obj_description(c.oid, 'pg_class') AS note,
               format('CREATE VIEW %s%s AS %s', c.oid::regclass,
                      CASE WHEN c.reloptions IS NOT NULL
                           THEN format(' WITH (%s)', array_to_string(c.reloptions, ', ')) END,
                      pg_get_viewdef(c.oid)) AS ddl
        FROM pg_class c
        WHERE c.oid IN ('mp_list_sessions'::regclass, 'mp_balance_transactions'::regclass,
                        'mp_list_balance_transactions'::regclass,
                        'merchant_settlement_days'::regclass)
        UNION ALL
        SELECT 'f', p.oid, p.oid::regprocedure::text, p.proacl, p.proowner,
               obj_description(p.oid, 'pg_proc'), pg_get_functiondef(p.oid)
        FROM pg_proc p
        WHERE p.oid IN ('mp_session_json(payment_sessions)'::regprocedure,
                        'mp_session_items_json(uuid)'::regprocedure,
                        'mp_balance_transaction_json(mp_balance_transactions)'::regprocedure)
        ORDER BY oid
    LOOP
        INSERT INTO mp_018_drop (kind, name) VALUES (o.kind, o.name);
        INSERT INTO mp_018_redo (ddl) VALUES (o.ddl);
        IF o.kind = 'f' THEN
            INSERT INTO mp_018_redo (ddl)
            VALUES (format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', o.name));
        END IF;
        FOR a IN SELECT * FROM aclexplode(o.acl) WHERE grantee <> o.owner LOOP
            INSERT INTO mp_018_redo (ddl)
            VALUES (format('GRANT %s ON %s%s TO %s', a.privilege_type,
                           CASE o.kind WHEN 'f' THEN 'FUNCTION ' ELSE '' END, o.name,
                           CASE a.grantee WHEN 0 THEN 'PUBLIC'
                                ELSE quote_ident(pg_get_userbyid(a.grantee)) END));
        END LOOP;
        IF o.note IS NOT NULL THEN
            INSERT INTO mp_018_redo (ddl)
            VALUES (format('COMMENT ON %s %s IS %L',
                           CASE o.kind WHEN 'f' THEN 'FUNCTION' ELSE 'VIEW' END, o.name, o.note));
        END IF;
    END LOOP;
    FOR o IN SELECT kind, name FROM mp_018_drop ORDER BY n DESC LOOP
        EXECUTE format('DROP %s %s', CASE o.kind WHEN 'f' THEN 'FUNCTION' ELSE 'VIEW' END,
                       o.name);
    END LOOP;
END
$$;

ALTER TABLE payment_sessions
    DROP CONSTRAINT payment_sessions_amount_check,
    DROP CONSTRAINT payment_sessions_currency_check,
    DROP CONSTRAINT payment_sessions_user_id_check,
    DROP CONSTRAINT payment_sessions_email_check,
    DROP CONSTRAINT payment_sessions_redirect_success_url_check,
    DROP CONSTRAINT payment_sessions_redirect_failure_url_check,
    DROP CONSTRAINT payment_sessions_status_check,
    DROP CONSTRAINT payment_sessions_payment_method_check,
    DROP CONSTRAINT payment_sessions_card_brand_check,
    DROP CONSTRAINT payment_sessions_card_last4_check,
    DROP CONSTRAINT payment_sessions_failure_reason_check,
    ALTER COLUMN amount TYPE mp_amount,
    ALTER COLUMN currency TYPE mp_currency,
    ALTER COLUMN user_id TYPE mp_user_id,
    ALTER COLUMN email TYPE mp_email,
    ALTER COLUMN redirect_success_url TYPE mp_redirect_url,
    ALTER COLUMN redirect_failure_url TYPE mp_redirect_url,
    ALTER COLUMN status TYPE mp_session_state,
    ALTER COLUMN payment_method TYPE mp_payment_method,
    ALTER COLUMN card_brand TYPE mp_card_brand,
    ALTER COLUMN card_last4 TYPE mp_card_last4,
    ALTER COLUMN failure_reason TYPE mp_failure_reason;
ALTER TABLE session_items
    DROP CONSTRAINT session_items_position_check,
    DROP CONSTRAINT session_items_item_id_check,
    DROP CONSTRAINT session_items_name_check,
    DROP CONSTRAINT session_items_price_check,
    ALTER COLUMN position TYPE mp_item_position,
    ALTER COLUMN item_id TYPE mp_item_id,
    ALTER COLUMN name TYPE mp_item_name,
    ALTER COLUMN price TYPE mp_amount;

-- The same rules as the CHECKs above, under the same names.
ALTER DOMAIN mp_amount ADD CONSTRAINT mp_amount_check CHECK (VALUE > 0) NOT VALID;
ALTER DOMAIN mp_currency ADD CONSTRAINT mp_currency_check
    CHECK (VALUE ~ '^[A-Z]{3}$') NOT VALID;
ALTER DOMAIN mp_user_id ADD CONSTRAINT mp_user_id_check
    CHECK (char_length(VALUE) <= 50) NOT VALID;
ALTER DOMAIN mp_email ADD CONSTRAINT mp_email_check
    CHECK (char_length(VALUE) <= 254) NOT VALID;
ALTER DOMAIN mp_redirect_url ADD CONSTRAINT mp_redirect_url_check
    CHECK (VALUE ~* '^https?://') NOT VALID;
ALTER DOMAIN mp_session_state ADD CONSTRAINT mp_session_state_check
    CHECK (VALUE IN ('open', 'paid', 'failed', 'canceled', 'expired', 'refunded')) NOT VALID;
ALTER DOMAIN mp_payment_method ADD CONSTRAINT mp_payment_method_check
    CHECK (VALUE IN ('wallet', 'test_card')) NOT VALID;
ALTER DOMAIN mp_card_brand ADD CONSTRAINT mp_card_brand_check
    CHECK (char_length(VALUE) <= 20) NOT VALID;
ALTER DOMAIN mp_card_last4 ADD CONSTRAINT mp_card_last4_check
    CHECK (VALUE ~ '^[0-9]{4}$') NOT VALID;
ALTER DOMAIN mp_failure_reason ADD CONSTRAINT mp_failure_reason_check
    CHECK (char_length(VALUE) <= 200) NOT VALID;
ALTER DOMAIN mp_item_position ADD CONSTRAINT mp_item_position_check
    CHECK (VALUE >= 0) NOT VALID;
ALTER DOMAIN mp_item_id ADD CONSTRAINT mp_item_id_check
    CHECK (char_length(VALUE) BETWEEN 1 AND 50) NOT VALID;
ALTER DOMAIN mp_item_name ADD CONSTRAINT mp_item_name_check
    CHECK (char_length(VALUE) BETWEEN 1 AND 500) NOT VALID;
DO $$
DECLARE
    d record;
BEGIN
    FOR d IN SELECT t.typname, c.conname FROM pg_constraint c JOIN pg_type t ON t.oid = c.contypid
             WHERE NOT c.convalidated AND t.typname LIKE 'mp\_%' LOOP
        EXECUTE format('ALTER DOMAIN %I VALIDATE CONSTRAINT %I', d.typname, d.conname);
    END LOOP;
END
$$;

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT ddl FROM mp_018_redo ORDER BY n LOOP
        EXECUTE r.ddl;
    END LOOP;
END
$$;

COMMENT ON DOMAIN mp_amount IS 'An amount in minor units: above zero';
COMMENT ON DOMAIN mp_session_state IS 'A payment session''s stored status';
