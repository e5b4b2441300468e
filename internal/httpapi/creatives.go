package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/cursor"
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
			return nil, errInvalidCursor()
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
	page := creativeListJSON{}
	if len(rows) > limit {
		rows = rows[:limit]
		next := encodeCreativeCursor(rows[limit-1].Creative.Number)
		page.NextCursor = &next
	}
	if page.Items, err = creativeDetails(ctx, q, rows, review.Caller{UserID: caller.UserID, Role: role}); err != nil {
		return nil, err
	}
	return encodeOK(page)
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
	return encodeOK(detail)
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
// refusal before the first write, then applies the action. The locked row
// is the creative as it was: the answer is that row with the action
// applied, so nothing is read back.
func runCreativeAction(ctx context.Context, q *db.Queries, org, id, userID uuid.UUID, req api.CreativeActionRequest) (creativeJSON, error) {
	row, err := q.CreativeLockForAction(ctx, db.CreativeLockForActionParams{CallerID: userID, ID: id, OrganizationID: org})
	if err != nil {
		if err = store.Translate(err); errors.Is(err, store.ErrNotFound) {
			return creativeJSON{}, errCreativeNotVisible()
		}
		return creativeJSON{}, err
	}
	c := row.Creative
	who := review.Caller{UserID: userID, Role: review.Role(row.Role)}
	from := review.Status(c.ReviewStatus)
	action := review.Action(req.Action)
	// Decide runs once: its Forbidden outcome answers before a stale version,
	// its InvalidTransition outcome after.
	next, err := review.Decide(reviewCreative(from, c.AuthorID, c.ReviewerID, c.CurrentVersionID), who, action)
	var refusal *review.Refusal
	if err != nil && !errors.As(err, &refusal) {
		return creativeJSON{}, err
	}
	if refusal != nil && refusal.Reason == review.Forbidden {
		return creativeJSON{}, problem.New(http.StatusForbidden, problem.ActionForbidden, "%s", refusal.Detail)
	}
	// Both are int32: the spec bounds expectedVersion to the column's range,
	// so nothing is cut off before the comparison.
	if req.ExpectedVersion != nil && *req.ExpectedVersion != c.Version {
		return creativeJSON{}, problem.New(http.StatusConflict, problem.VersionConflict,
			"The creative is at version %d, not %d. Reload it and try again.", c.Version, *req.ExpectedVersion)
	}
	if refusal != nil {
		return creativeJSON{}, problem.New(http.StatusConflict, problem.InvalidTransition, "%s", refusal.Detail)
	}
	// Every action moves the version on; approve pins the current version
	// as the approved one. updated_at is the transaction's clock.
	c.ReviewStatus = string(next)
	c.Version++
	c.UpdatedAt = row.Now
	if action == review.ActionApprove {
		c.ApprovedVersionID = c.CurrentVersionID
	}
	// The write goes with the read of the versions the answer shows, in
	// one round trip.
	if err := q.CreativeTransition(store.WithNext(ctx), db.CreativeTransitionParams{
		ID: id, ActorID: userID, Action: string(action), FromStatus: string(from), ToStatus: c.ReviewStatus,
		Comment: req.Comment, Version: c.Version, UpdatedAt: c.UpdatedAt, ApprovedVersionID: c.ApprovedVersionID,
	}); err != nil {
		return creativeJSON{}, err
	}
	details, err := creativeDetails(ctx, q, []creativeRow{{
		Creative: c, AuthorName: row.AuthorName, ReviewerName: row.ReviewerName, ClientName: row.ClientName, TaskName: row.TaskName,
	}}, who)
	if err != nil {
		return creativeJSON{}, err
	}
	return details[0], nil
}

// creativeBodyChecks holds the rule the schema cannot say: request_changes
// needs a comment. It is reported with the schema's errors in one 422.
func (s *Server) creativeBodyChecks() map[string]BodyCheck {
	return map[string]BodyCheck{"executeCreativeAction": checkCreativeActionBody}
}

// checkCreativeActionBody reads leniently: wrong types are the schema's
// to report, so they only make this check look no further. A comment of
// white space only says nothing, so it does not count as one.
func checkCreativeActionBody(body any) []problem.FieldError {
	req, _ := body.(map[string]any)
	if req["action"] != string(review.ActionRequestChanges) {
		return nil
	}
	switch comment, isString := req["comment"].(string); {
	case req["comment"] == nil:
		return []problem.FieldError{{Field: "comment", Code: problem.Required, Message: "Is required to request changes."}}
	case isString && strings.TrimSpace(comment) == "":
		return []problem.FieldError{{Field: "comment", Code: problem.Required, Message: "Must say more than white space to request changes."}}
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
func creativeDetail(ctx context.Context, q *db.Queries, org, id uuid.UUID, who review.Caller) (creativeJSON, error) {
	row, err := q.CreativeGet(ctx, db.CreativeGetParams{OrganizationID: org, ID: id})
	if err != nil {
		if err = store.Translate(err); errors.Is(err, store.ErrNotFound) {
			return creativeJSON{}, errCreativeNotVisible()
		}
		return creativeJSON{}, err
	}
	details, err := creativeDetails(ctx, q, []creativeRow{creativeRow(row)}, who)
	if err != nil {
		return creativeJSON{}, err
	}
	return details[0], nil
}

// creativeJSON is the CreativeDetail schema as it is encoded: the fields of
// api.CreativeDetail, with pointers (null when nil) where the generated type
// has nullable.Nullable. Those are maps, each marshalled by a json.Marshal
// of its own whose output is then checked again; a page of 20 creatives
// spent a quarter of its CPU there. TestCreativeJSONMatchesTheSchemaType
// keeps the two types saying the same.
type creativeJSON struct {
	ApprovedVersion  *versionJSON         `json:"approvedVersion"`
	AspectRatio      string               `json:"aspectRatio"`
	Author           api.UserRef          `json:"author"`
	AvailableActions []api.CreativeAction `json:"availableActions"`
	Client           *api.NamedRef        `json:"client"`
	CurrentVersion   *versionJSON         `json:"currentVersion"`
	DirectionId      *uuid.UUID           `json:"directionId"`
	Geo              string               `json:"geo"`
	Id               uuid.UUID            `json:"id"`
	Language         string               `json:"language"`
	Number           string               `json:"number"`
	ReviewStatus     api.ReviewStatus     `json:"reviewStatus"`
	Reviewer         *api.UserRef         `json:"reviewer"`
	Task             *api.NamedRef        `json:"task"`
	Title            string               `json:"title"`
	Type             api.CreativeType     `json:"type"`
	UpdatedAt        time.Time            `json:"updatedAt"`
	Version          int                  `json:"version"`
}

// versionJSON is the CreativeVersion schema (see creativeJSON).
type versionJSON struct {
	Assets    []assetJSON `json:"assets"`
	Author    api.UserRef `json:"author"`
	CreatedAt time.Time   `json:"createdAt"`
	Id        uuid.UUID   `json:"id"`
	Number    int         `json:"number"`
}

// assetJSON is the Asset schema (see creativeJSON).
type assetJSON struct {
	DurationMs *int32    `json:"durationMs"`
	FileName   string    `json:"fileName"`
	Height     *int32    `json:"height"`
	Id         uuid.UUID `json:"id"`
	MimeType   string    `json:"mimeType"`
	Sha256     string    `json:"sha256"`
	SizeBytes  int64     `json:"sizeBytes"`
	Url        string    `json:"url"`
	Width      *int32    `json:"width"`
}

// creativeListJSON is the CreativeList schema (see creativeJSON).
type creativeListJSON struct {
	Items      []creativeJSON `json:"items"`
	NextCursor *string        `json:"nextCursor"`
}

// encodedOK is a 200 answer encoded before it is written, ending in a
// newline as the generated responses' json.Encoder writes them.
type encodedOK []byte

func encodeOK(v any) (encodedOK, error) {
	b, err := json.Marshal(v)
	return encodedOK(append(b, '\n')), err
}

func (b encodedOK) write(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	return err
}

func (b encodedOK) VisitGetCreativeResponse(w http.ResponseWriter) error   { return b.write(w) }
func (b encodedOK) VisitListCreativesResponse(w http.ResponseWriter) error { return b.write(w) }

// creativeDetails builds the details of rows with one more query for all
// their versions and assets, so a page costs the same whatever it holds.
func creativeDetails(ctx context.Context, q *db.Queries, rows []creativeRow, who review.Caller) ([]creativeJSON, error) {
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
	out := make([]creativeJSON, len(rows))
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
		out[i] = creativeJSON{
			Id:               c.ID,
			Number:           fmt.Sprintf("CR-%06d", c.Number),
			Title:            c.Title,
			Type:             api.CreativeType(c.Type),
			AspectRatio:      c.AspectRatio,
			Geo:              c.Geo,
			Language:         c.Language,
			DirectionId:      c.DirectionID,
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
func creativeVersions(ctx context.Context, q *db.Queries, ids []uuid.UUID) (map[uuid.UUID]*versionJSON, error) {
	out := make(map[uuid.UUID]*versionJSON, len(ids))
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
			v = &versionJSON{
				Id: r.ID, Number: int(r.Number), CreatedAt: r.CreatedAt.UTC(),
				Author: api.UserRef{Id: r.AuthorID, Name: r.AuthorName}, Assets: []assetJSON{},
			}
			out[r.ID] = v
		}
		// A version without assets comes as one row with null asset columns.
		if r.AssetID != nil {
			v.Assets = append(v.Assets, assetJSON{
				Id: *r.AssetID, FileName: deref(r.FileName), MimeType: deref(r.MimeType), SizeBytes: deref(r.SizeBytes),
				Url: deref(r.Url), Sha256: deref(r.Sha256), Width: r.Width, Height: r.Height, DurationMs: r.DurationMs,
			})
		}
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

func versionRef(id *uuid.UUID, versions map[uuid.UUID]*versionJSON) (*versionJSON, error) {
	if id == nil {
		return nil, nil
	}
	v, ok := versions[*id]
	if !ok {
		return nil, fmt.Errorf("creative version %s was not read", id)
	}
	return v, nil
}

// ref is nil (null) when the reference is unset, so "always present, may be
// null" never becomes a zero-valued object.
func ref[T any](id *uuid.UUID, name *string, build func(uuid.UUID, string) T) *T {
	if id == nil || name == nil {
		return nil
	}
	v := build(*id, *name)
	return &v
}

func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}

// creativeCursorKind names the creatives list in its cursors.
const creativeCursorKind = "c1"

// encodeCreativeCursor makes the opaque cursor that continues below number.
func encodeCreativeCursor(number int32) string {
	return cursor.Encode(creativeCursorKind, strconv.Itoa(int(number)))
}

// decodeCreativeCursor reads a cursor of encodeCreativeCursor: a creative
// number, 1 to 2^31-1 as the column holds; ok is false for anything else.
func decodeCreativeCursor(s string) (int32, bool) {
	parts, err := cursor.Decode(creativeCursorKind, s, 1)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(parts[0], 10, 32)
	if err != nil || n < 1 {
		return 0, false
	}
	return int32(n), true
}

// errInvalidCursor is the one answer of every list to a cursor it did not make.
func errInvalidCursor() error {
	return problem.Invalid([]problem.FieldError{{Field: "cursor", Code: problem.InvalidFormat,
		Message: "Is not a cursor of this list. Pass the nextCursor of the previous page as is."}})
}
