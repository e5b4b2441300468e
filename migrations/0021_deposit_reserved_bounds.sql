-- A create far below the open-deposit limit reads an upper bound on the
-- user's reserved deposits instead of counting the user's open deposits
-- (docs/deposits.md, "What serialises a user's creates"). Every open
-- deposit is reserved: the constraint holds it for confirming deposits.
-- The bounds start at the reserved deposits each user has now.
--
-- Deploy it with no replica of an earlier version still creating deposits:
-- such a replica inserts without adding to the bound.
ALTER TABLE deposits ADD CONSTRAINT deposits_confirming_reserved_check CHECK (reserved OR status <> 'confirming');

CREATE INDEX deposits_reserved_user_id_idx ON deposits (user_id) WHERE reserved;

CREATE TABLE deposit_reserved_bounds (
    user_id  uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    slot     integer NOT NULL CHECK (slot >= 0),
    reserved integer NOT NULL CHECK (reserved >= 0),
    PRIMARY KEY (user_id, slot)
);

INSERT INTO deposit_reserved_bounds (user_id, slot, reserved)
SELECT user_id, 0, count(*) FROM deposits WHERE reserved GROUP BY user_id;
