-- mp_uuid_v7 (028) as one SQL expression that PostgreSQL inlines into the statement calling
-- it (the performance issue). The PL/pgSQL form cost a function call on every session and
-- event made: its executor set-up and the call of its expression, about 36,000
-- instructions each time (bench/pg-instructions create-session). A SQL function whose body
-- is one SELECT of one expression, without FROM, is inlined when the calling statement is
-- planned, and the plan is kept with the statement: 028's first SQL form had a FROM clause
-- (it named the random UUID once and used it twice), so it was planned again at every call.
-- This one uses each input once: the random UUID's 32 hex digits keep their last 19 (the
-- variant's bits among them), its version digit becomes 7, and its first 12 are the Unix
-- time in milliseconds. The ids are the same as 028's: 48 bits of time, version 7, the
-- variant, 74 random bits from the server's cryptographic random source.
--
-- Locks: the function's definition, for a moment. The column default and the functions
-- that call it are unchanged; their cached plans are made again.
CREATE OR REPLACE FUNCTION mp_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
SELECT (lpad(to_hex(floor(date_part('epoch', clock_timestamp()) * 1000)::bigint), 12, '0')
        || '7' || substr(gen_random_uuid()::text, 16))::uuid
$$;
