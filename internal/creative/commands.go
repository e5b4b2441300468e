package creative

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/directory"
	"creativeapi/internal/events"
	"creativeapi/internal/problem"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

// Every command refuses before its first write, so a refusal stored under
// an Idempotency-Key never sits beside a partial effect, and writes the
// change, the creative's version and updated_at and the history event in
// one statement of the caller's transaction, then its outbox event
// (answerWithEvent) in the same transaction.

// NewCreative is a creative to create.
type NewCreative struct {
	Title, Type, AspectRatio, Geo, Language string
	ClientID, TaskID, DirectionID           *uuid.UUID
}

// Create creates a draft creative of org written by user, at version 1
// with its created history event and creative.created, numbered with the
// organization's next number.
func Create(ctx context.Context, q store.Tx, org, user uuid.UUID, in NewCreative) (Creative, error) {
	chk, err := q.CreativeCreateCheck(ctx, db.CreativeCreateCheckParams{
		ClientID: in.ClientID, TaskID: in.TaskID, OrganizationID: org, CallerID: user,
	})
	if err != nil {
		return Creative{}, notVisible(err, directory.ErrOrganizationNotVisible)
	}
	role := review.Role(chk.Role)
	if err := review.AuthorizeCreate(role); err != nil {
		return Creative{}, err
	}
	var fields []problem.FieldError
	if in.ClientID != nil && chk.ClientName == nil {
		fields = append(fields, notOfOrganization("clientId", "client"))
	}
	if in.TaskID != nil && chk.TaskName == nil {
		fields = append(fields, notOfOrganization("taskId", "task"))
	}
	if fields != nil {
		return Creative{}, &Invalid{Fields: fields}
	}
	created, err := q.CreativeCreate(ctx, db.CreativeCreateParams{
		OrganizationID: org, Title: in.Title, Type: in.Type, AspectRatio: in.AspectRatio, Geo: in.Geo, Language: in.Language,
		DirectionID: in.DirectionID, AuthorID: user, ClientID: in.ClientID, TaskID: in.TaskID,
	})
	if err != nil {
		return Creative{}, err
	}
	// The answer is what was inserted; nothing is read back.
	c := db.Creative{
		ID: created.ID, OrganizationID: org, Number: created.Number, Title: in.Title, Type: in.Type,
		AspectRatio: in.AspectRatio, Geo: in.Geo, Language: in.Language, DirectionID: in.DirectionID,
		AuthorID: user, ClientID: in.ClientID, TaskID: in.TaskID, ReviewStatus: string(review.StatusDraft),
		Version: 1, CreatedAt: created.UpdatedAt, UpdatedAt: created.UpdatedAt,
	}
	return answerWithEvent(ctx, q, row{c: c, authorName: chk.CallerName, clientName: chk.ClientName, taskName: chk.TaskName},
		review.Caller{UserID: user, Role: role}, events.CreativeCreated)
}

// NewVersion is a version to add.
type NewVersion struct {
	ExpectedVersion *int64
	Assets          []NewAsset
	// ContentURL is the URL at which the API serves an uploaded asset of
	// org (its content path); assets with an UploadID need it.
	ContentURL func(org, asset uuid.UUID) string
}

// NewAsset is a file of a new version, already uploaded: to the caller's
// storage (the fields), or here (UploadID alone: a ready upload of the
// organization, whose file gives the other fields).
type NewAsset struct {
	UploadID *uuid.UUID
	// AssetID is the upload's asset id, filled from the upload: an
	// uploaded file has that one id in every version (docs/uploads.md).
	AssetID                   *uuid.UUID
	FileName, MimeType        string
	SizeBytes                 int64
	SHA256, URL               string
	Width, Height, DurationMs *int32
}

// AddVersion adds a version to a creative: it becomes the current version,
// and an approved creative goes back to draft (review.ActionAddVersion).
// Its event is creative.version_added.
func AddVersion(ctx context.Context, q store.Tx, org, id, user uuid.UUID, in NewVersion) (Creative, error) {
	locked, who, err := lock(ctx, q.Queries, org, id, user)
	if err != nil {
		return Creative{}, err
	}
	c := locked.Creative
	next, err := review.Check(reviewCreative(c), who, in.ExpectedVersion, func() error {
		// Uploads are looked up once the caller may change the creative, so
		// the answer says nothing of another organization's uploads.
		assets, fields, err := withUploads(ctx, q.Queries, org, in)
		switch {
		case err != nil:
			return err
		case fields != nil:
			return &Invalid{Fields: fields}
		}
		in.Assets = assets
		// The gate checked each asset on its own; the service checks again for
		// callers that do not pass the gate (the seed). An uploaded file's
		// dimensions are what its bytes said, not the caller's to give.
		facts := Facts(in.Assets)
		given := make([]AssetFacts, len(facts))
		for i, a := range in.Assets {
			if a.UploadID == nil {
				given[i] = facts[i] // an uploaded asset's zero facts ask nothing
			}
		}
		fields = append(CheckAssets(given), FitType(c.Type, facts)...)
		if fields != nil {
			return &Invalid{Fields: fields}
		}
		return nil
	}, review.ActionAddVersion)
	if err != nil {
		return Creative{}, err
	}
	type file struct {
		ID         *uuid.UUID `json:"id"`
		Position   int        `json:"position"`
		FileName   string     `json:"file_name"`
		MimeType   string     `json:"mime_type"`
		SizeBytes  int64      `json:"size_bytes"`
		URL        string     `json:"url"`
		Width      *int32     `json:"width"`
		Height     *int32     `json:"height"`
		DurationMs *int32     `json:"duration_ms"`
		SHA256     string     `json:"sha256"`
		UploadID   *uuid.UUID `json:"upload_id"`
	}
	files := make([]file, len(in.Assets))
	for i, a := range in.Assets {
		files[i] = file{a.AssetID, i + 1, a.FileName, a.MimeType, a.SizeBytes, a.URL, a.Width, a.Height, a.DurationMs, a.SHA256, a.UploadID}
	}
	assets, err := json.Marshal(files)
	if err != nil {
		return Creative{}, err
	}
	from := c.ReviewStatus
	versionID := uuid.New()
	c.CurrentVersionID = &versionID
	c.ReviewStatus = string(next)
	c.Version++
	c.UpdatedAt = locked.Now
	// The write goes with the read of the versions the answer shows.
	if err := q.Next().CreativeVersionAdd(ctx, db.CreativeVersionAddParams{
		ID: id, ActorID: user, VersionID: versionID, Assets: assets, FromStatus: from, ToStatus: c.ReviewStatus,
		Version: c.Version, UpdatedAt: c.UpdatedAt,
	}); err != nil {
		return Creative{}, err
	}
	return answerWithEvent(ctx, q, lockedRow(locked, c), who, events.CreativeVersionAdded)
}

// ActionRequest is a review action to run.
type ActionRequest struct {
	Action          review.Action
	ExpectedVersion *int64
	Comment         *string
	// AcknowledgeOpenThreads lets a submit go past open threads that are
	// not marked addressed (review.CheckOpenThreads).
	AcknowledgeOpenThreads bool
}

// Act runs a review action and writes its events (creative.submitted and
// so on). The locked row is the creative as it was: the answer is that row
// with the action applied, so nothing is read back. On a creative with a
// review plan the plan, read after the lock, decides with the table
// (review.Step): see actOnPlan.
func Act(ctx context.Context, q store.Tx, org, id, user uuid.UUID, in ActionRequest) (Creative, error) {
	locked, who, err := lock(ctx, q.Queries, org, id, user)
	if err != nil {
		return Creative{}, err
	}
	return act(ctx, q, locked, who, memberPerson(user), in)
}

// GuestAct runs a decision of guest g on a creative of their share, as Act
// runs a member's: the rules (review.Step) decide what a guest may do,
// and the history and the plan's decisions name the guest.
func GuestAct(ctx context.Context, q store.Tx, g Guest, id uuid.UUID, in ActionRequest) (Creative, error) {
	r, err := q.CreativeLockForActionGuest(ctx, db.CreativeLockForActionGuestParams{ShareID: g.ShareID, ID: id})
	if err != nil {
		return Creative{}, notVisible(err, ErrCreativeNotVisible)
	}
	if err := g.mayDecide(ctx, q.Queries, in.Action); err != nil {
		return Creative{}, err
	}
	return act(ctx, q, db.CreativeLockForActionRow(r), g.caller(), guestPerson(g.ID), in)
}

// act is a review action once the creative is locked, by who (by, as the
// rows store them).
func act(ctx context.Context, q store.Tx, locked db.CreativeLockForActionRow, who review.Caller, by person, in ActionRequest) (Creative, error) {
	c := locked.Creative
	rc := lockedForAction(locked)
	var p *plan
	if c.ReviewPlan {
		plans, err := readPlans(ctx, q.Queries, []row{lockedRow(locked, c)})
		if err != nil {
			return Creative{}, err
		}
		p = plans[c.ID]
		rc = withPlan(rc, p)
	}
	next, move, err := review.Step(rc, who, in.ExpectedVersion, in.Action)
	if err != nil {
		return Creative{}, err
	}
	if err := review.CheckOpenThreads(in.Action, locked.UnaddressedThreads, in.AcknowledgeOpenThreads); err != nil {
		return Creative{}, err
	}
	var acknowledged []uuid.UUID
	if in.Action == review.ActionSubmit && len(locked.UnaddressedThreads) > 0 {
		acknowledged = locked.UnaddressedThreads
	}
	from := c.ReviewStatus
	// Every action moves the version on; an approval pins the current
	// version as the approved one. updated_at is the transaction's clock.
	c.ReviewStatus = string(next)
	c.Version++
	c.UpdatedAt = locked.Now
	if next == review.StatusApproved {
		c.ApprovedVersionID = c.CurrentVersionID
	}
	if p != nil && move.Round.Statuses != nil {
		return actOnPlan(ctx, q, locked, c, who, by, in, p, move, from, acknowledged)
	}
	eventType, err := events.CreativeActionType(string(in.Action))
	if err != nil {
		return Creative{}, err
	}
	// The write goes with the read of the versions the answer shows.
	if err := q.Next().CreativeTransition(ctx, db.CreativeTransitionParams{
		ID: c.ID, ActorID: by.User, ActorGuestID: by.Guest, Action: string(in.Action), FromStatus: from, ToStatus: c.ReviewStatus,
		Comment: in.Comment, Version: c.Version, UpdatedAt: c.UpdatedAt, ApprovedVersionID: c.ApprovedVersionID,
		AcknowledgedThreads: acknowledged,
	}); err != nil {
		return Creative{}, err
	}
	return answerWithEvent(ctx, q, lockedRow(locked, c), who, eventType)
}

// actOnPlan writes a review action on a creative with a review plan, as
// review.Step decided it (move), in one statement (ReviewPlanTransition):
// a submit starts a round, a decision is recorded in its stage. Its
// events: creative.submitted for a submit; for a decision
// creative.decision_recorded, then creative.stage_approved when the
// stage's rule held, then creative.approved or creative.changes_requested
// when the creative moved.
func actOnPlan(ctx context.Context, q store.Tx, locked db.CreativeLockForActionRow, c db.Creative, who review.Caller, by person,
	in ActionRequest, p *plan, move review.Move, from string, acknowledged []uuid.UUID) (Creative, error) {
	before := p.round
	if in.Action == review.ActionSubmit {
		c.ReviewRound++
		before = review.Round{}
	}
	stages, err := roundWrite(p, before, move.Round, locked.Now)
	if err != nil {
		return Creative{}, err
	}
	// The history names the stage a decision was made in, and the stage
	// whose rule it made hold (an override holds no rule).
	var stage, approvedStage *string
	if move.Stage >= 0 {
		stage = &p.detail.Stages[move.Stage].Name
	}
	ruleHeld := move.Outcome == review.OutcomeStageApproved || (move.Outcome == review.OutcomeApproved && !move.Override)
	if ruleHeld {
		approvedStage = stage
	}
	if err := q.Next().ReviewPlanTransition(ctx, db.ReviewPlanTransitionParams{
		ID: c.ID, ActorID: by.User, ActorGuestID: by.Guest, GuestEmail: guestEmail(who), Action: string(in.Action), FromStatus: from, ToStatus: c.ReviewStatus,
		Comment: in.Comment, Version: c.Version, UpdatedAt: c.UpdatedAt, ApprovedVersionID: c.ApprovedVersionID,
		AcknowledgedThreads: acknowledged, Round: c.ReviewRound, Stages: stages,
		DecisionPosition: int16(move.Stage), Override: move.Override, Stage: stage, ApprovedStage: approvedStage,
	}); err != nil {
		return Creative{}, err
	}
	var types []events.Type
	switch {
	case in.Action == review.ActionSubmit:
		types = append(types, events.CreativeSubmitted)
	default:
		types = append(types, events.CreativeDecisionRecorded)
		if ruleHeld {
			types = append(types, events.CreativeStageApproved)
		}
		switch move.Outcome {
		case review.OutcomeApproved:
			types = append(types, events.CreativeApproved)
		case review.OutcomeChangesRequested:
			types = append(types, events.CreativeChangesRequested)
		}
	}
	return answerWithEvent(ctx, q, lockedRow(locked, c), who, types...)
}

// guestEmail is a guest's key in a plan's decisions, nil for a member.
func guestEmail(who review.Caller) *string {
	if !who.Role.IsGuest() {
		return nil
	}
	key := review.GuestKey(who.GuestEmail)
	return &key
}

// lock locks a creative of org for a change by user and reads, in the
// same query, its names, user's role and the transaction's clock.
func lock(ctx context.Context, q *db.Queries, org, id, user uuid.UUID) (db.CreativeLockForActionRow, review.Caller, error) {
	locked, err := q.CreativeLockForAction(ctx, db.CreativeLockForActionParams{CallerID: user, ID: id, OrganizationID: org})
	if err != nil {
		return locked, review.Caller{}, notVisible(err, ErrCreativeNotVisible)
	}
	return locked, review.Caller{UserID: user, Role: review.Role(locked.Role)}, nil
}

// lockedForAction is the locked creative as the rules see it, with the
// author of its current version, who never decides on it.
func lockedForAction(locked db.CreativeLockForActionRow) review.Creative {
	rc := reviewCreative(locked.Creative)
	if locked.VersionAuthorID != nil {
		rc.VersionAuthorID = *locked.VersionAuthorID
	}
	return rc
}

// lockedRow is the locked creative, changed to c, with its names.
func lockedRow(locked db.CreativeLockForActionRow, c db.Creative) row {
	return row{c: c, authorName: locked.AuthorName, reviewerName: locked.ReviewerName, clientName: locked.ClientName, taskName: locked.TaskName}
}

func notOfOrganization(field, what string) problem.FieldError {
	return problem.FieldError{Field: field, Code: problem.InvalidValue, Message: fmt.Sprintf("Is not a %s of this organization.", what)}
}

// withUploads fills each asset named by UploadID from its upload, a ready
// upload of org; each uploadId that names none is a field error.
func withUploads(ctx context.Context, q *db.Queries, org uuid.UUID, in NewVersion) ([]NewAsset, []problem.FieldError, error) {
	var ids []uuid.UUID
	for _, a := range in.Assets {
		if a.UploadID != nil {
			ids = append(ids, *a.UploadID)
		}
	}
	if ids == nil {
		return in.Assets, nil, nil
	}
	rows, err := q.UploadsReady(ctx, db.UploadsReadyParams{OrganizationID: org, Ids: ids})
	if err != nil {
		return nil, nil, err
	}
	ready := make(map[uuid.UUID]db.Upload, len(rows))
	for _, u := range rows {
		ready[u.ID] = u
	}
	out := make([]NewAsset, len(in.Assets))
	var fields []problem.FieldError
	seen := make(map[uuid.UUID]bool, len(ids))
	for i, a := range in.Assets {
		out[i] = a
		if a.UploadID == nil {
			continue
		}
		u, ok := ready[*a.UploadID]
		switch {
		case !ok || u.AssetID == nil:
			fields = append(fields, problem.FieldError{Field: fmt.Sprintf("assets[%d].uploadId", i), Code: problem.InvalidValue,
				Message: "Is not a ready upload of this organization."})
			continue
		case seen[u.ID]:
			// The file has one id, which names one asset of a version.
			fields = append(fields, problem.FieldError{Field: fmt.Sprintf("assets[%d].uploadId", i), Code: problem.InvalidValue,
				Message: "Names an upload this version already has."})
			continue
		}
		seen[u.ID] = true
		out[i] = NewAsset{UploadID: a.UploadID, AssetID: u.AssetID, FileName: u.FileName, MimeType: u.MimeType, SizeBytes: u.SizeBytes, SHA256: u.Sha256,
			URL: in.ContentURL(org, *u.AssetID), Width: u.Width, Height: u.Height, DurationMs: u.DurationMs}
	}
	return out, fields, nil
}
