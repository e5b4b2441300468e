-- A database that holds the demo data (known users, a published password)
-- says so: `seed` marks it, and every command without DEV_MODE refuses a
-- marked database at start-up (cmd/creativeapi, "development database").
-- A database seeded before the mark existed is marked here by its demo
-- administrator.
CREATE TABLE development_database (
    only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    marked_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO development_database (only_row)
SELECT true WHERE EXISTS (SELECT 1 FROM users WHERE lower(email) = 'admin@acme.test');
