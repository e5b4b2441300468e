// Package creative is the creative workflow as the API runs it: reading
// creatives and their history, and the commands that change them (create,
// add a version, edit, review actions). Each command is one function that
// locks what it changes, refuses in the order internal/review decides
// (404, 403, 422, 409 version_conflict, 409 invalid_transition) before its
// first write, then writes the change, the creative's new version and its
// history event in one statement, and its outbox event (docs/events.md) in
// the same transaction. The rights and states come from
// internal/review; HTTP handlers only translate requests and answers.
package creative

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/directory"
	"creativeapi/internal/problem"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
	"creativeapi/internal/upload"
	"creativeapi/internal/userref"
)

// ErrCreativeNotVisible is the refusal of a creative the caller may not
// see (directory.ErrOrganizationNotVisible is the organization's): each
// answer names what was asked for and never why it is not visible (no
// such id, another workspace, not a member).
var ErrCreativeNotVisible = errors.New("creative not visible")

// Invalid is a request the service refuses for what it says about other
// records (a client of another organization, a reviewer who is not one,
// assets that do not fit the creative's type): 422 with these fields.
type Invalid struct {
	Fields []problem.FieldError
}

func (e *Invalid) Error() string {
	return fmt.Sprintf("%d fields refused", len(e.Fields))
}

// Creative is a creative as one caller sees it: its row, and the
// CreativeDetail answered for it.
type Creative struct {
	db.Creative
	Detail Detail
}

// row is a creative with the names its detail shows: every read of
// creatives returns this shape, so one function builds the answers.
type row struct {
	c                                  db.Creative
	authorName                         string
	reviewerName, clientName, taskName *string
}

// Get reads one creative of org as user sees it.
func Get(ctx context.Context, q *db.Queries, org, id, user uuid.UUID) (Creative, error) {
	role, err := memberRole(ctx, q, org, user)
	if err != nil {
		return Creative{}, err
	}
	r, err := q.CreativeGet(ctx, db.CreativeGetParams{OrganizationID: org, ID: id})
	if err != nil {
		return Creative{}, notVisible(err, ErrCreativeNotVisible)
	}
	return one(ctx, q, row{r.Creative, r.AuthorName, r.ReviewerName, r.ClientName, r.TaskName}, review.Caller{UserID: user, Role: role})
}

// MayChange refuses user, in the order of a command's refusals, unless
// the creative id of org is visible to them (404) and their role may make
// the changes to it (403): the rights of a command, without its version
// and state checks. A replayed answer of a command on a creative goes only
// to a caller it allows.
func MayChange(ctx context.Context, q *db.Queries, org, id, user uuid.UUID, actions ...review.Action) error {
	c, who, err := visibleTo(ctx, q, org, id, user)
	if err != nil {
		return err
	}
	return review.Authorize(c, who, actions...)
}

// MayComment refuses user unless they are a member of org who sees the
// creative id (404) and whose role may comment on it (403), whatever its
// state: the replay check of a comment's create.
func MayComment(ctx context.Context, q *db.Queries, org, id, user uuid.UUID) error {
	c, who, err := visibleTo(ctx, q, org, id, user)
	if err != nil {
		return err
	}
	return review.AuthorizeComment(c, who, uuid.Nil, review.ActionComment)
}

// visibleTo is creative id of org as the rules see it, and user as the
// caller, when user is a member who sees it (else ErrCreativeNotVisible):
// the first two steps of every replay check on a creative.
func visibleTo(ctx context.Context, q *db.Queries, org, id, user uuid.UUID) (review.Creative, review.Caller, error) {
	role, err := memberRole(ctx, q, org, user)
	if err != nil {
		return review.Creative{}, review.Caller{}, err
	}
	r, err := q.CreativeGet(ctx, db.CreativeGetParams{OrganizationID: org, ID: id})
	if err != nil {
		return review.Creative{}, review.Caller{}, notVisible(err, ErrCreativeNotVisible)
	}
	c := reviewCreative(r.Creative)
	if c.HasPlan {
		// The plan without its round: a replay goes to whoever the plan
		// names in any stage, whichever stage decides now.
		plans, err := readPlans(ctx, q, []row{{c: r.Creative}})
		if err != nil {
			return review.Creative{}, review.Caller{}, err
		}
		if p := plans[r.Creative.ID]; p != nil {
			c.Plan = p.rules
		}
	}
	return c, review.Caller{UserID: user, Role: role}, nil
}

// MayCreate refuses user unless they are a member of org (404) whose role
// may create creatives (403).
func MayCreate(ctx context.Context, q *db.Queries, org, user uuid.UUID) error {
	role, err := directory.MemberRole(ctx, q, org, user)
	if err != nil {
		return err
	}
	return review.AuthorizeCreate(role)
}

// memberRole is user's role in org (directory.MemberRole); a creative
// of an organization user is not a member of is ErrCreativeNotVisible.
func memberRole(ctx context.Context, q *db.Queries, org, user uuid.UUID) (review.Role, error) {
	role, err := directory.MemberRole(ctx, q, org, user)
	if errors.Is(err, directory.ErrOrganizationNotVisible) {
		return "", ErrCreativeNotVisible
	}
	return role, err
}

// notVisible turns a missing row into notVisibleErr and passes any other
// error on.
func notVisible(err, notVisibleErr error) error {
	if errors.Is(err, store.ErrNotFound) {
		return notVisibleErr
	}
	return err
}

// one builds the answer of one creative.
func one(ctx context.Context, q *db.Queries, r row, who review.Caller) (Creative, error) {
	out, err := details(ctx, q, []row{r}, who)
	if err != nil {
		return Creative{}, err
	}
	return out[0], nil
}

// details builds the answers of rows with one more query for all their
// versions and assets, so a page costs the same whatever it holds, and
// one more for the review plans of those that have one.
func details(ctx context.Context, q *db.Queries, rows []row, who review.Caller) ([]Creative, error) {
	var ids []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, r := range rows {
		for _, v := range []*uuid.UUID{r.c.CurrentVersionID, r.c.ApprovedVersionID} {
			if v != nil && !seen[*v] {
				seen[*v] = true
				ids = append(ids, *v)
			}
		}
	}
	versions, err := readVersions(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	if who.Role.IsGuest() {
		if err := leaveOutInternal(ctx, q, ids, versions); err != nil {
			return nil, err
		}
		guestURLs(rows, versions)
	}
	// Only creatives with a review plan cost this query.
	plans, err := readPlans(ctx, q, rows)
	if err != nil {
		return nil, err
	}
	out := make([]Creative, len(rows))
	for i, r := range rows {
		current, err := versionOf(r.c.CurrentVersionID, versions)
		if err != nil {
			return nil, err
		}
		approved, err := versionOf(r.c.ApprovedVersionID, versions)
		if err != nil {
			return nil, err
		}
		out[i] = Creative{Creative: r.c, Detail: detail(r, current, approved, plans[r.c.ID], who)}
	}
	return out, nil
}

// readVersions reads the given versions with their authors and assets, in
// position order, in one query.
func readVersions(ctx context.Context, q *db.Queries, ids []uuid.UUID) (map[uuid.UUID]*VersionDetail, error) {
	out := make(map[uuid.UUID]*VersionDetail, len(ids))
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
			v = &VersionDetail{Id: r.ID, Number: int(r.Number), CreatedAt: r.CreatedAt.UTC(),
				Author: userref.Member(r.AuthorID, r.AuthorName), Assets: []AssetDetail{}, openComments: int(r.OpenCommentCount), openThreads: int(r.OpenThreadCount)}
			out[r.ID] = v
		}
		// A version without assets comes as one row with null asset columns.
		if r.AssetID != nil {
			v.Assets = append(v.Assets, AssetDetail{
				Id: *r.AssetID, FileName: deref(r.FileName), MimeType: deref(r.MimeType), SizeBytes: deref(r.SizeBytes),
				Url: deref(r.Url), Sha256: deref(r.Sha256), Width: r.Width, Height: r.Height, DurationMs: r.DurationMs,
				UploadId: r.UploadID,
			})
		}
	}
	return out, nil
}

// leaveOutInternal takes the open internal comments out of the counts
// of versions, for a guest, who never sees one (docs/shares.md): a
// member's read costs nothing for them.
func leaveOutInternal(ctx context.Context, q *db.Queries, ids []uuid.UUID, versions map[uuid.UUID]*VersionDetail) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := q.CommentOpenInternalCounts(ctx, ids)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if v, ok := versions[r.VersionID]; ok {
			v.openComments -= int(r.OpenComments)
			v.openThreads -= int(r.OpenThreads)
		}
	}
	return nil
}

// guestURLs points the uploaded assets of versions at the guests'
// download path (upload.GuestContentPath): a guest's session opens no
// member path.
func guestURLs(rows []row, versions map[uuid.UUID]*VersionDetail) {
	for _, r := range rows {
		for _, id := range []*uuid.UUID{r.c.CurrentVersionID, r.c.ApprovedVersionID} {
			if id == nil || versions[*id] == nil {
				continue
			}
			for i := range versions[*id].Assets {
				a := &versions[*id].Assets[i]
				if base, ok := strings.CutSuffix(a.Url, upload.ContentPath(r.c.OrganizationID, a.Id)); ok {
					a.Url = base + upload.GuestContentPath(a.Id)
				}
			}
		}
	}
}

func versionOf(id *uuid.UUID, versions map[uuid.UUID]*VersionDetail) (*VersionDetail, error) {
	if id == nil {
		return nil, nil
	}
	v, ok := versions[*id]
	if !ok {
		return nil, fmt.Errorf("creative version %s was not read", id)
	}
	return v, nil
}

// reviewCreative is the part of a creative the rules read.
func reviewCreative(c db.Creative) review.Creative {
	rc := review.Creative{
		Status: review.Status(c.ReviewStatus), AuthorID: c.AuthorID,
		HasCurrentVersion: c.CurrentVersionID != nil, Version: c.Version, HasPlan: c.ReviewPlan,
	}
	if c.ReviewerID != nil {
		rc.ReviewerID = *c.ReviewerID
	}
	return rc
}

func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}
