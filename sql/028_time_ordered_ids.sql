-- Time-ordered ids for sessions and events (the performance issue's growth target).
-- A session's id was gen_random_uuid() (version 4), and so was the hex of an event's id:
-- each insert went to a random leaf page of payment_sessions_pkey, session_items_pkey
-- (session_id first) and webhook_events_pkey. Once these indexes are larger than the cache,
-- that is a page read per index and insert, and after every checkpoint the first change to
-- each page writes the whole page to the WAL (a full-page image): bench/growth measured it
-- (bench/README.md, "bench/growth"). A version 7 UUID (RFC 9562) begins with the time in
-- milliseconds: new ids go to the right-hand end of the index, to the few pages written
-- just before, which stay cached and have had their full-page image since the checkpoint.
--
-- mp_uuid_v7(): 48 bits of Unix time in milliseconds (clock_timestamp()), the version 7,
-- the variant, and 74 random bits from gen_random_uuid(), which draws on the server's
-- cryptographic random source (pg_strong_random, OpenSSL). The session id is the customer's
-- checkout URL, a capability: what matters is that it cannot be guessed, and 74 random
-- bits keep it so (someone who knows the millisecond a session was made must still find
-- one of 2^74 values, each try a request the limits of nginx/marketpay-limits.conf count).
-- The id now shows when the session was made (to the millisecond), which the session's
-- own created_at already tells the merchant and the page's expiry tells the customer;
-- marketpay-api(7) says so. Ids made before stay as they are (both kinds are valid UUIDs
-- and sort together in the same index).
--
-- Locks: payment_sessions (ACCESS EXCLUSIVE, for the new column default, no rewrite) and
-- the two functions' definitions, for a moment. mp_create_session and mp_queue_event are
-- made again from their own current definitions with only the id generator changed (their
-- privileges and comments are kept by CREATE OR REPLACE; the overloads that call none,
-- wrappers of another, are left alone); the migration fails on one that calls it twice.
-- PL/pgSQL, not SQL: a SQL function with a FROM clause is not inlined, and PostgreSQL
-- plans its body again at every statement that calls it: a create-session cost 894,638
-- instructions with the SQL function, 686,952 with this one, 660,258 with gen_random_uuid()
-- (bench/pg-instructions); PL/pgSQL keeps the expression's plan for the connection.
CREATE FUNCTION mp_uuid_v7() RETURNS uuid
LANGUAGE plpgsql VOLATILE PARALLEL SAFE AS $$
DECLARE
    r bytea := uuid_send(gen_random_uuid());
BEGIN
    RETURN encode(set_byte(overlay(r PLACING substring(int8send(floor(extract(epoch FROM
               clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
               6, (get_byte(r, 6) & 15) | 112), 'hex')::uuid;
END
$$;
COMMENT ON FUNCTION mp_uuid_v7() IS 'A version 7 UUID: 48 bits of Unix time in ms, 74 random bits from the server''s cryptographic random source';
-- Called by the roles that insert sessions (the column default, mp_create_session) and queue
-- events as themselves: the workers'; the SECURITY DEFINER functions call it as the owner.
REVOKE EXECUTE ON FUNCTION mp_uuid_v7() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_uuid_v7() TO marketpay_app;

ALTER TABLE payment_sessions ALTER COLUMN id SET DEFAULT mp_uuid_v7();

DO $$
DECLARE
    f regprocedure;
    v_def text;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
             WHERE p.proname IN ('mp_create_session', 'mp_queue_event')
               AND p.pronamespace = 'public'::regnamespace
    LOOP
        v_def := pg_get_functiondef(f);
        CONTINUE WHEN strpos(v_def, 'gen_random_uuid()') = 0;  -- a wrapper of another
        IF array_length(string_to_array(v_def, 'gen_random_uuid()'), 1) <> 2 THEN
            RAISE EXCEPTION '028: % calls gen_random_uuid() more than once', f;
        END IF;
        EXECUTE replace(v_def, 'gen_random_uuid()', 'mp_uuid_v7()');
    END LOOP;
END
$$;
