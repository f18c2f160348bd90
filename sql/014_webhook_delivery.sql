-- Webhook delivery at scale: the merchant's previous signing secret, still signed with
-- during a rotation window, so a merchant rotating its secret misses no delivery.

ALTER TABLE merchants ADD COLUMN webhook_secret_previous_sealed bytea,
    ADD COLUMN webhook_secret_previous_until timestamptz,
    ADD CONSTRAINT webhook_secret_previous_whole
    CHECK ((webhook_secret_previous_sealed IS NULL) = (webhook_secret_previous_until IS NULL));
COMMENT ON COLUMN merchants.webhook_secret_previous_sealed IS 'The signing secret before the last rotation, sealed like webhook_secret_sealed; deliveries are signed with it too until webhook_secret_previous_until';
COMMENT ON COLUMN merchants.webhook_secret_previous_until IS 'End of the rotation window: after it only webhook_secret_sealed signs';
