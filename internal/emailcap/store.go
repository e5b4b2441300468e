package emailcap

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
)

// The kinds of email_sends.
const (
	KindGuestCode       = "guest_code"
	KindShareInvitation = "share_invitation"
)

// anonymousKinds are the emails PerRecipient caps together: one ceiling
// per recipient, whichever of them is asked for.
var anonymousKinds = []string{KindGuestCode}

// ExceededError refuses invitations over a ceiling: 429
// email_quota_exceeded, retry after RetryAfter.
type ExceededError struct{ RetryAfter time.Duration }

func (e *ExceededError) Error() string {
	return fmt.Sprintf("email quota exceeded: retry after %s", e.RetryAfter)
}

// AllowRecipient records one email of kind (an anonymous kind) to
// recipient and reports true, or reports false and records nothing when
// the recipient's ceiling is reached: the caller then sends nothing and
// changes nothing, and answers as if it had. q must be a transaction:
// the recipient's lock holds until it ends.
func AllowRecipient(ctx context.Context, q *db.Queries, kind, recipient string) (bool, error) {
	if err := q.EmailSendRecipientLock(ctx, recipient); err != nil {
		return false, err
	}
	rows, err := q.EmailSendRecipientTimes(ctx, db.EmailSendRecipientTimesParams{Recipient: recipient, Kinds: anonymousKinds})
	if err != nil {
		return false, err
	}
	if len(rows) > 0 {
		times := make([]time.Time, len(rows))
		for i, r := range rows {
			times[i] = r.CreatedAt
		}
		if Wait(rows[0].Now, times, 1, PerRecipient) > 0 {
			return false, nil
		}
	}
	return true, q.EmailSendsAdd(ctx, db.EmailSendsAddParams{Kind: kind, Recipients: []string{recipient}})
}

// ReserveInvitations records the invitations of recipients (normalised,
// each once) by user in org, or refuses them all with *ExceededError.
// q must be a transaction that holds the organization's lock (share
// creation takes it); the user's lock is taken here, so two of their
// invitations in other organizations cannot both pass their ceiling.
func ReserveInvitations(ctx context.Context, q *db.Queries, now time.Time, org, user uuid.UUID, recipients []string) error {
	if len(recipients) == 0 {
		return nil
	}
	if err := q.EmailSendSenderLock(ctx, user.String()); err != nil {
		return err
	}
	rows, err := q.EmailSendOrganizationSends(ctx, db.EmailSendOrganizationSendsParams{OrganizationID: &org, Kind: KindShareInvitation})
	if err != nil {
		return err
	}
	sends := make([]Send, len(rows))
	for i, r := range rows {
		sends[i] = Send{Recipient: r.Recipient, At: r.CreatedAt}
	}
	userTimes, err := q.EmailSendSenderTimes(ctx, db.EmailSendSenderTimesParams{SenderID: &user, Kind: KindShareInvitation})
	if err != nil {
		return err
	}
	if wait := InvitationWait(now, sends, userTimes, recipients); wait > 0 {
		return &ExceededError{RetryAfter: wait}
	}
	return q.EmailSendsAdd(ctx, db.EmailSendsAddParams{Kind: KindShareInvitation, OrganizationID: &org, SenderID: &user, Recipients: recipients})
}

// Purge deletes the sends no ceiling reads any more (older than a day);
// safe to run on every replica at once.
func Purge(ctx context.Context, q *db.Queries) (int64, error) {
	return q.EmailSendDeleteOld(ctx)
}
