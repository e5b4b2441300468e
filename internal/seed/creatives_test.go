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
		       (SELECT count(*) FROM creative_events e WHERE e.creative_id = c.id)
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
	has("archived creative", func(c demoCreative) bool { return c.Status == "archived" })

	for i, c := range first {
		if c.Slug == "acme" && c.Author != author {
			t.Errorf("Acme's %d is not authored by author@acme.test", c.Number)
		}
		if c.Number != i+1 && c.Slug == "acme" || c.Version != 1+c.Events || c.HasCurrent != (c.Versions > 0) || c.Versions > 2 || c.Assets < c.Versions {
			t.Errorf("inconsistent creative %+v", c)
		}
	}
	if globex := slices.DeleteFunc(slices.Clone(first), func(c demoCreative) bool { return c.Slug != "globex" }); len(globex) != 1 || globex[0].Status != "draft" {
		t.Errorf("Globex creatives: %+v", globex)
	}
	var comments, nullSizes, videos int
	if err := d.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM creative_events WHERE action = 'request_changes' AND comment IS NOT NULL),
		(SELECT count(*) FROM assets WHERE mime_type = 'application/zip' AND width IS NULL AND height IS NULL),
		(SELECT count(*) FROM assets WHERE mime_type = 'video/mp4' AND duration_ms > 0)`).Scan(&comments, &nullSizes, &videos); err != nil {
		t.Fatal(err)
	}
	if comments == 0 || nullSizes == 0 || videos == 0 {
		t.Errorf("request_changes comments %d, html5 bundles without size %d, videos with a duration %d", comments, nullSizes, videos)
	}
}

// TestDemoHistoriesFollowTheReviewRules replays every seeded event through
// internal/review with the actor's role, so the demo shows only what the
// API itself could have done.
func TestDemoHistoriesFollowTheReviewRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewDB(t)
	if err := seed.Run(ctx, d.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), seed.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range demoCreatives(t, d) {
		rows, err := d.Pool.Query(ctx, `
			SELECT e.actor_id, m.role, e.action, e.from_status, e.to_status, e.version, cr.reviewer_id
			FROM creative_events e
			JOIN creatives cr ON cr.id = e.creative_id
			JOIN memberships m ON m.organization_id = cr.organization_id AND m.user_id = e.actor_id
			WHERE e.creative_id = $1 ORDER BY e.id`, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		state := review.Creative{Status: review.StatusDraft, AuthorID: c.Author, HasCurrentVersion: c.HasCurrent}
		version := 1
		for rows.Next() {
			var actor uuid.UUID
			var reviewer *uuid.UUID
			var role, action, from, to string
			var v int
			if err := rows.Scan(&actor, &role, &action, &from, &to, &v, &reviewer); err != nil {
				t.Fatal(err)
			}
			if reviewer != nil {
				state.ReviewerID = *reviewer
			}
			next, err := review.Decide(state, review.Caller{UserID: actor, Role: review.Role(role)}, review.Action(action))
			version++
			if err != nil || string(state.Status) != from || string(next) != to || v != version {
				t.Errorf("%s %d: %s by a %s from %s to %s at v%d: %v (replayed state %s, v%d)", c.Slug, c.Number, action, role, from, to, v, err, state.Status, version)
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
