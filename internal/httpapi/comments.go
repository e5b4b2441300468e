package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/internal/creative"
	"creativeapi/internal/gate"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
	"creativeapi/internal/thread"
)

// The comment handlers translate HTTP to the comment functions of
// internal/creative and back (docs/review.md, "Review comments").

func commentPath(org, creativeID, id uuid.UUID) string {
	return fmt.Sprintf("%s/comments/%s", creativePath(org, creativeID), id)
}

// commentBodyChecks reports a blank body (thread.Blank) and an anchor's
// geometry (thread.Geometry) with the schema's errors, in one 422: they
// need nothing but the request. Members and guests, writing and editing,
// meet the same rules.
func commentBodyChecks() map[string]gate.BodyCheck {
	create := func(body any) []problem.FieldError {
		req, _ := body.(map[string]any)
		return append(blankBody(req), thread.Geometry(lenientAnchor(req["anchor"]))...)
	}
	edit := func(body any) []problem.FieldError {
		req, _ := body.(map[string]any)
		return blankBody(req)
	}
	return map[string]gate.BodyCheck{"createCreativeComment": create, "createGuestCreativeComment": create,
		"updateCreativeComment": edit, "updateGuestCreativeComment": edit}
}

// blankBody is the too_short of a body that says nothing; a body that is
// missing, empty or not a string is the schema's to report.
func blankBody(req map[string]any) []problem.FieldError {
	if body, ok := req["body"].(string); ok && body != "" && thread.Blank(body) {
		return []problem.FieldError{thread.BlankBody("body")}
	}
	return nil
}

// lenientAnchor reads an anchor as decoded (numbers as json.Number); what
// is missing or of the wrong type is the schema's to report, so it only
// leaves that part out.
func lenientAnchor(v any) *thread.Anchor {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	num := func(m map[string]any, k string) (float64, bool) {
		n, ok := m[k].(json.Number)
		if !ok {
			return 0, false
		}
		f, err := n.Float64()
		return f, err == nil
	}
	a := &thread.Anchor{}
	if r, ok := m["region"].(map[string]any); ok {
		x, okX := num(r, "x")
		y, okY := num(r, "y")
		w, okW := num(r, "width")
		h, okH := num(r, "height")
		// A bound broken alone is the schema's to report; each sum (x +
		// width, y + height) is checked when both its parts are fractions,
		// whatever the other pair holds, so one answer names every failing
		// field (a pair left out stays zero, which breaks no sum).
		fraction := func(f float64) bool { return f >= 0 && f <= 1 }
		var region thread.Region
		across := okX && okW && fraction(x) && fraction(w)
		down := okY && okH && fraction(y) && fraction(h)
		if across {
			region.X, region.Width = x, w
		}
		if down {
			region.Y, region.Height = y, h
		}
		if across || down {
			a.Region = &region
		}
	}
	if t, ok := m["timeMs"].(map[string]any); ok {
		start, okS := num(t, "start")
		end, okE := num(t, "end")
		if okS && okE && start >= 0 && end >= 0 && start <= math.MaxInt32 && end <= math.MaxInt32 {
			e := int64(end)
			a.TimeMs = &thread.TimeRange{Start: int64(start), End: &e}
		}
	}
	return a
}

// anchorFrom is a request's anchor as the rules read it.
func anchorFrom(in *api.NewCommentAnchor) *thread.Anchor {
	if in == nil {
		return nil
	}
	a := &thread.Anchor{AssetID: in.AssetId}
	if r, err := in.Region.Get(); err == nil {
		a.Region = &thread.Region{X: r.X, Y: r.Y, Width: r.Width, Height: r.Height}
	}
	if t, err := in.TimeMs.Get(); err == nil {
		a.TimeMs = &thread.TimeRange{Start: int64(t.Start)}
		if e, err := t.End.Get(); err == nil {
			end := int64(e)
			a.TimeMs.End = &end
		}
	}
	if p, err := in.Page.Get(); err == nil {
		page := int64(p)
		a.Page = &page
	}
	return a
}

// commentProblem turns the comment functions' refusals into Problems.
func commentProblem(err error) error {
	if errors.Is(err, creative.ErrCommentNotVisible) {
		return problem.New(http.StatusNotFound, problem.NotFound, "No comment with this id is visible to you on this creative.")
	}
	return creativeProblem(err)
}

// ListCreativeComments answers one page of a creative's comments, oldest first.
func (s *Server) ListCreativeComments(ctx context.Context, r api.ListCreativeCommentsRequestObject) (api.ListCreativeCommentsResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	if r.Params.Resolved != nil && r.Params.ParentId != nil {
		return nil, problem.Invalid([]problem.FieldError{{Field: "resolved", Code: problem.InvalidValue,
			Message: "Filters top-level comments; it does not combine with parentId (a thread's replies)."}})
	}
	if r.Params.Open != nil && (r.Params.Resolved != nil || r.Params.ParentId != nil) {
		return nil, problem.Invalid([]problem.FieldError{{Field: "open", Code: problem.InvalidValue,
			Message: "Filters threads, open or resolved; it does not combine with resolved or parentId."}})
	}
	size, after, err := page(commentCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	f := creative.CommentFilter{VersionNumber: r.Params.VersionNumber, Resolved: r.Params.Resolved, ParentID: r.Params.ParentId,
		MentionsMe: r.Params.Mentions != nil && *r.Params.Mentions == api.Me, Open: r.Params.Open}
	p, err := creative.ListComments(ctx, s.store.Q, r.OrganizationId, r.CreativeId, caller.UserID, f, after, size)
	if err != nil {
		return nil, commentProblem(err)
	}
	return api.ListCreativeComments200JSONResponse{Body: api.CommentList{Items: p.Items, NextCursor: nextCursor(commentCursor, p.Next)}}, nil
}

// CreateCreativeComment writes a comment under the caller's Idempotency-Key.
func (s *Server) CreateCreativeComment(ctx context.Context, r api.CreateCreativeCommentRequestObject) (api.CreateCreativeCommentResponseObject, error) {
	in := creative.NewComment{Body: r.Body.Body, VersionNumber: r.Body.VersionNumber, ParentID: r.Body.ParentId, Anchor: anchorFrom(r.Body.Anchor),
		Internal: r.Body.Visibility != nil && *r.Body.Visibility == api.Internal}
	if r.Body.MentionUserIds != nil {
		in.MentionUserIDs = *r.Body.MentionUserIds
	}
	caller, _ := requestctx.CallerFrom(ctx)
	mayReplay := func(ctx context.Context) error {
		if err := creative.MayComment(ctx, s.store.Q, r.OrganizationId, r.CreativeId, caller.UserID); err != nil {
			return commentProblem(err)
		}
		return nil
	}
	return s.command(ctx, r.Params.IdempotencyKey, mayReplay, func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
		c, err := creative.CreateComment(ctx, q, r.OrganizationId, r.CreativeId, caller.UserID, in)
		if err != nil {
			return idempotency.Response{}, commentProblem(err)
		}
		return idempotency.JSON(http.StatusCreated, c, commentPath(r.OrganizationId, r.CreativeId, c.Id))
	})
}

// UpdateCreativeComment edits a comment or resolves or reopens its thread,
// in one transaction. It takes no Idempotency-Key: a repeat of an applied
// change changes nothing.
func (s *Server) UpdateCreativeComment(ctx context.Context, r api.UpdateCreativeCommentRequestObject) (api.UpdateCreativeCommentResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	var c api.Comment
	err := s.store.InTx(ctx, func(q store.Tx) error {
		var err error
		c, err = creative.UpdateComment(ctx, q, r.OrganizationId, r.CreativeId, r.CommentId, caller.UserID,
			creative.CommentPatch{Body: r.Body.Body, Resolved: r.Body.Resolved, Addressed: addressedPatch(r.Body.AddressedInVersion)})
		return err
	})
	if err != nil {
		return nil, commentProblem(err)
	}
	return api.UpdateCreativeComment200JSONResponse{Body: c}, nil
}

// DeleteCreativeComment deletes a comment, or leaves a tombstone when it
// has replies.
func (s *Server) DeleteCreativeComment(ctx context.Context, r api.DeleteCreativeCommentRequestObject) (api.DeleteCreativeCommentResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	err := s.store.InTx(ctx, func(q store.Tx) error {
		return creative.DeleteComment(ctx, q, r.OrganizationId, r.CreativeId, r.CommentId, caller.UserID)
	})
	if err != nil {
		return nil, commentProblem(err)
	}
	return api.DeleteCreativeComment204Response{}, nil
}

// addressedPatch is addressedInVersion as a patch: nil when absent, a nil
// Version when null (the mark is cleared).
func addressedPatch(n nullable.Nullable[int32]) *creative.Addressed {
	if !n.IsSpecified() {
		return nil
	}
	return &creative.Addressed{Version: orNil(n)}
}
