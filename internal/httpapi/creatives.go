package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

// defaultCreativePageSize is the page size when the request names none
// (openapi.yaml's Limit default).
const defaultCreativePageSize = 20

// ListCreatives answers one page of an organization's creatives, newest
// first, in a fixed number of queries whatever the page holds.
func (s *Server) ListCreatives(ctx context.Context, r api.ListCreativesRequestObject) (api.ListCreativesResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	before := int32(math.MaxInt32)
	if r.Params.Cursor != nil {
		n, ok := decodeCreativeCursor(*r.Params.Cursor)
		if !ok {
			return nil, problem.Invalid([]problem.FieldError{{Field: "cursor", Code: problem.InvalidFormat,
				Message: "Is not a cursor of this list. Pass the nextCursor of the previous page as is."}})
		}
		before = n
	}
	limit := defaultCreativePageSize
	if r.Params.Limit != nil {
		limit = *r.Params.Limit
	}
	q := s.store.Q
	role, err := memberRole(ctx, q, r.OrganizationId, caller.UserID, errOrganizationNotVisible)
	if err != nil {
		return nil, err
	}
	// One row more than the page tells whether another page follows.
	rows, err := creativePage(ctx, q, r.OrganizationId, r.Params.ReviewStatus, before, int32(limit+1))
	if err != nil {
		return nil, err
	}
	next := nullable.NewNullNullable[string]()
	if len(rows) > limit {
		rows = rows[:limit]
		next = nullable.NewNullableWithValue(encodeCreativeCursor(rows[limit-1].Creative.Number))
	}
	items, err := creativeDetails(ctx, q, rows, review.Caller{UserID: caller.UserID, Role: role})
	if err != nil {
		return nil, err
	}
	return api.ListCreatives200JSONResponse{Items: items, NextCursor: next}, nil
}

// GetCreative answers one creative with the caller's availableActions.
func (s *Server) GetCreative(ctx context.Context, r api.GetCreativeRequestObject) (api.GetCreativeResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	q := s.store.Q
	role, err := memberRole(ctx, q, r.OrganizationId, caller.UserID, errCreativeNotVisible)
	if err != nil {
		return nil, err
	}
	detail, err := creativeDetail(ctx, q, r.OrganizationId, r.CreativeId, review.Caller{UserID: caller.UserID, Role: role})
	if err != nil {
		return nil, err
	}
	return api.GetCreative200JSONResponse(detail), nil
}

// ExecuteCreativeAction runs one review action under the idempotency runner:
// the row lock, the decision, the write, the event and the stored answer
// commit together.
func (s *Server) ExecuteCreativeAction(ctx context.Context, r api.ExecuteCreativeActionRequestObject) (api.ExecuteCreativeActionResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	key := ""
	if r.Params.IdempotencyKey != nil {
		key = *r.Params.IdempotencyKey
	}
	target := fmt.Sprintf("POST /api/v1/organizations/%s/creatives/%s/actions", r.OrganizationId, r.CreativeId)
	resp, replayed, err := s.idem.Run(ctx, idempotency.Request{UserID: caller.UserID, Key: key,
		Fingerprint: idempotency.Fingerprint(target, r.Body)},
		func(ctx context.Context, q *db.Queries) (idempotency.Response, error) {
			detail, err := runCreativeAction(ctx, q, r.OrganizationId, r.CreativeId, caller.UserID, *r.Body)
			if err != nil {
				return idempotency.Response{}, err
			}
			body, err := json.Marshal(detail)
			if err != nil {
				return idempotency.Response{}, err
			}
			return idempotency.Response{Status: http.StatusOK, Body: body}, nil
		})
	if err != nil {
		return nil, err
	}
	return commandResponse{resp, replayed}, nil
}

// runCreativeAction refuses in PRODUCT.md §3's order (404, 403
// action_forbidden, 409 version_conflict, 409 invalid_transition), every
// refusal before the first write, then applies the action and reads the
// creative back.
func runCreativeAction(ctx context.Context, q *db.Queries, org, id, userID uuid.UUID, req api.CreativeActionRequest) (api.CreativeDetail, error) {
	row, err := q.CreativeLockForAction(ctx, db.CreativeLockForActionParams{CallerID: userID, ID: id, OrganizationID: org})
	if err != nil {
		if err = store.Translate(err); errors.Is(err, store.ErrNotFound) {
			return api.CreativeDetail{}, errCreativeNotVisible()
		}
		return api.CreativeDetail{}, err
	}
	who := review.Caller{UserID: userID, Role: review.Role(row.Role)}
	from := review.Status(row.ReviewStatus)
	action := review.Action(req.Action)
	// Decide runs once: its Forbidden outcome answers before a stale version,
	// its InvalidTransition outcome after.
	next, err := review.Decide(reviewCreative(from, row.AuthorID, row.ReviewerID, row.CurrentVersionID), who, action)
	var refusal *review.Refusal
	if err != nil && !errors.As(err, &refusal) {
		return api.CreativeDetail{}, err
	}
	if refusal != nil && refusal.Reason == review.Forbidden {
		return api.CreativeDetail{}, problem.New(http.StatusForbidden, problem.ActionForbidden, "%s", refusal.Detail)
	}
	if req.ExpectedVersion != nil && int32(*req.ExpectedVersion) != row.Version {
		return api.CreativeDetail{}, problem.New(http.StatusConflict, problem.VersionConflict,
			"The creative is at version %d, not %d. Reload it and try again.", row.Version, *req.ExpectedVersion)
	}
	if refusal != nil {
		return api.CreativeDetail{}, problem.New(http.StatusConflict, problem.InvalidTransition, "%s", refusal.Detail)
	}
	if _, err := q.CreativeTransition(ctx, db.CreativeTransitionParams{
		ID: id, ActorID: userID, Action: string(action), FromStatus: string(from), ToStatus: string(next),
		Comment: req.Comment, Approve: action == review.ActionApprove,
	}); err != nil {
		return api.CreativeDetail{}, err
	}
	return creativeDetail(ctx, q, org, id, who)
}

// creativeBodyChecks holds the rule the schema cannot say: request_changes
// needs a comment. It is reported with the schema's errors in one 422.
func (s *Server) creativeBodyChecks() map[string]BodyCheck {
	return map[string]BodyCheck{"executeCreativeAction": checkCreativeActionBody}
}

// checkCreativeActionBody decodes leniently: wrong types are the schema's
// to report, so they only make this check look no further.
func checkCreativeActionBody(body []byte) []problem.FieldError {
	var req struct {
		Action  any `json:"action"`
		Comment any `json:"comment"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil
	}
	if req.Action == string(review.ActionRequestChanges) && req.Comment == nil {
		return []problem.FieldError{{Field: "comment", Code: problem.Required, Message: "Is required to request changes."}}
	}
	return nil
}

// creativeRow is a creative with the names its detail shows; every read of
// creatives returns this shape, so one function builds the details.
type creativeRow struct {
	Creative     db.Creative
	AuthorName   string
	ReviewerName *string
	ClientName   *string
	TaskName     *string
}

// creativePage reads one page, through the query whose plan fits the filter.
func creativePage(ctx context.Context, q *db.Queries, org uuid.UUID, status *api.ReviewStatus, before, limit int32) ([]creativeRow, error) {
	if status != nil {
		page, err := q.CreativePageByStatus(ctx, db.CreativePageByStatusParams{
			OrganizationID: org, ReviewStatus: string(*status), BeforeNumber: before, RowLimit: limit,
		})
		rows := make([]creativeRow, len(page))
		for i, p := range page {
			rows[i] = creativeRow(p)
		}
		return rows, err
	}
	page, err := q.CreativePage(ctx, db.CreativePageParams{OrganizationID: org, BeforeNumber: before, RowLimit: limit})
	rows := make([]creativeRow, len(page))
	for i, p := range page {
		rows[i] = creativeRow(p)
	}
	return rows, err
}

// creativeDetail reads one creative of org as who sees it.
func creativeDetail(ctx context.Context, q *db.Queries, org, id uuid.UUID, who review.Caller) (api.CreativeDetail, error) {
	row, err := q.CreativeGet(ctx, db.CreativeGetParams{OrganizationID: org, ID: id})
	if err != nil {
		if err = store.Translate(err); errors.Is(err, store.ErrNotFound) {
			return api.CreativeDetail{}, errCreativeNotVisible()
		}
		return api.CreativeDetail{}, err
	}
	details, err := creativeDetails(ctx, q, []creativeRow{creativeRow(row)}, who)
	if err != nil {
		return api.CreativeDetail{}, err
	}
	return details[0], nil
}

// creativeDetails builds the details of rows with one more query for all
// their versions and assets, so a page costs the same whatever it holds.
func creativeDetails(ctx context.Context, q *db.Queries, rows []creativeRow, who review.Caller) ([]api.CreativeDetail, error) {
	var ids []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, r := range rows {
		for _, v := range []*uuid.UUID{r.Creative.CurrentVersionID, r.Creative.ApprovedVersionID} {
			if v != nil && !seen[*v] {
				seen[*v] = true
				ids = append(ids, *v)
			}
		}
	}
	versions, err := creativeVersions(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	out := make([]api.CreativeDetail, len(rows))
	for i, r := range rows {
		c := r.Creative
		current, err := versionRef(c.CurrentVersionID, versions)
		if err != nil {
			return nil, err
		}
		approved, err := versionRef(c.ApprovedVersionID, versions)
		if err != nil {
			return nil, err
		}
		available := review.Available(reviewCreative(review.Status(c.ReviewStatus), c.AuthorID, c.ReviewerID, c.CurrentVersionID), who)
		actions := make([]api.CreativeAction, len(available))
		for j, a := range available {
			actions[j] = api.CreativeAction(a)
		}
		out[i] = api.CreativeDetail{
			Id:               c.ID,
			Number:           fmt.Sprintf("CR-%06d", c.Number),
			Title:            c.Title,
			Type:             api.CreativeType(c.Type),
			AspectRatio:      c.AspectRatio,
			Geo:              c.Geo,
			Language:         c.Language,
			DirectionId:      nullableOf(c.DirectionID),
			ReviewStatus:     api.ReviewStatus(c.ReviewStatus),
			Version:          int(c.Version),
			UpdatedAt:        c.UpdatedAt.UTC(),
			AvailableActions: actions,
			Author:           api.UserRef{Id: c.AuthorID, Name: r.AuthorName},
			Reviewer:         ref(c.ReviewerID, r.ReviewerName, func(id uuid.UUID, n string) api.UserRef { return api.UserRef{Id: id, Name: n} }),
			Client:           ref(c.ClientID, r.ClientName, func(id uuid.UUID, n string) api.NamedRef { return api.NamedRef{Id: id, Name: n} }),
			Task:             ref(c.TaskID, r.TaskName, func(id uuid.UUID, n string) api.NamedRef { return api.NamedRef{Id: id, Name: n} }),
			CurrentVersion:   current,
			ApprovedVersion:  approved,
		}
	}
	return out, nil
}

// creativeVersions reads the given versions with their authors and assets,
// in position order, in one query.
func creativeVersions(ctx context.Context, q *db.Queries, ids []uuid.UUID) (map[uuid.UUID]api.CreativeVersion, error) {
	out := make(map[uuid.UUID]api.CreativeVersion, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.CreativeVersionsWithAssets(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		v, ok := out[r.ID]
		if !ok {
			v = api.CreativeVersion{
				Id: r.ID, Number: int(r.Number), CreatedAt: r.CreatedAt.UTC(),
				Author: api.UserRef{Id: r.AuthorID, Name: r.AuthorName}, Assets: []api.Asset{},
			}
		}
		// A version without assets comes as one row with null asset columns.
		if r.AssetID != nil {
			v.Assets = append(v.Assets, api.Asset{
				Id: *r.AssetID, FileName: deref(r.FileName), MimeType: deref(r.MimeType), SizeBytes: deref(r.SizeBytes),
				Url: deref(r.Url), Sha256: deref(r.Sha256),
				Width: nullableInt(r.Width), Height: nullableInt(r.Height), DurationMs: nullableInt(r.DurationMs),
			})
		}
		out[r.ID] = v
	}
	return out, nil
}

// reviewCreative is the part of a creative the review rules read.
func reviewCreative(status review.Status, author uuid.UUID, reviewer, currentVersion *uuid.UUID) review.Creative {
	c := review.Creative{Status: status, AuthorID: author, HasCurrentVersion: currentVersion != nil}
	if reviewer != nil {
		c.ReviewerID = *reviewer
	}
	return c
}

func versionRef(id *uuid.UUID, versions map[uuid.UUID]api.CreativeVersion) (nullable.Nullable[api.CreativeVersion], error) {
	if id == nil {
		return nullable.NewNullNullable[api.CreativeVersion](), nil
	}
	v, ok := versions[*id]
	if !ok {
		return nil, fmt.Errorf("creative version %s was not read", id)
	}
	return nullable.NewNullableWithValue(v), nil
}

// ref is null when the reference is unset, so "always present, may be
// null" never becomes a zero-valued object.
func ref[T any](id *uuid.UUID, name *string, build func(uuid.UUID, string) T) nullable.Nullable[T] {
	if id == nil || name == nil {
		return nullable.NewNullNullable[T]()
	}
	return nullable.NewNullableWithValue(build(*id, *name))
}

func nullableOf[T any](v *T) nullable.Nullable[T] {
	if v == nil {
		return nullable.NewNullNullable[T]()
	}
	return nullable.NewNullableWithValue(*v)
}

func nullableInt(v *int32) nullable.Nullable[int] {
	if v == nil {
		return nullable.NewNullNullable[int]()
	}
	return nullable.NewNullableWithValue(int(*v))
}

func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}

// encodeCreativeCursor makes the opaque cursor that continues below number.
func encodeCreativeCursor(number int32) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(int(number))))
}

// decodeCreativeCursor reads a cursor of encodeCreativeCursor; ok is false
// for anything else.
func decodeCreativeCursor(cursor string) (int32, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil || n < 1 {
		return 0, false
	}
	return int32(n), true
}
