package creative

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/cursor"
	"creativeapi/internal/events"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
	"creativeapi/internal/thread"
	"creativeapi/internal/userref"
)

// Review comments (docs/review.md, "Review comments"): the rights come from
// review.CheckComment, what a comment says and points at from
// internal/thread. Comments are not history events and leave the
// creative's version alone; adding one and resolving a thread write their
// outbox events in the same transaction.

// ErrCommentNotVisible is a comment that is not one of the creative's, or
// a creative the caller cannot see: the same 404 either way.
var ErrCommentNotVisible = errors.New("comment not visible")

// NewComment is a comment to write.
type NewComment struct {
	Body           string
	VersionNumber  *int32
	ParentID       *uuid.UUID
	Anchor         *thread.Anchor
	MentionUserIDs []uuid.UUID
	// Internal: for members only (visibility internal); a guest's comment
	// never is.
	Internal bool
}

// The visibilities of a comment (docs/shares.md).
const (
	VisibilityEveryone = "everyone"
	VisibilityInternal = "internal"
)

// person is who writes or resolves a comment: a member (User) or a guest
// (Guest), as the rows store them. A guest writing a comment writes it
// with their session's name and verification (GuestName, Verified), kept
// with the comment as it was made.
type person struct {
	User, Guest *uuid.UUID
	GuestName   *string
	Verified    *bool
}

func memberPerson(id uuid.UUID) person { return person{User: &id} }
func guestPerson(id uuid.UUID) person  { return person{Guest: &id} }

// guestAuthor is guest g as the author of what their session writes.
func guestAuthor(g Guest) person {
	return person{Guest: &g.ID, GuestName: &g.Name, Verified: &g.Verified}
}

// ref is the person as the API shows them, named name.
func (p person) ref(name string) api.UserRef {
	if p.Guest != nil {
		ref := userref.Guest(*p.Guest, name)
		ref.Verified = p.Verified
		return ref
	}
	return userref.Member(deref(p.User), name)
}

// id is the person's id, a member's or a guest's (no two are equal).
func (p person) id() uuid.UUID {
	if p.Guest != nil {
		return *p.Guest
	}
	return deref(p.User)
}

// CreateComment writes a comment (or a reply) by user on a creative of org
// and its creative.comment_added event. Refusals come before the first
// write: 404, 403, 422 (thread.Check), 409.
func CreateComment(ctx context.Context, q store.Tx, org, creativeID, user uuid.UUID, in NewComment) (api.Comment, error) {
	t, err := q.CommentTargetLock(ctx, db.CommentTargetLockParams{
		CallerID: user, VersionNumber: in.VersionNumber, ID: creativeID, OrganizationID: org,
	})
	if err != nil {
		return api.Comment{}, notVisible(err, ErrCreativeNotVisible)
	}
	return createComment(ctx, q, org, creativeID, t, review.Caller{UserID: user, Role: review.Role(t.Role)}, memberPerson(user), in)
}

// CreateGuestComment writes a comment (or a reply) by guest g on a
// creative of their share, as CreateComment does a member's: never
// internal, never a reply to an internal comment (which a guest cannot
// see), without mentions.
func CreateGuestComment(ctx context.Context, q store.Tx, g Guest, creativeID uuid.UUID, in NewComment) (api.Comment, error) {
	t, err := q.CommentTargetLockGuest(ctx, db.CommentTargetLockGuestParams{
		ShareID: g.ShareID, GuestID: g.ID, VersionNumber: in.VersionNumber, ID: creativeID,
	})
	if err != nil {
		return api.Comment{}, notVisible(err, ErrCreativeNotVisible)
	}
	in.Internal, in.MentionUserIDs = false, nil
	return createComment(ctx, q, g.OrganizationID, creativeID, db.CommentTargetLockRow(t), g.caller(), guestAuthor(g), in)
}

// createComment is a comment's create once its creative is locked (t)
// for who, the author.
func createComment(ctx context.Context, q store.Tx, org, creativeID uuid.UUID, t db.CommentTargetLockRow, who review.Caller, author person, in NewComment) (api.Comment, error) {
	visibility := VisibilityEveryone
	if in.Internal {
		visibility = VisibilityInternal
	}
	guest := author.Guest != nil
	rc := review.Creative{Status: review.Status(t.ReviewStatus), AuthorID: t.AuthorID, HasCurrentVersion: t.CurrentVersionID != nil, Version: t.Version}
	var on thread.Version
	mentions := []api.UserRef{}
	err := review.CheckComment(rc, who, uuid.Nil, func() error {
		if !rc.HasCurrentVersion {
			return nil // nothing to check against: 409 follows
		}
		n := thread.New{ParentID: in.ParentID, Anchor: in.Anchor, MentionUserIDs: in.MentionUserIDs}
		if in.VersionNumber != nil {
			v := int64(*in.VersionNumber)
			n.VersionNumber = &v
		}
		p := db.CommentCreateFactsParams{MentionUserIds: in.MentionUserIDs, OrganizationID: org, ParentID: in.ParentID, CreativeID: creativeID,
			VersionID: t.VersionID}
		if in.Anchor != nil {
			p.AssetID = &in.Anchor.AssetID
		}
		if p.MentionUserIds == nil {
			p.MentionUserIds = []uuid.UUID{}
		}
		f, err := q.CommentCreateFacts(ctx, p)
		if err != nil {
			return err
		}
		facts := thread.Facts{Members: map[uuid.UUID]bool{}}
		if t.VersionID != nil {
			facts.Version = &thread.Version{ID: *t.VersionID, Number: int64(*t.VersionNumber)}
		}
		if f.ParentID != nil && guest && deref(f.ParentVisibility) == VisibilityInternal {
			f.ParentID = nil // no comment a guest can see
		}
		if f.ParentID != nil && deref(f.ParentVisibility) == VisibilityInternal {
			visibility = VisibilityInternal // a reply stays in its internal thread
		}
		if f.ParentID != nil {
			facts.Parent = &thread.Parent{TopLevel: f.ParentParentID == nil, Deleted: deref(f.ParentDeleted),
				Version: thread.Version{ID: deref(f.ParentVersionID), Number: int64(deref(f.ParentVersionNumber))}}
		}
		if f.AssetID != nil {
			facts.Asset = &thread.Asset{VersionID: deref(f.AssetVersionID), MimeType: deref(f.AssetMimeType)}
			if f.AssetDurationMs != nil {
				d := int64(*f.AssetDurationMs)
				facts.Asset.DurationMs = &d
			}
		}
		for i, id := range f.MemberIds {
			facts.Members[id] = true
			mentions = append(mentions, userref.Member(id, f.MemberNames[i]))
		}
		v, fields := thread.Check(n, facts)
		if fields != nil {
			return &Invalid{Fields: fields}
		}
		on = v
		return nil
	}, review.ActionComment)
	if err != nil {
		return api.Comment{}, err
	}
	anchor := anchorOf(in.Anchor)
	var stored []byte
	if anchor.IsSpecified() && !anchor.IsNull() {
		if stored, err = json.Marshal(anchor.MustGet()); err != nil {
			return api.Comment{}, err
		}
	}
	ids := in.MentionUserIDs
	if ids == nil {
		ids = []uuid.UUID{}
	}
	id, err := q.CommentInsert(ctx, db.CommentInsertParams{
		CreativeID: creativeID, VersionID: on.ID, VersionNumber: int32(on.Number), ParentID: in.ParentID, AuthorID: author.User,
		AuthorGuestID: author.Guest, Visibility: visibility, Body: in.Body, Anchor: stored, MentionUserIds: ids, CreatedAt: t.Now,
		AuthorGuestName: author.GuestName, AuthorVerified: author.Verified,
	})
	if err != nil {
		return api.Comment{}, err
	}
	// The answer is what was inserted; nothing is read back.
	c := api.Comment{
		Id: id, CreativeId: creativeID, VersionNumber: int(on.Number), ParentId: nullID(in.ParentID),
		Author: author.ref(t.CallerName), Body: in.Body, Anchor: anchor, Mentions: mentions,
		ResolvedBy: nullable.NewNullNullable[api.NullableUserRef](), ResolvedAt: nullable.NewNullNullable[time.Time](),
		CreatedAt: t.Now.UTC(), EditedAt: nullable.NewNullNullable[time.Time](), AddressedInVersion: nullable.NewNullNullable[int](),
		Visibility: api.CommentVisibility(visibility),
	}
	evs := []events.Event{{Type: events.CreativeCommentAdded, OrganizationID: org, Timestamp: t.Now, Data: c}}
	for _, m := range mentions {
		// Each member it mentions hears of it on their own stream; nobody
		// is told of their own comment.
		if m.Id != author.id() {
			evs = append(evs, events.Event{Type: events.CreativeMentioned, UserID: m.Id, Timestamp: t.Now, Data: c})
		}
	}
	if err := events.Write(ctx, q.Next(), evs...); err != nil {
		return api.Comment{}, err
	}
	return c, nil
}

// CommentPatch is a change of a comment: nil fields are left alone.
type CommentPatch struct {
	Body     *string
	Resolved *bool
	// Addressed, when set, marks the thread addressed in a version (nil
	// Version clears the mark).
	Addressed *Addressed
}

// Addressed is the version a thread was marked addressed in, or nil.
type Addressed struct{ Version *int32 }

// UpdateComment edits a comment's body (its author) or resolves or reopens
// its thread (admins, reviewers, the creative's author). Resolving writes
// creative.comment_resolved. A value equal to the current one changes
// nothing; the rights are checked for every field sent, whatever its value.
func UpdateComment(ctx context.Context, q store.Tx, org, creativeID, commentID, user uuid.UUID, p CommentPatch) (api.Comment, error) {
	l, who, rc, err := lockComment(ctx, q.Queries, org, creativeID, commentID, user)
	if err != nil {
		return api.Comment{}, err
	}
	return updateComment(ctx, q, org, l, who, rc, memberPerson(user), p)
}

// UpdateGuestComment edits or resolves a comment guest g wrote on a
// creative of their share, as UpdateComment does a member's; an internal
// comment is the 404 of none.
func UpdateGuestComment(ctx context.Context, q store.Tx, g Guest, creativeID, commentID uuid.UUID, p CommentPatch) (api.Comment, error) {
	r, err := q.CommentLockGuest(ctx, db.CommentLockGuestParams{ShareID: g.ShareID, ID: commentID, CreativeID: creativeID})
	if err != nil {
		return api.Comment{}, notVisible(err, ErrCommentNotVisible)
	}
	l := db.CommentLockRow(r)
	p.Addressed = nil
	return updateComment(ctx, q, g.OrganizationID, l, g.caller(), lockedCreative(l), guestPerson(g.ID), p)
}

// updateComment is a comment's change once it is locked (l), by who.
func updateComment(ctx context.Context, q store.Tx, org uuid.UUID, l db.CommentLockRow, who review.Caller, rc review.Creative, by person, p CommentPatch) (api.Comment, error) {
	cm := l.Comment
	var actions []review.Action
	if p.Body != nil {
		actions = append(actions, review.ActionEditComment)
	}
	if p.Resolved != nil {
		actions = append(actions, review.ActionResolveComment)
	}
	if p.Addressed != nil {
		actions = append(actions, review.ActionAddressComment)
	}
	err := review.CheckComment(rc, who, authorOf(cm), func() error {
		var fields []api.FieldError
		if p.Resolved != nil && cm.ParentID != nil {
			fields = append(fields, api.FieldError{Field: "resolved", Code: api.InvalidValue,
				Message: "A reply is not resolved on its own: resolve the top-level comment of its thread."})
		}
		if p.Addressed != nil {
			fields = append(fields, addressedInvalid(cm, p.Addressed.Version, l.CurrentVersionNumber)...)
		}
		if fields != nil {
			return &Invalid{Fields: fields}
		}
		return nil
	}, actions...)
	if err != nil {
		return api.Comment{}, err
	}
	if cm.Deleted {
		return api.Comment{}, deletedRefusal()
	}
	u := db.CommentUpdateParams{ID: cm.ID, Body: cm.Body, EditedAt: cm.EditedAt, ResolvedBy: cm.ResolvedBy, ResolvedByGuestID: cm.ResolvedByGuestID,
		ResolvedAt: cm.ResolvedAt, AddressedInVersion: cm.AddressedInVersion}
	changed, resolved := false, false
	if p.Body != nil && *p.Body != cm.Body {
		u.Body, u.EditedAt, changed = *p.Body, &l.Now, true
	}
	if p.Resolved != nil && *p.Resolved != cm.Resolved {
		changed = true
		if *p.Resolved {
			u.ResolvedBy, u.ResolvedByGuestID, u.ResolvedAt, resolved = by.User, by.Guest, &l.Now, true
		} else {
			u.ResolvedBy, u.ResolvedByGuestID, u.ResolvedAt = nil, nil, nil
		}
	}
	if p.Addressed != nil && !sameInt(p.Addressed.Version, cm.AddressedInVersion) {
		u.AddressedInVersion, changed = p.Addressed.Version, true
	}
	if changed {
		// The write goes with the read of the answer.
		if err := q.Next().CommentUpdate(ctx, u); err != nil {
			return api.Comment{}, err
		}
	}
	shown, err := q.CommentShownGet(ctx, cm.ID)
	if err != nil {
		return api.Comment{}, err
	}
	c, err := CommentOf(shown)
	if err != nil {
		return api.Comment{}, err
	}
	if resolved {
		if err := events.Write(ctx, q.Next(), events.Event{
			Type: events.CreativeCommentResolved, OrganizationID: org, Timestamp: l.Now, Data: c,
		}); err != nil {
			return api.Comment{}, err
		}
	}
	return c, nil
}

// DeleteComment deletes a comment (its author or an admin): a comment with
// replies stays as a tombstone (thread.Delete).
func DeleteComment(ctx context.Context, q store.Tx, org, creativeID, commentID, user uuid.UUID) error {
	l, who, rc, err := lockComment(ctx, q.Queries, org, creativeID, commentID, user)
	if err != nil {
		return err
	}
	if err := review.CheckComment(rc, who, authorOf(l.Comment), nil, review.ActionDeleteComment); err != nil {
		return err
	}
	if l.Comment.Deleted {
		return deletedRefusal()
	}
	if thread.Delete(l.HasReplies) == thread.Tombstone {
		return q.CommentTombstone(ctx, l.Comment.ID)
	}
	return q.CommentDelete(ctx, l.Comment.ID)
}

// lockComment locks a comment for a change by user.
func lockComment(ctx context.Context, q *db.Queries, org, creativeID, commentID, user uuid.UUID) (db.CommentLockRow, review.Caller, review.Creative, error) {
	l, err := q.CommentLock(ctx, db.CommentLockParams{CallerID: user, ID: commentID, CreativeID: creativeID, OrganizationID: org})
	if err != nil {
		return l, review.Caller{}, review.Creative{}, notVisible(err, ErrCommentNotVisible)
	}
	return l, review.Caller{UserID: user, Role: review.Role(l.Role)}, lockedCreative(l), nil
}

// lockedCreative is a locked comment's creative as the rules see it.
func lockedCreative(l db.CommentLockRow) review.Creative {
	return review.Creative{Status: review.Status(l.ReviewStatus), AuthorID: l.CreativeAuthorID,
		HasCurrentVersion: l.CurrentVersionID != nil, Version: l.CreativeVersion}
}

// authorOf is the id of a comment's author, a member's or a guest's.
func authorOf(cm db.Comment) uuid.UUID {
	return person{User: cm.AuthorID, Guest: cm.AuthorGuestID}.id()
}

func deletedRefusal() error {
	return &review.Refusal{Reason: review.InvalidTransition, Detail: "A deleted comment cannot be changed."}
}

// CommentFilter narrows a list of comments; the zero value lists them all.
type CommentFilter struct {
	VersionNumber *int32
	// Resolved lists top-level comments only, resolved or open.
	Resolved *bool
	ParentID *uuid.UUID
	// MentionsMe lists only the comments that mention the caller.
	MentionsMe bool
	// Open lists the threads (top-level comments of every version): the
	// open ones (unresolved, not deleted: what openThreadCount counts) or
	// the resolved ones. It does not combine with Resolved.
	Open *bool
}

// CommentPage is one page of comments, oldest first.
type CommentPage struct {
	Items []api.Comment
	// Next is the seq the next page continues after; 0 on the last page.
	Next int64
}

// ListComments reads one page of a creative's comments after the comment
// numbered after (0 for the first page). Any member may read them.
func ListComments(ctx context.Context, q *db.Queries, org, creativeID, user uuid.UUID, f CommentFilter, after int64, limit int) (CommentPage, error) {
	if _, err := q.CreativeMemberRole(ctx, db.CreativeMemberRoleParams{CallerID: user, ID: creativeID, OrganizationID: org}); err != nil {
		return CommentPage{}, notVisible(err, ErrCreativeNotVisible)
	}
	var mentioning *uuid.UUID
	if f.MentionsMe {
		mentioning = &user
	}
	return listComments(ctx, q, creativeID, mentioning, nil, f, after, limit)
}

// ListGuestComments reads one page of the comments of a creative of g's
// share, as ListComments does, without the internal ones.
func ListGuestComments(ctx context.Context, q *db.Queries, g Guest, creativeID uuid.UUID, f CommentFilter, after int64, limit int) (CommentPage, error) {
	if err := guestHolds(ctx, q, g, creativeID); err != nil {
		return CommentPage{}, err
	}
	everyone := VisibilityEveryone
	f.MentionsMe, f.Resolved, f.Open = false, nil, nil
	return listComments(ctx, q, creativeID, nil, &everyone, f, after, limit)
}

// listComments reads a page through the query of the filter's shape;
// mentioning and visibility (nil: any) only narrow what it found.
func listComments(ctx context.Context, q *db.Queries, creativeID uuid.UUID, mentioning *uuid.UUID, visibility *string, f CommentFilter, after int64, limit int) (CommentPage, error) {
	n := cursor.Over(limit)
	var live *bool
	if f.Open != nil {
		// An open thread is an unresolved one that is not deleted.
		resolved := !*f.Open
		f.Resolved = &resolved
		if *f.Open {
			live = f.Open
		}
	}
	var rows []db.CommentsShown
	var err error
	switch {
	case f.ParentID != nil:
		rows, err = q.CommentPageReplies(ctx, db.CommentPageRepliesParams{ParentID: *f.ParentID, CreativeID: creativeID, AfterSeq: after, VersionNumber: f.VersionNumber, Mentioning: mentioning, Visibility: visibility, RowLimit: n})
	case f.Resolved != nil && f.VersionNumber != nil:
		rows, err = q.CommentPageTopLevelByVersion(ctx, db.CommentPageTopLevelByVersionParams{CreativeID: creativeID, VersionNumber: *f.VersionNumber, Resolved: *f.Resolved, AfterSeq: after, Live: live, Mentioning: mentioning, RowLimit: n})
	case f.Resolved != nil:
		rows, err = q.CommentPageTopLevel(ctx, db.CommentPageTopLevelParams{CreativeID: creativeID, Resolved: *f.Resolved, AfterSeq: after, Live: live, Mentioning: mentioning, RowLimit: n})
	case f.VersionNumber != nil:
		rows, err = q.CommentPageByVersion(ctx, db.CommentPageByVersionParams{CreativeID: creativeID, VersionNumber: *f.VersionNumber, AfterSeq: after, Mentioning: mentioning, Visibility: visibility, RowLimit: n})
	default:
		rows, err = q.CommentPage(ctx, db.CommentPageParams{CreativeID: creativeID, AfterSeq: after, Mentioning: mentioning, Visibility: visibility, RowLimit: n})
	}
	if err != nil {
		return CommentPage{}, err
	}
	var p CommentPage
	rows, more := cursor.Trim(rows, limit)
	if more {
		p.Next = deref(rows[len(rows)-1].Seq)
	}
	p.Items = make([]api.Comment, len(rows))
	for i, r := range rows {
		if p.Items[i], err = CommentOf(r); err != nil {
			return CommentPage{}, err
		}
	}
	return p, nil
}

// CommentOf is a stored comment as the API shows it.
func CommentOf(r db.CommentsShown) (api.Comment, error) {
	c := api.Comment{
		Id: r.ID, CreativeId: r.CreativeID, VersionNumber: int(r.VersionNumber), ParentId: nullID(r.ParentID),
		Author: person{User: r.AuthorID, Guest: r.AuthorGuestID, Verified: r.AuthorVerified}.ref(r.AuthorName), Body: r.Body, Mentions: make([]api.UserRef, len(r.MentionUserIds)),
		Anchor: nullable.NewNullNullable[api.CommentAnchor](), Resolved: r.Resolved,
		ResolvedBy: nullable.NewNullNullable[api.NullableUserRef](), ResolvedAt: nullTime(r.ResolvedAt),
		CreatedAt: r.CreatedAt.UTC(), EditedAt: nullTime(r.EditedAt), Deleted: r.Deleted,
		AddressedInVersion: nullInt(r.AddressedInVersion), Visibility: api.CommentVisibility(r.Visibility),
	}
	if len(r.MentionNames) != len(r.MentionUserIds) {
		return api.Comment{}, fmt.Errorf("comment %s: %d mention names for %d mentions", r.ID, len(r.MentionNames), len(r.MentionUserIds))
	}
	for i, id := range r.MentionUserIds {
		c.Mentions[i] = userref.Member(id, r.MentionNames[i])
	}
	if r.Anchor != nil {
		var a api.CommentAnchor
		if err := json.Unmarshal(r.Anchor, &a); err != nil {
			return api.Comment{}, fmt.Errorf("comment %s: anchor: %w", r.ID, err)
		}
		c.Anchor.Set(a)
	}
	if by := (person{User: r.ResolvedBy, Guest: r.ResolvedByGuestID}); by.User != nil || by.Guest != nil {
		c.ResolvedBy.Set(by.ref(r.ResolvedByName))
	}
	return c, nil
}

// anchorOf is an anchor as the API shows it: every key present, null when
// not given (the time range's end too).
func anchorOf(a *thread.Anchor) nullable.Nullable[api.CommentAnchor] {
	if a == nil {
		return nullable.NewNullNullable[api.CommentAnchor]()
	}
	out := api.CommentAnchor{AssetId: a.AssetID, Region: nullable.NewNullNullable[api.CommentRegion](),
		TimeMs: nullable.NewNullNullable[api.CommentTimeRange](), Page: nullable.NewNullNullable[int32]()}
	if r := a.Region; r != nil {
		out.Region.Set(api.CommentRegion{X: r.X, Y: r.Y, Width: r.Width, Height: r.Height})
	}
	if t := a.TimeMs; t != nil {
		tr := api.CommentTimeRange{Start: int32(t.Start), End: nullable.NewNullNullable[int32]()}
		if t.End != nil {
			tr.End.Set(int32(*t.End))
		}
		out.TimeMs.Set(tr)
	}
	if a.Page != nil {
		out.Page.Set(int32(*a.Page))
	}
	return nullable.NewNullableWithValue(out)
}

func nullID(id *uuid.UUID) nullable.Nullable[uuid.UUID] {
	if id == nil {
		return nullable.NewNullNullable[uuid.UUID]()
	}
	return nullable.NewNullableWithValue(*id)
}

func nullInt(n *int32) nullable.Nullable[int] {
	if n == nil {
		return nullable.NewNullNullable[int]()
	}
	return nullable.NewNullableWithValue(int(*n))
}

func nullTime(t *time.Time) nullable.Nullable[time.Time] {
	if t == nil {
		return nullable.NewNullNullable[time.Time]()
	}
	return nullable.NewNullableWithValue(t.UTC())
}

// addressedInvalid judges a mark of a thread as addressed in version v:
// only a top-level comment is a thread, and it is addressed by a later
// version that exists (after the comment's, at most the current one).
func addressedInvalid(cm db.Comment, v *int32, current int32) []api.FieldError {
	bad := func(msg string) []api.FieldError {
		return []api.FieldError{{Field: "addressedInVersion", Code: api.InvalidValue, Message: msg}}
	}
	switch {
	case cm.ParentID != nil:
		return bad("A reply is no thread: mark its top-level comment addressed.")
	case v == nil:
		return nil
	case *v <= cm.VersionNumber:
		return bad(fmt.Sprintf("A thread on version %d is addressed by a later version.", cm.VersionNumber))
	case *v > current:
		return bad("No such version of the creative yet.")
	}
	return nil
}

func sameInt(a, b *int32) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
