package seed_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"creativeapi/internal/review"
	"creativeapi/internal/seed"
	"creativeapi/internal/testenv"
)

// demoCreative is what the tests read back of a seeded creative.
type demoCreative struct {
	ID                                uuid.UUID
	Slug, Status                      string
	Number, Version                   int
	Author                            uuid.UUID
	HasReviewer, HasCurrent, Approved bool
	ApprovedIsCurrent                 bool
	Versions, Assets, Events          int
}

func demoCreatives(t *testing.T, d *testenv.DB) []demoCreative {
	t.Helper()
	rows, err := d.Pool.Query(context.Background(), `
		SELECT c.id, o.slug, c.review_status, c.number, c.version, c.author_id,
		       c.reviewer_id IS NOT NULL, c.current_version_id IS NOT NULL, c.approved_version_id IS NOT NULL,
		       c.approved_version_id IS NOT DISTINCT FROM c.current_version_id,
		       (SELECT count(*) FROM creative_versions v WHERE v.creative_id = c.id),
		       (SELECT count(*) FROM assets a JOIN creative_versions v ON v.id = a.version_id WHERE v.creative_id = c.id),
		       (SELECT count(*) FROM creative_events e WHERE e.creative_id = c.id AND e.type <> 'stage_approved')
		FROM creatives c JOIN organizations o ON o.id = c.organization_id
		ORDER BY o.slug, c.number`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[demoCreative])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSeedingTwiceGivesAcmeEveryReviewStateOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewDB(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := seed.Run(ctx, d.Store, log, seed.Options{}); err != nil {
		t.Fatal(err)
	}
	first := demoCreatives(t, d)
	if err := seed.Run(ctx, d.Store, log, seed.Options{}); err != nil {
		t.Fatal(err)
	}
	if second := demoCreatives(t, d); !slices.Equal(first, second) {
		t.Fatalf("the second run changed the creatives:\n%+v\n%+v", first, second)
	}

	var author uuid.UUID
	if err := d.Pool.QueryRow(ctx, "SELECT id FROM users WHERE email = 'author@acme.test'").Scan(&author); err != nil {
		t.Fatal(err)
	}
	has := func(name string, ok func(c demoCreative) bool) {
		t.Helper()
		if !slices.ContainsFunc(first, func(c demoCreative) bool { return c.Slug == "acme" && ok(c) }) {
			t.Errorf("Acme has no %s", name)
		}
	}
	has("draft without a version", func(c demoCreative) bool { return c.Status == "draft" && !c.HasCurrent })
	has("draft with a version", func(c demoCreative) bool { return c.Status == "draft" && c.HasCurrent })
	has("creative in review with a reviewer", func(c demoCreative) bool { return c.Status == "in_review" && c.HasReviewer })
	has("creative in review without a reviewer", func(c demoCreative) bool { return c.Status == "in_review" && !c.HasReviewer })
	has("creative with changes requested and its event", func(c demoCreative) bool { return c.Status == "changes_requested" && c.Events > 0 })
	has("approved creative with its approved version", func(c demoCreative) bool { return c.Status == "approved" && c.Approved && c.ApprovedIsCurrent })
	has("draft with a new version after its approval", func(c demoCreative) bool { return c.Status == "draft" && c.Approved && !c.ApprovedIsCurrent })
	has("creative with several versions", func(c demoCreative) bool { return c.Versions >= 2 })
	has("archived creative", func(c demoCreative) bool { return c.Status == "archived" })

	for i, c := range first {
		if c.Slug == "acme" && c.Author != author {
			t.Errorf("Acme's %d is not authored by author@acme.test", c.Number)
		}
		// Every change, the creation included, bumped the version and left one event.
		if c.Number != i+1 && c.Slug == "acme" || c.Version != c.Events || c.HasCurrent != (c.Versions > 0) || c.Versions > 2 || c.Assets < c.Versions {
			t.Errorf("inconsistent creative %+v", c)
		}
	}
	if globex := slices.DeleteFunc(slices.Clone(first), func(c demoCreative) bool { return c.Slug != "globex" }); len(globex) != 1 || globex[0].Status != "draft" {
		t.Errorf("Globex creatives: %+v", globex)
	}
	// One creative in a two-stage review with its first decision: the
	// first stage approved, the second deciding.
	var staged, decisions int
	var statuses []string
	if err := d.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM creatives WHERE review_plan AND review_status = 'in_review'),
		(SELECT count(*) FROM review_decisions),
		(SELECT array_agg(status ORDER BY position) FROM review_stage_rounds)`).Scan(&staged, &decisions, &statuses); err != nil {
		t.Fatal(err)
	}
	if staged != 1 || decisions != 1 || !slices.Equal(statuses, []string{"approved", "active"}) {
		t.Errorf("staged creatives %d, decisions %d, stages %v; want 1, 1, [approved active]", staged, decisions, statuses)
	}
	var comments, nullSizes, videos, assignments, edits int
	if err := d.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM creative_events WHERE type = 'request_changes' AND comment IS NOT NULL),
		(SELECT count(*) FROM assets WHERE mime_type = 'application/zip' AND width IS NULL AND height IS NULL),
		(SELECT count(*) FROM assets WHERE mime_type = 'video/mp4' AND duration_ms > 0),
		(SELECT count(*) FROM creative_events WHERE type = 'updated' AND changes @> '[{"field": "reviewerId"}]'),
		(SELECT count(*) FROM creative_events WHERE type = 'updated' AND changes @> '[{"field": "title"}]')`).
		Scan(&comments, &nullSizes, &videos, &assignments, &edits); err != nil {
		t.Fatal(err)
	}
	if comments == 0 || nullSizes == 0 || videos == 0 || assignments == 0 || edits == 0 {
		t.Errorf("request_changes comments %d, html5 bundles without size %d, videos with a duration %d, reviewer assignments %d, title edits %d",
			comments, nullSizes, videos, assignments, edits)
	}
}

// TestDemoHistoriesFollowTheReviewRules replays every seeded event through
// internal/review with the actor's role, so the demo shows only what the
// API itself could have done: a creation by an author or admin, then each
// change allowed to its actor from the state the history had reached, each
// one version further.
func TestDemoHistoriesFollowTheReviewRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewDB(t)
	if err := seed.Run(ctx, d.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), seed.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range demoCreatives(t, d) {
		rows, err := d.Pool.Query(ctx, `
			SELECT e.actor_id, m.role, e.type, e.from_status, e.to_status, e.version, e.changes
			FROM creative_events e
			JOIN creatives cr ON cr.id = e.creative_id
			JOIN memberships m ON m.organization_id = cr.organization_id AND m.user_id = e.actor_id
			WHERE e.creative_id = $1 ORDER BY e.id`, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The creative's review plan, if any (the demo sets one plan once).
		var plan review.Plan
		stages, err := d.Pool.Query(ctx, `SELECT rule, reviewer_ids FROM review_plan_stages WHERE creative_id = $1 ORDER BY position`, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for stages.Next() {
			var rule string
			var ids []uuid.UUID
			if err := stages.Scan(&rule, &ids); err != nil {
				t.Fatal(err)
			}
			st := review.Stage{Rule: review.StageRule(rule)}
			for _, id := range ids {
				st.Reviewers = append(st.Reviewers, review.MemberKey(id))
			}
			plan.Stages = append(plan.Stages, st)
		}
		var state review.Creative
		var held review.Outcome // what the last decision did to its stage
		version := 0
		for rows.Next() {
			var actor uuid.UUID
			var role, kind, to string
			var from *string
			var v int
			var changes []struct {
				Field string  `json:"field"`
				To    *string `json:"to"`
			}
			if err := rows.Scan(&actor, &role, &kind, &from, &to, &v, &changes); err != nil {
				t.Fatal(err)
			}
			who := review.Caller{UserID: actor, Role: review.Role(role)}
			if kind == "stage_approved" {
				// It follows the decision that made its stage's rule hold,
				// at that decision's version.
				if held != review.OutcomeStageApproved && held != review.OutcomeApproved || v != version || string(state.Status) != to {
					t.Errorf("%s %d: stage_approved at v%d after %q", c.Slug, c.Number, v, held)
				}
				held = ""
				continue
			}
			version++
			var next review.Status
			switch kind {
			case "created":
				if err := review.AuthorizeCreate(who.Role); err != nil || version != 1 || from != nil || actor != c.Author {
					t.Errorf("%s %d: created by a %s (author %v) at v%d from %v: %v", c.Slug, c.Number, role, actor == c.Author, version, from, err)
				}
				state = review.Creative{Status: review.StatusDraft, AuthorID: actor}
				next = review.StatusDraft
			default:
				actions := []review.Action{review.Action(kind)}
				switch kind {
				case "version_added":
					actions = []review.Action{review.ActionAddVersion}
				case "updated":
					actions = nil
					for _, ch := range changes {
						a := review.ActionEdit
						if ch.Field == "reviewerId" {
							a = review.ActionAssignReviewer
							state.ReviewerID = uuid.Nil
							if ch.To != nil {
								state.ReviewerID = uuid.MustParse(*ch.To)
							}
						}
						actions = append(actions, a)
					}
				}
				next = state.Status
				for _, ch := range changes {
					if ch.Field == "reviewPlan" {
						actions = []review.Action{review.ActionSetReviewPlan}
						state.HasPlan, state.Plan = ch.To != nil, plan
					}
				}
				for _, a := range actions {
					if state.HasPlan && a.Valid() {
						var move review.Move
						if next, move, err = review.Step(state, who, nil, a); err == nil {
							state.Round, held = move.Round, move.Outcome
						}
						break
					}
					if next, err = review.Decide(state, who, a); err != nil {
						break
					}
				}
				if err != nil || from == nil || string(state.Status) != *from {
					t.Errorf("%s %d: %s by a %s from %v to %s at v%d: %v (replayed state %s)", c.Slug, c.Number, kind, role, from, to, v, err, state.Status)
				}
				if kind == "version_added" {
					state.HasCurrentVersion = true
				}
			}
			if string(next) != to || v != version {
				t.Errorf("%s %d: %s to %s at v%d, replayed to %s at v%d", c.Slug, c.Number, kind, to, v, next, version)
			}
			state.Status = next
		}
		if string(state.Status) != c.Status || version != c.Version {
			t.Errorf("%s %d: history ends at %s v%d, the creative is %s v%d", c.Slug, c.Number, state.Status, version, c.Status, c.Version)
		}
	}
}

func TestBenchmarkCreativesAreToppedUpInBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewDB(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const n = 10_001 // two batches
	for range 2 {
		if err := seed.Run(ctx, d.Store, log, seed.Options{Creatives: n}); err != nil {
			t.Fatal(err)
		}
	}
	var drafts, withAsset, distinctNumbers, next, maxNumber int
	err := d.Pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE c.review_status = 'draft'),
		       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM assets a WHERE a.version_id = c.current_version_id)),
		       count(DISTINCT c.number), max(o.next_creative_number), max(c.number)
		FROM creatives c
		JOIN organizations o ON o.id = c.organization_id
		JOIN tasks t ON t.id = c.task_id AND t.name = 'Benchmark'
		WHERE o.slug = 'acme'`).Scan(&drafts, &withAsset, &distinctNumbers, &next, &maxNumber)
	if err != nil {
		t.Fatal(err)
	}
	if drafts != n || withAsset != n || distinctNumbers != n || next != maxNumber+1 {
		t.Fatalf("drafts %d, with an asset %d, distinct numbers %d, next number %d after %d; want %d", drafts, withAsset, distinctNumbers, next, maxNumber, n)
	}
}

// TestDemoThreadsShowEveryKindOfComment: a frontend on `make run` sees open
// and resolved threads, region, time and page anchors, a reply, and a
// tombstone, on several creatives.
func TestDemoThreadsShowEveryKindOfComment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewDB(t)
	if err := seed.Run(ctx, d.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), seed.Options{}); err != nil {
		t.Fatal(err)
	}
	var creatives int
	kinds := map[string]int{}
	err := d.Pool.QueryRow(ctx, `
		SELECT count(DISTINCT creative_id),
		       count(*) FILTER (WHERE parent_id IS NULL AND NOT resolved AND NOT deleted),
		       count(*) FILTER (WHERE resolved),
		       count(*) FILTER (WHERE anchor->'region' <> 'null'::jsonb),
		       count(*) FILTER (WHERE anchor->'timeMs' <> 'null'::jsonb),
		       count(*) FILTER (WHERE anchor->'page' <> 'null'::jsonb),
		       count(*) FILTER (WHERE parent_id IS NOT NULL),
		       count(*) FILTER (WHERE deleted)
		FROM comments`).Scan(&creatives, ptrTo(kinds, "open"), ptrTo(kinds, "resolved"), ptrTo(kinds, "region"),
		ptrTo(kinds, "time"), ptrTo(kinds, "page"), ptrTo(kinds, "reply"), ptrTo(kinds, "tombstone"))
	if err != nil {
		t.Fatal(err)
	}
	if creatives < 3 {
		t.Errorf("comments on %d creatives, want several", creatives)
	}
	for _, k := range []string{"open", "resolved", "region", "time", "page", "reply", "tombstone"} {
		if kinds[k] == 0 {
			t.Errorf("no %s comment in the demo data: %v", k, kinds)
		}
	}
}

// ptrTo is a scan target that stores into m[k].
func ptrTo(m map[string]int, k string) any { return &intInto{m, k} }

type intInto struct {
	m map[string]int
	k string
}

func (i *intInto) Scan(v any) error {
	n, _ := v.(int64)
	i.m[i.k] = int(n)
	return nil
}
