-- Webhook signing-secret rotation without failed deliveries: a new secret becomes the current
-- one and the one it replaces still signs for webhook_secret_rotation_window seconds, so a
-- merchant's endpoint that still holds it keeps verifying every delivery until it takes the
-- new one. The merchant starts a rotation itself (POST webhook-endpoint/rotate-secret), the
-- operator with marketpayctl merchant webhook ID --rotate-secret; both come here.

ALTER TABLE mp_settings ADD COLUMN webhook_secret_rotation_window int NOT NULL DEFAULT 86400
    CHECK (webhook_secret_rotation_window BETWEEN 0 AND 2592000);
COMMENT ON COLUMN mp_settings.webhook_secret_rotation_window IS 'Seconds the secret a rotation replaces still signs deliveries; 0: it stops at once (marketpay.conf webhook_secret_rotation_window)';

-- The reply of a rotation shows the new secret: kept for its Idempotency-Key, it is stored
-- sealed like the secrets themselves, never in the clear.
ALTER TABLE idempotency_keys ADD COLUMN body_sealed boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN idempotency_keys.body_sealed IS 'true: body is the reply sealed under secrets_key_file (AES-256-GCM: nonce, ciphertext, tag), base64; a reply that shows a secret';

-- Intent: merchant p_merchant's signing secret becomes p_sealed (a new secret sealed under
-- secrets_key_file by the caller, who alone shows it, once). The current one becomes the
-- previous one until now() + webhook_secret_rotation_window (a window of 0: none is kept);
-- a previous one still in its window stops at once. Returns the end of the window, NULL
-- without one. Refusals raise and change nothing: MP030 no such merchant, MP043 the merchant
-- has no secret yet (the operator sets the first one with its webhook URL). The merchant's
-- row lock serialises rotations: two at once leave the secret of the later one current and
-- that of the earlier one previous.
CREATE FUNCTION mp_rotate_webhook_secret(p_merchant bigint, p_sealed bytea)
RETURNS timestamptz
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_current bytea;
    v_window int;
    v_until timestamptz;
BEGIN
    -- The sealed form of any secret: nonce and tag (28 bytes) around at least one byte.
    IF p_sealed IS NULL OR length(p_sealed) <= 28 OR length(p_sealed) > 512 THEN
        RAISE EXCEPTION 'mp_rotate_webhook_secret: not a sealed secret'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT webhook_secret_sealed INTO v_current FROM merchants WHERE id = p_merchant
    FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no merchant %', p_merchant USING ERRCODE = 'MP030';
    END IF;
    IF v_current IS NULL THEN
        RAISE EXCEPTION 'no webhook signing secret to rotate: the operator sets the first one with your webhook URL'
            USING ERRCODE = 'MP043';
    END IF;
    SELECT webhook_secret_rotation_window INTO v_window FROM mp_settings;
    IF coalesce(v_window, 86400) > 0 THEN
        v_until := now() + make_interval(secs => coalesce(v_window, 86400));
    END IF;
    UPDATE merchants SET webhook_secret_sealed = p_sealed,
        webhook_secret_previous_sealed = CASE WHEN v_until IS NOT NULL THEN v_current END,
        webhook_secret_previous_until = v_until
    WHERE id = p_merchant;
    RETURN v_until;
END
$$;

-- Privileges: the workers rotate only through the intent (they neither read nor write the
-- secret columns); the delivery daemon reads the previous secret and its window to sign
-- (granted with the columns, in 014).
REVOKE EXECUTE ON FUNCTION mp_rotate_webhook_secret(bigint, bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mp_rotate_webhook_secret(bigint, bytea) TO marketpay_app;
