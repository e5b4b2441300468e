package seed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

// benchmarkBatch is how many benchmark creatives one statement inserts: big
// enough to be set-based, small enough to log progress and keep each
// transaction short.
const benchmarkBatch = 10_000

// benchmarkTask marks the benchmark creatives, so a re-run counts them and
// adds only the missing ones.
const benchmarkTask = "Benchmark"

type demoAsset struct {
	file, mime    string
	size          int64
	width, height *int32
	durationMs    *int32
}

type demoEvent struct {
	actor    string
	action   review.Action
	from, to review.Status
	comment  string
}

type demoCreative struct {
	title, kind, aspect, geo, lang string
	status                         review.Status
	author, reviewer               string
	client, task                   string
	direction                      bool
	// versions are uploaded in order; the last is the current version.
	versions [][]demoAsset
	// approved makes the current version the approved one.
	approved bool
	events   []demoEvent
}

func px(n int32) *int32 { return &n }

// The demo assets: a static image, a video with its poster, an HTML5 bundle
// (no pixel size of its own) with its backup image.
func png(file string, w, h int32, size int64) demoAsset {
	return demoAsset{file: file, mime: "image/png", size: size, width: px(w), height: px(h)}
}

func mp4(file string, w, h, ms int32, size int64) demoAsset {
	return demoAsset{file: file, mime: "video/mp4", size: size, width: px(w), height: px(h), durationMs: px(ms)}
}

func html5(file string, size int64) demoAsset {
	return demoAsset{file: file, mime: "application/zip", size: size}
}

// acmeCreatives puts Acme's creatives in every review state, each history
// legal under internal/review, authored by author@acme.test.
func acmeCreatives() []demoCreative {
	const author, reviewer = "author@acme.test", "reviewer@acme.test"
	return []demoCreative{
		{
			title: "Winter clearance billboard", kind: "static", aspect: "16:9", geo: "IT", lang: "it-IT",
			status: review.StatusArchived, author: author, client: "Acme Shoes", task: "Winter clearance 2026",
			versions: [][]demoAsset{{png("winter-clearance-16x9.png", 1920, 1080, 612_408)}},
			events: []demoEvent{
				{actor: author, action: review.ActionArchive, from: review.StatusDraft, to: review.StatusArchived},
			},
		},
		{
			title: "Summer sale story", kind: "static", aspect: "9:16", geo: "DE", lang: "de-DE",
			status: review.StatusApproved, author: author, reviewer: reviewer, client: "Acme Shoes", task: "Summer sale 2026",
			direction: true, approved: true,
			versions: [][]demoAsset{
				{png("summer-sale-9x16.png", 1080, 1920, 482_133)},
				{png("summer-sale-9x16-v2.png", 1080, 1920, 490_877)},
			},
			events: []demoEvent{
				{actor: author, action: review.ActionSubmit, from: review.StatusDraft, to: review.StatusInReview},
				{actor: reviewer, action: review.ActionRequestChanges, from: review.StatusInReview, to: review.StatusChangesRequested,
					comment: "The logo is cut off in the 9:16 frame."},
				{actor: author, action: review.ActionSubmit, from: review.StatusChangesRequested, to: review.StatusInReview},
				{actor: reviewer, action: review.ActionApprove, from: review.StatusInReview, to: review.StatusApproved},
			},
		},
		{
			title: "Back to school carousel", kind: "static", aspect: "1:1", geo: "FR", lang: "fr-FR",
			status: review.StatusChangesRequested, author: author, reviewer: reviewer, client: "Acme Outdoor", task: "Back to school",
			versions: [][]demoAsset{{
				png("back-to-school-1x1-frame1.png", 1080, 1080, 301_554),
				png("back-to-school-1x1-frame2.png", 1080, 1080, 297_090),
			}},
			events: []demoEvent{
				{actor: author, action: review.ActionSubmit, from: review.StatusDraft, to: review.StatusInReview},
				{actor: reviewer, action: review.ActionRequestChanges, from: review.StatusInReview, to: review.StatusChangesRequested,
					comment: "Frame 2: the price must include VAT. Please update the copy."},
			},
		},
		{
			title: "Running shoes pre-roll", kind: "video", aspect: "16:9", geo: "US", lang: "en-US",
			status: review.StatusInReview, author: author, reviewer: reviewer, client: "Acme Shoes", task: "Autumn launch",
			versions: [][]demoAsset{
				{mp4("running-shoes-15s.mp4", 1920, 1080, 14_500, 8_241_330)},
				{mp4("running-shoes-15s-v2.mp4", 1920, 1080, 15_000, 8_410_122), png("running-shoes-poster.png", 1920, 1080, 402_771)},
			},
			events: []demoEvent{
				{actor: author, action: review.ActionSubmit, from: review.StatusDraft, to: review.StatusInReview},
			},
		},
		{
			title: "Autumn teaser banner", kind: "html5", aspect: "6:5", geo: "GB", lang: "en-GB",
			status: review.StatusInReview, author: author, client: "Acme Outdoor", task: "Autumn launch",
			versions: [][]demoAsset{{html5("autumn-teaser-300x250.zip", 148_213), png("autumn-teaser-300x250-backup.png", 300, 250, 38_410)}},
			events: []demoEvent{
				{actor: author, action: review.ActionSubmit, from: review.StatusDraft, to: review.StatusInReview},
			},
		},
		{
			title: "Spring collection lookbook", kind: "static", aspect: "4:5", geo: "ES", lang: "es-ES",
			status: review.StatusDraft, author: author, client: "Acme Outdoor",
			versions: [][]demoAsset{{png("spring-lookbook-4x5.png", 1080, 1350, 356_902)}},
		},
		{
			title: "Holiday countdown", kind: "video", aspect: "9:16", geo: "US", lang: "en-US",
			status: review.StatusDraft, author: author, task: "Holiday season",
		},
	}
}

// globexCreatives is Globex's one draft.
func globexCreatives() []demoCreative {
	return []demoCreative{{
		title: "Globex launch teaser", kind: "static", aspect: "1:1", geo: "US", lang: "en-US",
		status: review.StatusDraft, author: "admin@globex.test",
		versions: [][]demoAsset{{png("globex-launch-1x1.png", 1200, 1200, 274_116)}},
	}}
}

// errSeeded stops a transaction that found the organization already seeded.
var errSeeded = errors.New("already seeded")

// seedCreatives adds the demo creatives of each organization that has none
// yet, then tops the benchmark creatives up to opts.Creatives.
func seedCreatives(ctx context.Context, s *store.Store, log *slog.Logger, p People, opts Options) error {
	for _, org := range []struct {
		name      string
		id        uuid.UUID
		creatives []demoCreative
	}{{"acme", p.Acme, acmeCreatives()}, {"globex", p.Globex, globexCreatives()}} {
		if org.id == uuid.Nil {
			return fmt.Errorf("seed creatives: organization %s was not seeded", org.name)
		}
		err := s.InTx(ctx, func(q *db.Queries) error {
			return seedOrgCreatives(ctx, q, p, org.id, org.creatives)
		})
		switch {
		case errors.Is(err, errSeeded):
			log.Info("seed creatives", "org", org.name, "created", 0, "reason", "the organization already has creatives")
		case err != nil:
			return fmt.Errorf("seed creatives of %s: %w", org.name, err)
		default:
			log.Info("seed creatives", "org", org.name, "created", len(org.creatives))
		}
	}
	return seedBenchmarkCreatives(ctx, s, log, p, opts.Creatives)
}

// seedOrgCreatives inserts creatives into org unless it has some already.
// Reserving the numbers first locks the organization row, so two seed runs
// at once cannot both find it empty.
func seedOrgCreatives(ctx context.Context, q *db.Queries, p People, org uuid.UUID, creatives []demoCreative) error {
	first, err := q.OrganizationCreativeNumbersReserve(ctx, db.OrganizationCreativeNumbersReserveParams{Count: int32(len(creatives)), ID: org})
	if err != nil {
		return err
	}
	exists, err := q.CreativeExistsInOrganization(ctx, org)
	if err != nil {
		return err
	}
	if exists {
		return errSeeded
	}
	user := func(email string) (uuid.UUID, error) {
		id, ok := p.Users[email]
		if !ok {
			return uuid.Nil, fmt.Errorf("demo user %s was not seeded", email)
		}
		return id, nil
	}
	for i, c := range creatives {
		if err := insertDemoCreative(ctx, q, org, first+int32(i), c, user); err != nil {
			return fmt.Errorf("%s: %w", c.title, err)
		}
	}
	return nil
}

func insertDemoCreative(ctx context.Context, q *db.Queries, org uuid.UUID, number int32, c demoCreative, user func(string) (uuid.UUID, error)) error {
	author, err := user(c.author)
	if err != nil {
		return err
	}
	params := db.CreativeInsertParams{
		OrganizationID: org, Number: number, Title: c.title, Type: c.kind, AspectRatio: c.aspect, Geo: c.geo,
		Language: c.lang, AuthorID: author, ReviewStatus: string(c.status), Version: int32(1 + len(c.events)),
	}
	if c.reviewer != "" {
		id, err := user(c.reviewer)
		if err != nil {
			return err
		}
		params.ReviewerID = &id
	}
	if c.client != "" {
		id, err := q.ClientUpsert(ctx, db.ClientUpsertParams{OrganizationID: org, Name: c.client})
		if err != nil {
			return err
		}
		params.ClientID = &id
	}
	if c.task != "" {
		id, err := q.TaskUpsert(ctx, db.TaskUpsertParams{OrganizationID: org, Name: c.task})
		if err != nil {
			return err
		}
		params.TaskID = &id
	}
	if c.direction {
		id := uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://acme.test/directions/"+c.title))
		params.DirectionID = &id
	}
	id, err := q.CreativeInsert(ctx, params)
	if err != nil {
		return err
	}
	var current *uuid.UUID
	for n, assets := range c.versions {
		vid, err := q.CreativeVersionInsert(ctx, db.CreativeVersionInsertParams{CreativeID: id, Number: int32(n + 1), AuthorID: author})
		if err != nil {
			return err
		}
		for pos, a := range assets {
			if err := q.AssetInsert(ctx, db.AssetInsertParams{
				VersionID: vid, Position: int32(pos + 1), FileName: a.file, MimeType: a.mime, SizeBytes: a.size,
				Url:   "https://cdn.acme.test/assets/" + id.String() + "/v" + fmt.Sprint(n+1) + "/" + a.file,
				Width: a.width, Height: a.height, DurationMs: a.durationMs, Sha256: demoSHA256(id, n+1, a.file),
			}); err != nil {
				return err
			}
		}
		current = &vid
	}
	var approved *uuid.UUID
	if c.approved {
		approved = current
	}
	if err := q.CreativeSetVersions(ctx, db.CreativeSetVersionsParams{ID: id, CurrentVersionID: current, ApprovedVersionID: approved}); err != nil {
		return err
	}
	for i, e := range c.events {
		actor, err := user(e.actor)
		if err != nil {
			return err
		}
		var comment *string
		if e.comment != "" {
			comment = &e.comment
		}
		if err := q.CreativeEventInsert(ctx, db.CreativeEventInsertParams{
			CreativeID: id, ActorID: actor, Action: string(e.action), FromStatus: string(e.from), ToStatus: string(e.to),
			Comment: comment, Version: int32(i + 2),
		}); err != nil {
			return err
		}
	}
	return nil
}

// demoSHA256 stands in for the digest of a file the demo does not have.
func demoSHA256(creative uuid.UUID, version int, file string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{creative.String(), fmt.Sprint(version), file}, "/")))
	return hex.EncodeToString(sum[:])
}

// seedBenchmarkCreatives tops Acme's benchmark creatives up to n, in
// set-based batches, each in its own transaction with a progress line.
func seedBenchmarkCreatives(ctx context.Context, s *store.Store, log *slog.Logger, p People, n int) error {
	if n <= 0 {
		return nil
	}
	author, ok := p.Users["author@acme.test"]
	if !ok {
		return errors.New("seed benchmark creatives: author@acme.test was not seeded")
	}
	task, err := s.Q.TaskUpsert(ctx, db.TaskUpsertParams{OrganizationID: p.Acme, Name: benchmarkTask})
	if err != nil {
		return store.Translate(err)
	}
	have, err := s.Q.CreativeCountByTask(ctx, &task)
	if err != nil {
		return store.Translate(err)
	}
	missing := n - int(have)
	if missing <= 0 {
		log.Info("seed benchmark creatives", "wanted", n, "present", have, "created", 0)
		return nil
	}
	for done := 0; done < missing; {
		size := min(benchmarkBatch, missing-done)
		err := s.InTx(ctx, func(q *db.Queries) error {
			first, err := q.OrganizationCreativeNumbersReserve(ctx, db.OrganizationCreativeNumbersReserveParams{Count: int32(size), ID: p.Acme})
			if err != nil {
				return err
			}
			_, err = q.CreativeInsertDraftBatch(ctx, db.CreativeInsertDraftBatchParams{
				FirstNumber: first, LastNumber: first + int32(size) - 1, OrganizationID: p.Acme, AuthorID: author, TaskID: task,
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("seed benchmark creatives: %w", err)
		}
		done += size
		log.Info("seed benchmark creatives", "created", done, "of", missing)
	}
	return nil
}
