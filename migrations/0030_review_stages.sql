-- Review stages (docs/review.md, "Review stages"): a creative may carry a
-- review plan of one to five stages. review_plan tells a read of the
-- creative, from its own row, whether the plan needs reading; review_round
-- counts the submits under a plan (0: none yet).
ALTER TABLE creatives
    ADD COLUMN review_plan boolean NOT NULL DEFAULT false,
    ADD COLUMN review_round integer NOT NULL DEFAULT 0 CHECK (review_round >= 0);

-- review_plan_stages are a plan's stages, in order (position 0 first).
-- reviewer_ids are members; guest_emails the guests of a decide share.
-- from_round is the first round the stages decide: a plan set after a
-- round shows its stages pending, not that round's outcome.
CREATE TABLE review_plan_stages (
    creative_id  uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    position     smallint NOT NULL CHECK (position BETWEEN 0 AND 4),
    name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    rule         text NOT NULL CHECK (rule IN ('all', 'any', 'majority')),
    due_in_hours integer CHECK (due_in_hours BETWEEN 1 AND 2160),
    reviewer_ids uuid[] NOT NULL DEFAULT '{}',
    guest_emails text[] NOT NULL DEFAULT '{}',
    from_round   integer NOT NULL CHECK (from_round >= 1),
    PRIMARY KEY (creative_id, position),
    CHECK (cardinality(reviewer_ids) + cardinality(guest_emails) BETWEEN 1 AND 40)
);

-- review_stage_rounds are each stage's state in each round: pending,
-- active (due_at set from due_in_hours when it became active), approved
-- or changes_requested. Earlier rounds stay as history. due_soon_at and
-- overdue_at record when the due-date job announced each, once.
CREATE TABLE review_stage_rounds (
    creative_id uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    round       integer NOT NULL CHECK (round >= 1),
    position    smallint NOT NULL CHECK (position BETWEEN 0 AND 4),
    status      text NOT NULL CHECK (status IN ('pending', 'active', 'approved', 'changes_requested')),
    due_at      timestamptz,
    due_soon_at timestamptz,
    overdue_at  timestamptz,
    PRIMARY KEY (creative_id, round, position)
);

-- The due-date job and the overdue filter read active stages by due date.
CREATE INDEX review_stage_rounds_active_due_idx ON review_stage_rounds (due_at)
    WHERE status = 'active' AND due_at IS NOT NULL;

-- review_decisions are every person's decisions, a member's (reviewer_id)
-- or a guest's (guest_email); the latest of a person in a stage and round
-- counts. override: an admin decided for the whole creative.
CREATE TABLE review_decisions (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    creative_id    uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    round          integer NOT NULL CHECK (round >= 1),
    position       smallint NOT NULL CHECK (position BETWEEN 0 AND 4),
    reviewer_id    uuid REFERENCES users (id),
    guest_email    text,
    decision       text NOT NULL CHECK (decision IN ('approve', 'request_changes')),
    comment        text,
    version_number integer NOT NULL,
    override       boolean NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CHECK ((reviewer_id IS NULL) <> (guest_email IS NULL))
);

CREATE INDEX review_decisions_round_idx ON review_decisions (creative_id, round, position, id);
