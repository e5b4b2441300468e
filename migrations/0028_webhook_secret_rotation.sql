-- An endpoint's previous signing secret signs deliveries beside the new
-- one until previous_secret_until (docs/events.md, "Rotating a secret").
ALTER TABLE webhook_endpoints
    ADD COLUMN previous_secret text CHECK (previous_secret LIKE 'whsec\_%'),
    ADD COLUMN previous_secret_until timestamptz,
    ADD CONSTRAINT webhook_endpoints_previous_secret_until_check
        CHECK ((previous_secret IS NULL) = (previous_secret_until IS NULL));
