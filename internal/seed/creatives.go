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

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/creative"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
	"creativeapi/internal/thread"
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

// demoStep is one change of a demo creative's history, made through the
// creative service as its actor: a version (assets), a review action, an
// edit of the title, the assignment of a reviewer, or a review comment
// (note), or resolving (resolves) or deleting (deletes) the creative's
// n-th note, counting from 1.
type demoStep struct {
	actor             string
	assets            []demoAsset
	action            review.Action
	comment           string
	title             string
	reviewer          string
	note              *demoNote
	resolves, deletes int
	plan              []demoStage
}

// demoStage is a stage of a review plan the step sets: its reviewers by
// email.
type demoStage struct {
	name, rule string
	reviewers  []string
	dueInHours int32
}

// demoNote is a review comment on the current version: a reply to the
// creative's n-th note (replyTo, from 1), or a top-level comment anchored
// on the version's n-th asset (asset, from 1; 0 for no anchor) at a
// region, a time or a page.
type demoNote struct {
	body    string
	replyTo int
	asset   int
	region  *thread.Region
	timeMs  *thread.TimeRange
	page    *int64
}

func note(actor, body string) demoStep {
	return demoStep{actor: actor, note: &demoNote{body: body}}
}

func pin(actor, body string, asset int, region *thread.Region, timeMs *thread.TimeRange, page *int64) demoStep {
	return demoStep{actor: actor, note: &demoNote{body: body, asset: asset, region: region, timeMs: timeMs, page: page}}
}

func reply(actor string, to int, body string) demoStep {
	return demoStep{actor: actor, note: &demoNote{body: body, replyTo: to}}
}

func ms(start, end int64) *thread.TimeRange { return &thread.TimeRange{Start: start, End: &end} }

type demoCreative struct {
	// title is the creative's title once its steps ran (a step may fix a
	// typo of the first title); created is the first title when it differs.
	title, created          string
	kind, aspect, geo, lang string
	author                  string
	client, task            string
	direction               bool
	steps                   []demoStep
}

func px(n int32) *int32 { return &n }

func page(n int64) *int64 { return &n }

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

// The demo people who act in the histories.
const (
	acmeAdmin    = "admin@acme.test"
	acmeReviewer = "reviewer@acme.test"
	acmeAuthor   = "author@acme.test"
)

func version(assets ...demoAsset) demoStep { return demoStep{actor: acmeAuthor, assets: assets} }
func submit() demoStep                     { return demoStep{actor: acmeAuthor, action: review.ActionSubmit} }
func assign() demoStep                     { return demoStep{actor: acmeAdmin, reviewer: acmeReviewer} }
func decide(a review.Action, comment string) demoStep {
	return demoStep{actor: acmeReviewer, action: a, comment: comment}
}

// acmeCreatives puts Acme's creatives in every review state, authored by
// author@acme.test: several versions, histories with request-changes
// comments, an edited title, assigned reviewers, and an approved creative
// back in draft with a new version.
func acmeCreatives() []demoCreative {
	return []demoCreative{
		{
			title: "Winter clearance billboard", kind: "static", aspect: "16:9", geo: "IT", lang: "it-IT",
			author: acmeAuthor, client: "Acme Shoes", task: "Winter clearance 2026",
			steps: []demoStep{
				version(png("winter-clearance-16x9.png", 1920, 1080, 612_408)),
				{actor: acmeAuthor, action: review.ActionArchive},
			},
		},
		{
			title: "Summer sale story", kind: "static", aspect: "9:16", geo: "DE", lang: "de-DE",
			author: acmeAuthor, client: "Acme Shoes", task: "Summer sale 2026", direction: true,
			steps: []demoStep{
				assign(),
				version(png("summer-sale-9x16.png", 1080, 1920, 482_133)),
				submit(),
				pin(acmeReviewer, "The logo is cut off at the top of the 9:16 frame.", 1, &thread.Region{X: 0.3, Y: 0, Width: 0.4, Height: 0.08}, nil, nil),
				reply(acmeAuthor, 1, "Moving it below the safe area in v2."),
				decide(review.ActionRequestChanges, "The logo is cut off in the 9:16 frame."),
				version(png("summer-sale-9x16-v2.png", 1080, 1920, 490_877)),
				{actor: acmeAuthor, resolves: 1},
				submit(),
				decide(review.ActionApprove, ""),
			},
		},
		{
			title: "Back to school carousel", created: "Back to shcool carousel", kind: "static", aspect: "1:1", geo: "FR", lang: "fr-FR",
			author: acmeAuthor, client: "Acme Outdoor", task: "Back to school",
			steps: []demoStep{
				{actor: acmeAuthor, title: "Back to school carousel"},
				assign(),
				version(
					png("back-to-school-1x1-frame1.png", 1080, 1080, 301_554),
					png("back-to-school-1x1-frame2.png", 1080, 1080, 297_090),
				),
				submit(),
				pin(acmeReviewer, "Frame 2: the price must include VAT.", 2, &thread.Region{X: 0.55, Y: 0.7, Width: 0.35, Height: 0.12}, nil, nil),
				pin(acmeAdmin, "Frame 1: use the new brand font.", 1, nil, nil, nil),
				reply(acmeAuthor, 2, "Which weight?"),
				{actor: acmeAdmin, deletes: 2},
				decide(review.ActionRequestChanges, "Frame 2: the price must include VAT. Please update the copy."),
			},
		},
		{
			title: "Running shoes pre-roll", kind: "video", aspect: "16:9", geo: "US", lang: "en-US",
			author: acmeAuthor, client: "Acme Shoes", task: "Autumn launch",
			steps: []demoStep{
				assign(),
				version(mp4("running-shoes-15s.mp4", 1920, 1080, 14_500, 8_241_330)),
				version(mp4("running-shoes-15s-v2.mp4", 1920, 1080, 15_000, 8_410_122), png("running-shoes-poster.png", 1920, 1080, 402_771)),
				submit(),
				pin(acmeReviewer, "The claim flashes by too fast: hold it a second longer.", 1, nil, ms(4_200, 6_000), nil),
				pin(acmeReviewer, "Blurred shoe at the cut.", 1, &thread.Region{X: 0.4, Y: 0.5, Width: 0, Height: 0}, ms(9_800, 9_800), nil),
				reply(acmeAuthor, 1, "Holding it until 7 s in the next cut."),
				note(acmeAdmin, "Music licence confirmed for the US."),
			},
		},
		{
			title: "Autumn teaser banner", kind: "html5", aspect: "6:5", geo: "GB", lang: "en-GB",
			author: acmeAuthor, client: "Acme Outdoor", task: "Autumn launch",
			steps: []demoStep{
				version(html5("autumn-teaser-300x250.zip", 148_213), png("autumn-teaser-300x250-backup.png", 300, 250, 38_410)),
				submit(),
				pin(acmeReviewer, "Slide 3: the call to action is missing.", 1, nil, nil, page(3)),
			},
		},
		{
			title: "Newsletter header", kind: "static", aspect: "3:1", geo: "NL", lang: "nl-NL",
			author: acmeAuthor, client: "Acme Shoes", task: "Summer sale 2026",
			steps: []demoStep{
				version(png("newsletter-header-3x1.png", 1800, 600, 210_554)),
				submit(),
				decide(review.ActionApprove, "Good to go."),
				version(png("newsletter-header-3x1-v2.png", 1800, 600, 214_009)),
			},
		},
		{
			// A two-stage review with its first decision: the brand stage
			// approved, legal deciding (docs/review.md, "Review stages").
			title: "Autumn launch billboard", kind: "static", aspect: "16:9", geo: "DE", lang: "de-DE",
			author: acmeAuthor, client: "Acme Outdoor", task: "Autumn launch",
			steps: []demoStep{
				version(png("autumn-launch-16x9.png", 1920, 1080, 587_220)),
				{actor: acmeAuthor, plan: []demoStage{
					{name: "Brand", rule: "all", reviewers: []string{acmeReviewer}, dueInHours: 48},
					{name: "Legal", rule: "any", reviewers: []string{acmeAdmin}, dueInHours: 72},
				}},
				submit(),
				decide(review.ActionApprove, "On brand."),
			},
		},
		{
			title: "Spring collection lookbook", kind: "static", aspect: "4:5", geo: "ES", lang: "es-ES",
			author: acmeAuthor, client: "Acme Outdoor",
			steps: []demoStep{version(png("spring-lookbook-4x5.png", 1080, 1350, 356_902))},
		},
		{
			title: "Holiday countdown", kind: "video", aspect: "9:16", geo: "US", lang: "en-US",
			author: acmeAuthor, task: "Holiday season",
		},
	}
}

// globexCreatives is Globex's one draft.
func globexCreatives() []demoCreative {
	return []demoCreative{{
		title: "Globex launch teaser", kind: "static", aspect: "1:1", geo: "US", lang: "en-US",
		author: "admin@globex.test",
		steps:  []demoStep{{actor: "admin@globex.test", assets: []demoAsset{png("globex-launch-1x1.png", 1200, 1200, 274_116)}}},
	}}
}

// seedCreatives adds the demo creatives each organization lacks (by
// title), then tops the benchmark creatives up to opts.Creatives.
func seedCreatives(ctx context.Context, s *store.Store, log *slog.Logger, p People, opts Options) error {
	for _, org := range []struct {
		name      string
		id        uuid.UUID
		creatives []demoCreative
	}{{"acme", p.Acme, acmeCreatives()}, {"globex", p.Globex, globexCreatives()}} {
		if org.id == uuid.Nil {
			return fmt.Errorf("seed creatives: organization %s was not seeded", org.name)
		}
		created := 0
		for _, c := range org.creatives {
			var added bool
			err := s.InTx(ctx, func(q store.Tx) error {
				var err error
				added, err = seedDemoCreative(ctx, q, p, org.id, c)
				return err
			})
			if err != nil {
				return fmt.Errorf("seed creatives of %s: %s: %w", org.name, c.title, err)
			}
			if added {
				created++
			}
		}
		log.Info("seed creatives", "org", org.name, "created", created, "present", len(org.creatives)-created)
	}
	return seedBenchmarkCreatives(ctx, s, log, p, opts.Creatives)
}

// seedDemoCreative creates c in org, and makes the changes of its history
// through the creative service as their actors, unless org has a creative
// of that title already. Taking the organization's row lock first makes two
// seed runs at once add it once.
func seedDemoCreative(ctx context.Context, q store.Tx, p People, org uuid.UUID, c demoCreative) (bool, error) {
	if _, err := q.OrganizationCreativeNumbersReserve(ctx, db.OrganizationCreativeNumbersReserveParams{Count: 0, ID: org}); err != nil {
		return false, err
	}
	exists, err := q.CreativeTitleExists(ctx, db.CreativeTitleExistsParams{OrganizationID: org, Title: c.title})
	if err != nil || exists {
		return false, err
	}
	user := func(email string) (uuid.UUID, error) {
		id, ok := p.Users[email]
		if !ok {
			return uuid.Nil, fmt.Errorf("demo user %s was not seeded", email)
		}
		return id, nil
	}
	author, err := user(c.author)
	if err != nil {
		return false, err
	}
	in := creative.NewCreative{Title: c.title, Type: c.kind, AspectRatio: c.aspect, Geo: c.geo, Language: c.lang}
	if c.created != "" {
		in.Title = c.created
	}
	if c.client != "" {
		id, err := q.ClientUpsert(ctx, db.ClientUpsertParams{OrganizationID: org, Name: c.client})
		if err != nil {
			return false, err
		}
		in.ClientID = &id
	}
	if c.task != "" {
		id, err := q.TaskUpsert(ctx, db.TaskUpsertParams{OrganizationID: org, Name: c.task})
		if err != nil {
			return false, err
		}
		in.TaskID = &id
	}
	if c.direction {
		id := uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://acme.test/directions/"+c.title))
		in.DirectionID = &id
	}
	made, err := creative.Create(ctx, q, org, author, in)
	if err != nil {
		return false, err
	}
	id, versions := made.ID, 0
	var current *creative.VersionDetail
	var notes []uuid.UUID
	noteID := func(n int) (uuid.UUID, error) {
		if n < 1 || n > len(notes) {
			return uuid.Nil, fmt.Errorf("no note %d", n)
		}
		return notes[n-1], nil
	}
	for i, step := range c.steps {
		actor, err := user(step.actor)
		if err != nil {
			return false, err
		}
		switch {
		case step.assets != nil:
			versions++
			v := creative.NewVersion{Assets: make([]creative.NewAsset, len(step.assets))}
			for j, a := range step.assets {
				v.Assets[j] = creative.NewAsset{
					FileName: a.file, MimeType: a.mime, SizeBytes: a.size,
					URL:   fmt.Sprintf("https://cdn.acme.test/assets/%s/v%d/%s", id, versions, a.file),
					Width: a.width, Height: a.height, DurationMs: a.durationMs, SHA256: demoSHA256(id, versions, a.file),
				}
			}
			var added creative.Creative
			if added, err = creative.AddVersion(ctx, q, org, id, actor, v); err == nil {
				current = added.Detail.CurrentVersion
			}
		case step.note != nil:
			var made api.Comment
			if made, err = seedNote(ctx, q, org, id, actor, current, *step.note, noteID); err == nil {
				notes = append(notes, made.Id)
			}
		case step.resolves != 0:
			var cm uuid.UUID
			if cm, err = noteID(step.resolves); err == nil {
				resolved := true
				_, err = creative.UpdateComment(ctx, q, org, id, cm, actor, creative.CommentPatch{Resolved: &resolved})
			}
		case step.deletes != 0:
			var cm uuid.UUID
			if cm, err = noteID(step.deletes); err == nil {
				err = creative.DeleteComment(ctx, q, org, id, cm, actor)
			}
		case step.action != "":
			in := creative.ActionRequest{Action: step.action}
			if step.comment != "" {
				in.Comment = &step.comment
			}
			_, err = creative.Act(ctx, q, org, id, actor, in)
		case step.plan != nil:
			in := creative.NewPlan{Stages: make([]creative.NewStage, len(step.plan))}
			for j, st := range step.plan {
				in.Stages[j] = creative.NewStage{Name: st.name, Rule: review.StageRule(st.rule), DueInHours: &st.dueInHours}
				for _, email := range st.reviewers {
					var r uuid.UUID
					if r, err = user(email); err != nil {
						break
					}
					in.Stages[j].ReviewerIDs = append(in.Stages[j].ReviewerIDs, r)
				}
			}
			if err == nil {
				_, err = creative.SetReviewPlan(ctx, q, org, id, actor, in)
			}
		case step.title != "":
			_, err = creative.Update(ctx, q, org, id, actor, creative.Patch{Title: &step.title})
		case step.reviewer != "":
			var reviewer uuid.UUID
			if reviewer, err = user(step.reviewer); err == nil {
				_, err = creative.Update(ctx, q, org, id, actor, creative.Patch{ReviewerID: creative.IDField{Set: true, ID: &reviewer}})
			}
		default:
			err = errors.New("a step that changes nothing")
		}
		if err != nil {
			return false, fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return true, nil
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
		return err
	}
	have, err := s.Q.CreativeCountByTask(ctx, &task)
	if err != nil {
		return err
	}
	missing := n - int(have)
	if missing <= 0 {
		log.Info("seed benchmark creatives", "wanted", n, "present", have, "created", 0)
		return nil
	}
	for done := 0; done < missing; {
		size := min(benchmarkBatch, missing-done)
		err := s.InTx(ctx, func(q store.Tx) error {
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

// seedNote writes a demo note through the comment service.
func seedNote(ctx context.Context, q store.Tx, org, id, actor uuid.UUID, current *creative.VersionDetail, n demoNote,
	noteID func(int) (uuid.UUID, error)) (api.Comment, error) {
	in := creative.NewComment{Body: n.body}
	if n.replyTo != 0 {
		parent, err := noteID(n.replyTo)
		if err != nil {
			return api.Comment{}, err
		}
		in.ParentID = &parent
	}
	if n.asset != 0 {
		if current == nil || n.asset > len(current.Assets) {
			return api.Comment{}, fmt.Errorf("no asset %d to anchor on", n.asset)
		}
		in.Anchor = &thread.Anchor{AssetID: current.Assets[n.asset-1].Id, Region: n.region, TimeMs: n.timeMs, Page: n.page}
	}
	return creative.CreateComment(ctx, q, org, id, actor, in)
}
