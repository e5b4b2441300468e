package httpapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/internal/creative"
	"creativeapi/internal/gate"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
	"creativeapi/internal/thread"
	"creativeapi/internal/upload"
)

// The creative handlers translate HTTP to internal/creative and back: the
// request's typed body into the service's input, the service's refusals
// into Problems (creativeProblem), its creatives into CreativeDetail.

func creativePath(org, id uuid.UUID) string {
	return fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, id)
}

// ListCreatives answers one page of an organization's creatives, newest
// first, in a fixed number of queries whatever the page holds.
func (s *Server) ListCreatives(ctx context.Context, r api.ListCreativesRequestObject) (api.ListCreativesResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	size, before, err := page(creativeCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	if before == 0 {
		before = creative.FirstPage
	}
	var f creative.Filter
	if r.Params.ReviewStatus != nil {
		st := review.Status(*r.Params.ReviewStatus)
		f.Status = &st
	}
	if r.Params.ReviewStatuses != nil {
		for _, st := range *r.Params.ReviewStatuses {
			f.Statuses = append(f.Statuses, review.Status(st))
		}
	}
	if r.Params.Q != nil {
		f.Title = *r.Params.Q
	}
	f.AuthorID, f.ReviewerID = r.Params.AuthorId, r.Params.ReviewerId
	f.Overdue = r.Params.Overdue != nil && *r.Params.Overdue
	p, err := creative.List(ctx, s.store.Q, r.OrganizationId, caller.UserID, f, int32(before), size)
	if err != nil {
		return nil, creativeProblem(err)
	}
	return creativePageOK(p.Items, nextCursor(creativeCursor, int64(p.Next))), nil
}

// GetCreative answers one creative with the caller's availableActions.
func (s *Server) GetCreative(ctx context.Context, r api.GetCreativeRequestObject) (api.GetCreativeResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	c, err := creative.Get(ctx, s.store.Q, r.OrganizationId, r.CreativeId, caller.UserID)
	if err != nil {
		return nil, creativeProblem(err)
	}
	return creativeOK(&c.Detail), nil
}

// CreateCreative creates a draft under the caller's Idempotency-Key.
func (s *Server) CreateCreative(ctx context.Context, r api.CreateCreativeRequestObject) (api.CreateCreativeResponseObject, error) {
	in := creative.NewCreative{
		Title: r.Body.Title, Type: string(r.Body.Type), AspectRatio: r.Body.AspectRatio, Geo: r.Body.Geo, Language: r.Body.Language,
		ClientID: orNil(r.Body.ClientId), TaskID: orNil(r.Body.TaskId), DirectionID: orNil(r.Body.DirectionId),
	}
	return s.creativeCommand(ctx, r.Params.IdempotencyKey, http.StatusCreated, true,
		func(ctx context.Context, q store.Tx, user uuid.UUID) (creative.Creative, error) {
			return creative.Create(ctx, q, r.OrganizationId, user, in)
		},
		func(ctx context.Context, user uuid.UUID) error {
			return creative.MayCreate(ctx, s.store.Q, r.OrganizationId, user)
		})
}

// AddCreativeVersion adds a version under the caller's Idempotency-Key.
func (s *Server) AddCreativeVersion(ctx context.Context, r api.AddCreativeVersionRequestObject) (api.AddCreativeVersionResponseObject, error) {
	in := creative.NewVersion{ExpectedVersion: widen(r.Body.ExpectedVersion), Assets: make([]creative.NewAsset, len(r.Body.Assets)),
		ContentURL: func(org, asset uuid.UUID) string { return upload.ContentURL(s.cfg.PublicBaseURL, org, asset) }}
	for i, a := range r.Body.Assets {
		// The gate let through uploadId alone, or the five fields.
		in.Assets[i] = creative.NewAsset{
			UploadID: a.UploadId, FileName: deref(a.FileName), MimeType: string(deref(a.MimeType)), SizeBytes: deref(a.SizeBytes),
			SHA256: deref(a.Sha256), URL: deref(a.Url), Width: a.Width, Height: a.Height, DurationMs: a.DurationMs,
		}
	}
	return s.creativeCommand(ctx, r.Params.IdempotencyKey, http.StatusCreated, true,
		func(ctx context.Context, q store.Tx, user uuid.UUID) (creative.Creative, error) {
			return creative.AddVersion(ctx, q, r.OrganizationId, r.CreativeId, user, in)
		},
		func(ctx context.Context, user uuid.UUID) error {
			return creative.MayChange(ctx, s.store.Q, r.OrganizationId, r.CreativeId, user, review.ActionAddVersion)
		})
}

// ExecuteCreativeAction runs one review action under the caller's
// Idempotency-Key: the row lock, the decision, the write, the event and the
// stored answer commit together.
func (s *Server) ExecuteCreativeAction(ctx context.Context, r api.ExecuteCreativeActionRequestObject) (api.ExecuteCreativeActionResponseObject, error) {
	in := creative.ActionRequest{Action: review.Action(r.Body.Action), Comment: r.Body.Comment, ExpectedVersion: widen(r.Body.ExpectedVersion),
		AcknowledgeOpenThreads: r.Body.AcknowledgeOpenThreads != nil && *r.Body.AcknowledgeOpenThreads}
	return s.creativeCommand(ctx, r.Params.IdempotencyKey, http.StatusOK, false,
		func(ctx context.Context, q store.Tx, user uuid.UUID) (creative.Creative, error) {
			return creative.Act(ctx, q, r.OrganizationId, r.CreativeId, user, in)
		},
		func(ctx context.Context, user uuid.UUID) error {
			return creative.MayChange(ctx, s.store.Q, r.OrganizationId, r.CreativeId, user, in.Action)
		})
}

// creativeCommand runs a command answering a creative (Server.command),
// with its status and, when located, the creative's Location. A stored
// answer is replayed only to a caller mayReplay allows.
func (s *Server) creativeCommand(ctx context.Context, key *string, status int, located bool,
	run func(ctx context.Context, q store.Tx, user uuid.UUID) (creative.Creative, error),
	mayReplay func(ctx context.Context, user uuid.UUID) error) (rawJSON, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	return s.command(ctx, key,
		func(ctx context.Context) error {
			if err := mayReplay(ctx, caller.UserID); err != nil {
				return creativeProblem(err)
			}
			return nil
		},
		func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
			c, err := run(ctx, q, caller.UserID)
			if err != nil {
				return idempotency.Response{}, creativeProblem(err)
			}
			out := idempotency.Response{Status: status, Body: c.Detail.AppendJSON(make([]byte, 0, detailBytes))}
			if located {
				out.Location = creativePath(c.OrganizationID, c.ID)
			}
			return out, nil
		})
}

// UpdateCreative edits a creative in one transaction. It takes no
// Idempotency-Key: a repeat of an applied edit changes nothing.
func (s *Server) UpdateCreative(ctx context.Context, r api.UpdateCreativeRequestObject) (api.UpdateCreativeResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	b := r.Body
	p := creative.Patch{
		ExpectedVersion: widen(b.ExpectedVersion), Title: b.Title, AspectRatio: b.AspectRatio, Geo: b.Geo, Language: b.Language,
		ClientID: idField(b.ClientId), TaskID: idField(b.TaskId), DirectionID: idField(b.DirectionId), ReviewerID: idField(b.ReviewerId),
	}
	if b.Type != nil {
		t := string(*b.Type)
		p.Type = &t
	}
	var c creative.Creative
	err := s.store.InTx(ctx, func(q store.Tx) error {
		var err error
		c, err = creative.Update(ctx, q, r.OrganizationId, r.CreativeId, caller.UserID, p)
		return err
	})
	if err != nil {
		return nil, creativeProblem(err)
	}
	return creativeOK(&c.Detail), nil
}

// ListCreativeEvents answers one page of a creative's history, newest first.
func (s *Server) ListCreativeEvents(ctx context.Context, r api.ListCreativeEventsRequestObject) (api.ListCreativeEventsResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	size, before, err := page(eventCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	if before == 0 {
		before = math.MaxInt64
	}
	p, err := creative.Events(ctx, s.store.Q, r.OrganizationId, r.CreativeId, caller.UserID, before, size)
	if err != nil {
		return nil, creativeProblem(err)
	}
	return api.ListCreativeEvents200JSONResponse{Body: api.CreativeEventList{Items: p.Items, NextCursor: nextCursor(eventCursor, p.Next)}}, nil
}

// creativeBodyChecks holds the rules the schema cannot say, reported with
// the schema's errors in one 422: request_changes needs a comment; each
// asset of a new version has what its MIME type needs.
func (s *Server) creativeBodyChecks() map[string]gate.BodyCheck {
	return map[string]gate.BodyCheck{"executeCreativeAction": checkCreativeActionBody, "executeGuestCreativeAction": checkCreativeActionBody,
		"addCreativeVersion":    checkVersionBody,
		"putCreativeReviewPlan": checkReviewPlanBody}
}

// checkReviewPlanBody holds the plan rules the schema cannot say: a stage
// has at least one reviewer or guest, and nobody twice (guest emails
// compared in lower case). Wrong types are the schema's to report.
func checkReviewPlanBody(body any) []problem.FieldError {
	req, _ := body.(map[string]any)
	stages, _ := req["stages"].([]any)
	var out []problem.FieldError
	for i, st := range stages {
		m, _ := st.(map[string]any)
		ids, _ := m["reviewerIds"].([]any)
		emails, _ := m["guestEmails"].([]any)
		if len(ids)+len(emails) == 0 {
			out = append(out, problem.FieldError{Field: fmt.Sprintf("stages[%d].reviewerIds", i), Code: problem.TooShort,
				Message: "A stage needs at least one reviewer or guest email."})
		}
		seen := map[string]bool{}
		for field, list := range map[string][]any{"reviewerIds": ids, "guestEmails": emails} {
			for j, v := range list {
				k, _ := v.(string)
				k = strings.ToLower(k)
				if seen[field+k] {
					out = append(out, problem.FieldError{Field: fmt.Sprintf("stages[%d].%s[%d]", i, field, j), Code: problem.InvalidValue,
						Message: "Is listed twice in this stage."})
				}
				seen[field+k] = true
			}
		}
	}
	slices.SortStableFunc(out, func(a, b problem.FieldError) int { return strings.Compare(a.Field, b.Field) })
	return out
}

// checkCreativeActionBody reads leniently: wrong types are the schema's
// to report, so they only make this check look no further. A blank
// comment (thread.Blank) says nothing, so it does not count as one.
func checkCreativeActionBody(body any) []problem.FieldError {
	req, _ := body.(map[string]any)
	if req["action"] != string(review.ActionRequestChanges) {
		return nil
	}
	switch comment, isString := req["comment"].(string); {
	case req["comment"] == nil:
		return []problem.FieldError{{Field: "comment", Code: problem.Required, Message: "Is required to request changes."}}
	case isString && thread.Blank(comment):
		return []problem.FieldError{{Field: "comment", Code: problem.Required, Message: "Must say more than white space to request changes."}}
	}
	return nil
}

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// assetFields are the fields of an asset on the caller's storage: the
// first five are required unless the asset is an uploadId, which goes alone.
var assetFields = []string{"fileName", "mimeType", "sizeBytes", "sha256", "url", "width", "height", "durationMs"}

// checkVersionBody applies the two shapes of an asset (uploadId alone, or
// the fields) and creative.CheckAssets to the assets as decoded; an asset
// that is not an object is the schema's to report.
func checkVersionBody(body any) []problem.FieldError {
	req, _ := body.(map[string]any)
	assets, _ := req["assets"].([]any)
	facts := make([]creative.AssetFacts, len(assets))
	var out []problem.FieldError
	for i, a := range assets {
		m, isObject := a.(map[string]any)
		if _, uploaded := m["uploadId"]; uploaded {
			// An uploaded file's fields are its own; its zero facts ask nothing.
			for _, f := range assetFields {
				if _, ok := m[f]; ok {
					out = append(out, problem.FieldError{Field: fmt.Sprintf("assets[%d].%s", i, f), Code: problem.InvalidValue,
						Message: "Comes from the upload; send uploadId alone."})
				}
			}
			continue
		}
		for _, f := range assetFields[:5] {
			if _, ok := m[f]; isObject && !ok {
				out = append(out, problem.FieldError{Field: fmt.Sprintf("assets[%d].%s", i, f), Code: problem.Required,
					Message: "Is required."})
			}
		}
		mime, _ := m["mimeType"].(string)
		facts[i] = creative.AssetFacts{MimeType: mime, HasWidth: m["width"] != nil, HasHeight: m["height"] != nil, HasDuration: m["durationMs"] != nil}
	}
	return append(out, creative.CheckAssets(facts)...)
}

// creativeProblem turns the creative service's refusals into Problems:
// its own, then those of every organization resource (organizationProblem).
func creativeProblem(err error) error {
	if errors.Is(err, creative.ErrCreativeNotVisible) {
		return problem.New(http.StatusNotFound, problem.NotFound, "No creative with this id is visible to you in this organization.")
	}
	if errors.Is(err, creative.ErrGuestUnverified) {
		return problem.New(http.StatusForbidden, problem.GuestUnverified,
			"Only a verified guest session decides: open your invitation's own link, or verify your email (POST /api/v1/guest/verify).")
	}
	if invalid := (*creative.Invalid)(nil); errors.As(err, &invalid) {
		return problem.Invalid(invalid.Fields)
	}
	return organizationProblem(err)
}

// orNil is a nullable request field as a pointer: nil when absent or null.
func orNil[T any](n nullable.Nullable[T]) *T {
	if v, err := n.Get(); err == nil {
		return &v
	}
	return nil
}

// idField is a nullable request field of a patch: unset when absent, set
// to nil when null.
func idField(n nullable.Nullable[uuid.UUID]) creative.IDField {
	return creative.IDField{Set: n.IsSpecified(), ID: orNil(n)}
}

// widen is an expectedVersion as the rules compare it.
func widen(v *api.ExpectedVersion) *int64 {
	if v == nil {
		return nil
	}
	w := int64(*v)
	return &w
}

// PutCreativeReviewPlan sets a creative's review stages under the
// caller's Idempotency-Key.
func (s *Server) PutCreativeReviewPlan(ctx context.Context, r api.PutCreativeReviewPlanRequestObject) (api.PutCreativeReviewPlanResponseObject, error) {
	in := creative.NewPlan{ExpectedVersion: widen(r.Body.ExpectedVersion), Stages: make([]creative.NewStage, len(r.Body.Stages))}
	for i, st := range r.Body.Stages {
		ns := creative.NewStage{Name: st.Name, ReviewerIDs: st.ReviewerIds, Rule: review.StageRule(st.Rule)}
		if st.GuestEmails != nil {
			for _, e := range *st.GuestEmails {
				ns.GuestEmails = append(ns.GuestEmails, string(e))
			}
		}
		if st.DueInHours != nil {
			h := int32(*st.DueInHours)
			ns.DueInHours = &h
		}
		in.Stages[i] = ns
	}
	return s.creativeCommand(ctx, r.Params.IdempotencyKey, http.StatusOK, false,
		func(ctx context.Context, q store.Tx, user uuid.UUID) (creative.Creative, error) {
			return creative.SetReviewPlan(ctx, q, r.OrganizationId, r.CreativeId, user, in)
		},
		func(ctx context.Context, user uuid.UUID) error {
			return creative.MayChange(ctx, s.store.Q, r.OrganizationId, r.CreativeId, user, review.ActionSetReviewPlan)
		})
}

// DeleteCreativeReviewPlan removes a creative's review stages in one
// transaction. It takes no Idempotency-Key: removing no plan changes
// nothing.
func (s *Server) DeleteCreativeReviewPlan(ctx context.Context, r api.DeleteCreativeReviewPlanRequestObject) (api.DeleteCreativeReviewPlanResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	var c creative.Creative
	err := s.store.InTx(ctx, func(q store.Tx) error {
		var err error
		c, err = creative.DeleteReviewPlan(ctx, q, r.OrganizationId, r.CreativeId, caller.UserID)
		return err
	})
	if err != nil {
		return nil, creativeProblem(err)
	}
	return creativeOK(&c.Detail), nil
}
