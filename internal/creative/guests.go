package creative

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/cursor"
	"creativeapi/internal/events"
	"creativeapi/internal/review"
)

// Guests read and act on the creatives of their share (docs/shares.md):
// the same answers as members get, built by the same functions, with the
// guest's rights (review.GuestCaller) in place of a member's role. A
// creative the share does not hold is ErrCreativeNotVisible, as one that
// does not exist.

// Guest is the guest of a guest session: their id and email, and their
// share with its organization and permission; the session's name and
// whether it proved the email (Verified).
type Guest struct {
	ID, ShareID, OrganizationID uuid.UUID
	Email, Permission           string
	Name                        string
	Verified                    bool
	// Invited: the share invited Email; AccountID is the user whose email
	// it is (uuid.Nil: nobody's). Who decides reads both.
	Invited   bool
	AccountID uuid.UUID
}

// ErrGuestUnverified refuses a decision of a guest session that has not
// proven its email (docs/shares.md): 403 guest_unverified.
var ErrGuestUnverified = errors.New("guest session unverified")

// caller is the guest as the review rules see them. An unverified
// session decides nothing, so its rights are at most a comment guest's
// (availableActions holds no decision).
func (g Guest) caller() review.Caller {
	permission := g.Permission
	if permission == "decide" && !g.Verified {
		permission = "comment"
	}
	who := review.GuestCaller(g.ID, g.Email, permission)
	who.GuestInvited, who.GuestAccountID = g.Invited, g.AccountID
	return who
}

// mustBeVerified is the one check of the guest decision path that is
// about verification: only a verified session decides.
func (g Guest) mustBeVerified() error {
	if !g.Verified {
		return ErrGuestUnverified
	}
	return nil
}

// mayDecide is what the inbox rules (docs/shares.md) ask of a decide
// guest's decision before the rights table sees it: a verified session,
// and an email that is no member's.
func (g Guest) mayDecide(ctx context.Context, q *db.Queries, a review.Action) error {
	if g.Permission != "decide" || (a != review.ActionApprove && a != review.ActionRequestChanges) {
		return nil
	}
	if err := g.mustBeVerified(); err != nil {
		return err
	}
	return g.mustNotBeMember(ctx, q)
}

// mustNotBeMember refuses a guest whose email is now a member's of the
// organization: members sign in and decide as members.
func (g Guest) mustNotBeMember(ctx context.Context, q *db.Queries) error {
	members, err := q.ShareMemberEmails(ctx, db.ShareMemberEmailsParams{OrganizationID: g.OrganizationID, Emails: []string{g.Email}})
	if err != nil {
		return err
	}
	if len(members) > 0 {
		return &review.Refusal{Reason: review.Forbidden, Detail: "This email is a member's of the organization now: sign in to decide."}
	}
	return nil
}

// GuestGet reads one creative of g's share as g sees it.
func GuestGet(ctx context.Context, q *db.Queries, g Guest, id uuid.UUID) (Creative, error) {
	r, err := q.ShareCreativeGet(ctx, db.ShareCreativeGetParams{ShareID: g.ShareID, ID: id})
	if err != nil {
		return Creative{}, notVisible(err, ErrCreativeNotVisible)
	}
	return one(ctx, q, row{r.Creative, r.AuthorName, r.ReviewerName, r.ClientName, r.TaskName}, g.caller())
}

// GuestPage is one page of a share's creatives.
type GuestPage struct {
	Items []Creative
	// Next is the position the next page continues after; 0 on the last.
	Next int32
}

// GuestList reads one page of g's share's creatives after position
// after, in the order the share lists them.
func GuestList(ctx context.Context, q *db.Queries, g Guest, after int32, limit int) (GuestPage, error) {
	rs, err := q.ShareCreativePage(ctx, db.ShareCreativePageParams{ShareID: g.ShareID, AfterPosition: after, RowLimit: cursor.Over(limit)})
	if err != nil {
		return GuestPage{}, err
	}
	rs, more := cursor.Trim(rs, limit)
	var p GuestPage
	if more {
		p.Next = rs[len(rs)-1].Position
	}
	rows := make([]row, len(rs))
	for i, r := range rs {
		rows[i] = row{r.Creative, r.AuthorName, r.ReviewerName, r.ClientName, r.TaskName}
	}
	if p.Items, err = details(ctx, q, rows, g.caller()); err != nil {
		return GuestPage{}, err
	}
	return p, nil
}

// MayGuestComment refuses g unless their share holds the creative id
// (404) and lets them comment (403): the replay check of a guest's
// comment.
func MayGuestComment(ctx context.Context, q *db.Queries, g Guest, id uuid.UUID) error {
	if err := guestHolds(ctx, q, g, id); err != nil {
		return err
	}
	return review.AuthorizeComment(review.Creative{}, g.caller(), uuid.Nil, review.ActionComment)
}

// MayGuestDecide refuses g unless their share holds the creative id (404)
// and lets them decide (403): the replay check of a guest's decision.
func MayGuestDecide(ctx context.Context, q *db.Queries, g Guest, id uuid.UUID, a review.Action) error {
	if err := guestHolds(ctx, q, g, id); err != nil {
		return err
	}
	if err := g.mayDecide(ctx, q, a); err != nil {
		return err
	}
	if g.caller().Role != review.RoleGuestDecide || (a != review.ActionApprove && a != review.ActionRequestChanges) {
		return review.Authorize(review.Creative{}, g.caller(), a)
	}
	return nil
}

// guestHolds is ErrCreativeNotVisible unless g's share holds creative id.
func guestHolds(ctx context.Context, q *db.Queries, g Guest, id uuid.UUID) error {
	holds, err := q.ShareHoldsCreative(ctx, db.ShareHoldsCreativeParams{ShareID: g.ShareID, CreativeID: id})
	switch {
	case err != nil:
		return err
	case !holds:
		return ErrCreativeNotVisible
	}
	return nil
}

// GuestEventPayload is the payload of an event of g's share's creatives as
// g's stream sends it (docs/shares.md, "The guest stream"). A comment
// event's is the stored one (the stream sends g only the comments g may
// see). A creative event's data is the creative read again as g reads it:
// the stored one is the members' (its counts hold the internal comments,
// its files the members' paths), so it is replaced, and its version may
// be past the event's change.
func GuestEventPayload(ctx context.Context, q *db.Queries, g Guest, t events.Type, payload []byte) ([]byte, error) {
	if t == events.CreativeCommentAdded || t == events.CreativeCommentResolved {
		return payload, nil
	}
	var stored struct {
		Timestamp time.Time
		Data      struct{ ID uuid.UUID }
	}
	if err := json.Unmarshal(payload, &stored); err != nil {
		return nil, fmt.Errorf("guest event: read %s: %w", t, err)
	}
	c, err := GuestGet(ctx, q, g, stored.Data.ID)
	if err != nil {
		return nil, fmt.Errorf("guest event: read creative %s: %w", stored.Data.ID, err)
	}
	return json.Marshal(events.Payload{Type: t, Timestamp: stored.Timestamp, Data: eventData{Detail: c.Detail}})
}
