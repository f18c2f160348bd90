-- The daily purge of expired Idempotency-Key records runs as the workers' role (the
-- marketpay-purge@ timer has no owner credentials), which may not DELETE from
-- idempotency_keys: this function, running with its owner's rights, deletes only records
-- older than the given age, and never one younger than a minute.
CREATE FUNCTION mp_purge_idempotency(ttl_seconds integer) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    n bigint;
BEGIN
    DELETE FROM idempotency_keys
     WHERE created_at <= now() - make_interval(secs => greatest(ttl_seconds, 60));
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

REVOKE EXECUTE ON FUNCTION mp_purge_idempotency(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_purge_idempotency(integer) TO marketpay_app;
