-- 0011: the open-deposit condition in one place (issue 16).

-- deposit_open is whether a deposit is open (docs/deposits.md): confirming,
-- or awaiting its transfer before expires_at. The queries that count, limit
-- and credit open deposits all call it. One SQL expression, so the planner
-- inlines it and the partial index deposits_open_user_id_idx still serves.
-- deposit.IsOpen(deposit.EffectiveStatus(...)) is the rule in Go, for
-- reads; a test holds the two equal.
CREATE FUNCTION deposit_open(status text, expires_at timestamptz) RETURNS boolean
    LANGUAGE sql STABLE AS $$
SELECT status IN ('awaiting_transfer', 'confirming') AND NOT (status = 'awaiting_transfer' AND expires_at <= now())
$$;
