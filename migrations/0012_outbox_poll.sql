-- Outbox without a notice per commit (docs/events.md, "Publishing"). A
-- transaction that has sent a NOTIFY takes one cluster-wide lock at commit,
-- so every command that wrote an event committed one at a time, and each
-- notice woke every publisher for a batch of one: the review action lost a
-- third of its throughput. Publishers now look for unpublished events on a
-- short interval (EVENTS_POLL_INTERVAL) instead.
DROP TRIGGER outbox_events_notify ON outbox_events;
DROP FUNCTION outbox_events_notify();
