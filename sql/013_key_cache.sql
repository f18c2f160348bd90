-- The workers keep the merchants of the API keys they have seen (src/keycache.c), so that a
-- request costs one round trip to the database instead of two. What could make a kept
-- answer wrong notifies channel marketpay_keys in the transaction that changes it: a key
-- revoked, changed or deleted, a merchant disabled or its currency changed. Each worker
-- listens and reads its notifications before every request, and forgets every kept answer
-- on one (and on every reconnect, when notifications may have been missed).
CREATE FUNCTION mp_notify_keys() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('marketpay_keys', TG_TABLE_NAME);
    RETURN NULL;
END
$$;
CREATE TRIGGER api_keys_notify AFTER UPDATE OR DELETE OR TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION mp_notify_keys();
CREATE TRIGGER merchants_notify_keys AFTER UPDATE OF id, status, currency OR DELETE OR TRUNCATE
    ON merchants FOR EACH STATEMENT EXECUTE FUNCTION mp_notify_keys();
REVOKE EXECUTE ON FUNCTION mp_notify_keys() FROM PUBLIC;
