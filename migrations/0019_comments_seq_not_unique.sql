-- A comment list's page is read from the index of its shape, in seq order
-- (docs/review.md, "Review comments"). The unique index on seq alone let
-- the planner walk the whole table in seq order and filter by creative
-- when a table holds few creatives: cheap where the creative's comments
-- come first, a walk of the table where they come last. seq is an identity
-- and is unique without it; the lists need no index on it alone.
ALTER TABLE comments DROP CONSTRAINT comments_seq_key;
