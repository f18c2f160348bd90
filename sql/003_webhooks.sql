-- Webhook outbox: an event row commits in the same transaction as the change it reports;
-- marketpay-webhookd delivers it (at least once), recording every attempt.

ALTER TABLE merchants ADD COLUMN webhook_secret_sealed bytea;
COMMENT ON COLUMN merchants.webhook_secret_sealed IS 'The Standard Webhooks signing secret, AES-256-GCM under secrets_key_file (nonce, ciphertext, tag); never stored in the clear';

CREATE TABLE webhook_events (
    id              text PRIMARY KEY CHECK (id ~ '^evt_[0-9a-f]{32}$'),
    merchant_id     bigint NOT NULL REFERENCES merchants (id),
    type            text NOT NULL CHECK (char_length(type) BETWEEN 1 AND 100),
    body            text NOT NULL,          -- the exact bytes POSTed and signed
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts        int NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    last_error      text
);
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_events_merchant ON webhook_events (merchant_id, created_at);

CREATE TABLE webhook_attempts (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id     text NOT NULL REFERENCES webhook_events (id),
    attempt      int NOT NULL CHECK (attempt > 0),
    attempted_at timestamptz NOT NULL DEFAULT now(),
    url          text NOT NULL,
    http_status  int,                        -- NULL when no HTTP answer came
    error        text,
    duration_ms  int NOT NULL CHECK (duration_ms >= 0),
    UNIQUE (event_id, attempt)
);

-- Wakes marketpay-webhookd (LISTEN marketpay_webhooks) as soon as an event commits.
CREATE FUNCTION mp_notify_webhook() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('marketpay_webhooks', NEW.id);
    RETURN NULL;
END
$$;
CREATE TRIGGER webhook_events_notify AFTER INSERT ON webhook_events
    FOR EACH ROW EXECUTE FUNCTION mp_notify_webhook();

-- Minor units as the API prints them: 1250 -> '12.50'.
CREATE FUNCTION mp_money_text(minor bigint) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN minor < 0 THEN '-' ELSE '' END || (abs(minor) / 100)::text || '.' ||
       lpad((abs(minor) % 100)::text, 2, '0');

CREATE VIEW outbox_health AS
SELECT status, count(*) AS events, min(created_at) AS oldest,
       min(next_attempt_at) FILTER (WHERE status = 'pending') AS next_due,
       max(attempts) AS most_attempts
FROM webhook_events GROUP BY status;
