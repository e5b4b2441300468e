-- 0011: the open-deposit condition in one place (issue 16); schema.sql
-- says why it is a function.
CREATE FUNCTION deposit_open(status text, expires_at timestamptz) RETURNS boolean
    LANGUAGE sql STABLE AS $$
SELECT status IN ('awaiting_transfer', 'confirming') AND NOT (status = 'awaiting_transfer' AND expires_at <= now())
$$;
