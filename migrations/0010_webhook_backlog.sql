-- Webhook backlog (docs/events.md): pending deliveries by when their next
-- attempt is due (or, never attempted, when they were made). The metrics
-- count them at each scrape, and the retention purge finds the abandoned
-- ones (WebhookDeliveriesAbandon), without reading finished deliveries.
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries ((coalesce(next_attempt_at, created_at)))
    WHERE status = 'pending';
