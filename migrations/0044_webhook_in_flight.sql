-- At most a few attempts in flight per webhook endpoint, on every replica
-- together (docs/events.md, "Fair across endpoints"): an attempt claims its
-- delivery by setting in_flight_until (a lease: a replica that dies lets
-- it run out) while its endpoint has fewer in flight, and the attempt's
-- record clears it.
ALTER TABLE webhook_deliveries ADD COLUMN in_flight_until timestamptz;
CREATE INDEX webhook_deliveries_in_flight_idx ON webhook_deliveries (endpoint_id)
    WHERE in_flight_until IS NOT NULL;
