-- The replicas that share the rate limits' budget (internal/ratelimit):
-- each records itself every few seconds and splits each limit by the
-- replicas seen lately. An unlogged table: after a crash it starts empty
-- and fills within one beat.
CREATE UNLOGGED TABLE rate_limit_replicas (
    id uuid PRIMARY KEY,
    seen_at timestamptz NOT NULL
);
