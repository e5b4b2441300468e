-- name: ReviewPlanSet :exec
-- ReviewPlanSet replaces a creative's review plan with stages (a JSON
-- array of {position, name, rule, due_in_hours, reviewer_ids,
-- guest_emails}) and writes the creative's version, updated_at and its
-- updated history event (field reviewPlan, from the old stages' summary,
-- read in the statement's snapshot, to summary), in one statement. The
-- stages decide from the creative's next round (from_round) on.
WITH stages AS (
    SELECT (e->>'position')::smallint AS position, e->>'name' AS name, e->>'rule' AS rule,
           (e->>'due_in_hours')::integer AS due_in_hours,
           ARRAY(SELECT jsonb_array_elements_text(e->'reviewer_ids'))::uuid[] AS reviewer_ids,
           ARRAY(SELECT jsonb_array_elements_text(e->'guest_emails'))::text[] AS guest_emails
    FROM jsonb_array_elements(@stages::jsonb) AS e
), gone AS (
    DELETE FROM review_plan_stages p
    WHERE p.creative_id = @id::uuid AND p.position >= (SELECT count(*) FROM stages)
), put AS (
    INSERT INTO review_plan_stages (creative_id, position, name, rule, due_in_hours, reviewer_ids, guest_emails, from_round)
    SELECT @id::uuid, s.position, s.name, s.rule, s.due_in_hours, s.reviewer_ids, s.guest_emails, @from_round::integer
    FROM stages s
    ON CONFLICT (creative_id, position) DO UPDATE
    SET name = excluded.name, rule = excluded.rule, due_in_hours = excluded.due_in_hours,
        reviewer_ids = excluded.reviewer_ids, guest_emails = excluded.guest_emails, from_round = excluded.from_round
), old AS (
    SELECT string_agg(p.name || ' (' || p.rule || ')', ', ' ORDER BY p.position) AS summary
    FROM review_plan_stages p WHERE p.creative_id = @id::uuid
), updated AS (
    UPDATE creatives
    SET review_plan = true, version = @version::integer, updated_at = @updated_at::timestamptz
    WHERE creatives.id = @id::uuid
    RETURNING id, version, review_status
)
INSERT INTO creative_events (creative_id, actor_id, type, from_status, to_status, version, changes)
SELECT updated.id, @actor_id::uuid, 'updated', updated.review_status, updated.review_status, updated.version,
       jsonb_build_array(jsonb_build_object('field', 'reviewPlan', 'from', old.summary, 'to', @summary::text))
FROM updated, old;

-- name: ReviewPlanDelete :exec
-- ReviewPlanDelete removes a creative's review plan (its rounds and
-- decisions stay as history) and writes the creative's version,
-- updated_at and its updated history event, in one statement.
WITH gone AS (
    DELETE FROM review_plan_stages p WHERE p.creative_id = @id::uuid
    RETURNING p.position, p.name, p.rule
), updated AS (
    UPDATE creatives
    SET review_plan = false, version = @version::integer, updated_at = @updated_at::timestamptz
    WHERE creatives.id = @id::uuid
    RETURNING id, version, review_status
)
INSERT INTO creative_events (creative_id, actor_id, type, from_status, to_status, version, changes)
SELECT updated.id, @actor_id::uuid, 'updated', updated.review_status, updated.review_status, updated.version,
       jsonb_build_array(jsonb_build_object('field', 'reviewPlan', 'to', NULL, 'from',
           (SELECT string_agg(gone.name || ' (' || gone.rule || ')', ', ' ORDER BY gone.position) FROM gone)))
FROM updated;

-- name: ReviewPlanMembers :many
-- ReviewPlanMembers reads the role and name of each user asked for as a
-- stage's reviewer who is a member of the organization; a user missing
-- from the answer is not one.
SELECT m.user_id, m.role, u.name
FROM memberships m
JOIN users u ON u.id = m.user_id
WHERE m.organization_id = @organization_id AND m.user_id = ANY(@user_ids::uuid[]);

-- name: ReviewPlansRead :many
-- ReviewPlansRead reads the review plans of the given creatives in one
-- query: each stage, in order, with its reviewers' names (in the order
-- of reviewer_ids), its state in the creative's current round (null:
-- pending) and each person's latest decision in that round (a JSON
-- array, oldest first). A creative's detail reads it only when the
-- creative has a plan, so a creative without one costs nothing more.
SELECT p.creative_id, p.position, p.name, p.rule, p.due_in_hours, p.reviewer_ids, p.guest_emails,
       ARRAY(SELECT u.name FROM unnest(p.reviewer_ids) WITH ORDINALITY AS x (id, n)
             JOIN users u ON u.id = x.id ORDER BY x.n)::text[] AS reviewer_names,
       r.status, r.due_at,
       (SELECT coalesce(jsonb_agg(jsonb_build_object(
                   'reviewerId', d.reviewer_id, 'name', coalesce(du.name, dg.name), 'guestEmail', d.guest_email,
                   'guestId', d.guest_id, 'guestVerified', d.guest_verified,
                   'decision', d.decision, 'comment', d.comment, 'versionNumber', d.version_number,
                   'at', d.created_at) ORDER BY d.id), '[]'::jsonb)
        FROM (SELECT DISTINCT ON (coalesce(rd.reviewer_id::text, rd.guest_email)) rd.*
              FROM review_decisions rd
              WHERE rd.creative_id = p.creative_id AND rd.round = r.round AND rd.position = p.position
              ORDER BY coalesce(rd.reviewer_id::text, rd.guest_email), rd.id DESC) d
        LEFT JOIN users du ON du.id = d.reviewer_id
        LEFT JOIN guests dg ON dg.id = d.guest_id)::jsonb AS decisions
FROM review_plan_stages p
JOIN creatives c ON c.id = p.creative_id
LEFT JOIN review_stage_rounds r ON r.creative_id = p.creative_id AND r.round = c.review_round
    AND r.position = p.position AND r.round >= p.from_round
WHERE p.creative_id = ANY(@ids::uuid[])
ORDER BY p.creative_id, p.position;

-- name: ReviewPlanTransition :exec
-- ReviewPlanTransition writes a review action on a creative with a review
-- plan as the caller decided it from the locked row and the plan
-- (review.Step), in one statement: the creative's state, version,
-- updated_at, approved version and round; the stages of that round whose
-- status changed (stages: a JSON array of {position, status, due_at}, a
-- due date for a stage made active); the
-- person's decision (a member's: actor_id; a guest's: actor_guest_id
-- and guest_email), for approve and request_changes (decision_position
-- is the stage it was made in, -1 for a submit), on the current version;
-- and the action's history event (naming the stage a decision was made
-- in), followed by a stage_approved event when approved_stage names the
-- stage whose rule the decision made hold (ORDER BY: the decision first).
-- A guest decides only from a verified session (docs/shares.md): a
-- guest's decision and events are verified.
WITH updated AS (
    UPDATE creatives
    SET review_status = @to_status::text,
        version = @version::integer,
        updated_at = @updated_at::timestamptz,
        approved_version_id = sqlc.narg('approved_version_id')::uuid,
        review_round = @round::integer
    WHERE creatives.id = @id::uuid
    RETURNING id, version
), changed AS (
    SELECT (e->>'position')::smallint AS position, e->>'status' AS status, (e->>'due_at')::timestamptz AS due_at
    FROM jsonb_array_elements(@stages::jsonb) AS e
), stages AS (
    INSERT INTO review_stage_rounds (creative_id, round, position, status, due_at)
    SELECT @id::uuid, @round::integer, changed.position, changed.status, changed.due_at
    FROM changed
    ON CONFLICT (creative_id, round, position) DO UPDATE
    SET status = excluded.status, due_at = coalesce(excluded.due_at, review_stage_rounds.due_at)
), decision AS (
    INSERT INTO review_decisions (creative_id, round, position, reviewer_id, guest_email, guest_id, decision, comment, version_number,
                                  override, created_at, guest_verified)
    SELECT @id::uuid, @round::integer, @decision_position::smallint, sqlc.narg('actor_id')::uuid, sqlc.narg('guest_email')::text,
           sqlc.narg('actor_guest_id')::uuid, @action::text,
           sqlc.narg('comment')::text, v.number, @override::boolean, @updated_at::timestamptz,
           CASE WHEN sqlc.narg('actor_guest_id')::uuid IS NOT NULL THEN true END
    FROM creatives c
    JOIN creative_versions v ON v.id = c.current_version_id
    WHERE c.id = @id::uuid AND @decision_position::smallint >= 0
)
INSERT INTO creative_events (creative_id, actor_id, actor_guest_id, type, from_status, to_status, comment, version, acknowledged_threads,
                             stage, override, actor_verified)
SELECT updated.id, sqlc.narg('actor_id')::uuid, sqlc.narg('actor_guest_id')::uuid, e.type, @from_status::text, @to_status::text,
       e.comment, updated.version, e.acknowledged_threads, e.stage, e.override,
       CASE WHEN sqlc.narg('actor_guest_id')::uuid IS NOT NULL THEN true END
FROM updated, (
    SELECT 1 AS n, @action::text AS type, sqlc.narg('comment')::text AS comment,
           sqlc.narg('acknowledged_threads')::uuid[] AS acknowledged_threads,
           sqlc.narg('stage')::text AS stage, @override::boolean AS override
    UNION ALL
    SELECT 2, 'stage_approved', NULL, NULL, sqlc.narg('approved_stage')::text, false
    WHERE sqlc.narg('approved_stage')::text IS NOT NULL
) AS e
ORDER BY e.n;

-- name: ReviewStagesMarkDueSoon :many
-- ReviewStagesMarkDueSoon marks, and returns, the active stages (of the
-- current round of a creative in review) due within a day of now (the
-- database's clock) but not yet, that were not announced as due soon: each is announced once per
-- stage and round. The update takes each row's lock, so two replicas
-- running it at once announce a stage once.
UPDATE review_stage_rounds
SET due_soon_at = now()
FROM creatives c
WHERE c.id = review_stage_rounds.creative_id AND c.review_round = review_stage_rounds.round AND c.review_status = 'in_review'
  AND review_stage_rounds.status = 'active' AND review_stage_rounds.due_at IS NOT NULL AND review_stage_rounds.due_soon_at IS NULL
  AND review_stage_rounds.due_at > now() AND review_stage_rounds.due_at <= now() + interval '24 hours'
RETURNING review_stage_rounds.creative_id, c.organization_id, review_stage_rounds.position;

-- name: ReviewStagesMarkOverdue :many
-- ReviewStagesMarkOverdue marks, and returns, the active stages (of the
-- current round of a creative in review) past their due date that were
-- not announced as overdue, once per stage and round (the lock as
-- ReviewStagesMarkDueSoon); a stage overdue before it was announced due
-- soon is not announced due soon aftereview_stage_rounds.
UPDATE review_stage_rounds
SET overdue_at = now(), due_soon_at = coalesce(review_stage_rounds.due_soon_at, now())
FROM creatives c
WHERE c.id = review_stage_rounds.creative_id AND c.review_round = review_stage_rounds.round AND c.review_status = 'in_review'
  AND review_stage_rounds.status = 'active' AND review_stage_rounds.due_at IS NOT NULL AND review_stage_rounds.overdue_at IS NULL AND review_stage_rounds.due_at <= now()
RETURNING review_stage_rounds.creative_id, c.organization_id, review_stage_rounds.position;
