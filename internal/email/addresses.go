package email

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"creativeapi/gen/db"
	"creativeapi/internal/share"
	"creativeapi/internal/store"
)

// Notifications to addresses: people outside the organization, guests of
// its shares, who have no account, so no settings and no unsubscribe
// (docs/email.md, "Guests").

// addressArgs is the job of one notification to an address.
type addressArgs struct {
	NotificationID uuid.UUID `json:"notificationId"`
}

func (addressArgs) Kind() string { return "email_address_notification" }

type addressWorker struct {
	river.WorkerDefaults[addressArgs]
	s *Service
}

func (w *addressWorker) Timeout(*river.Job[addressArgs]) time.Duration { return sendTimeLimit }

// Work sends one notification to an address, or drops it when the
// address can no longer act on it (its share revoked or expired). An
// invitation's sealed token that does not open (the secret changed) is
// failed: nothing can ever send it.
func (w *addressWorker) Work(ctx context.Context, job *river.Job[addressArgs]) error {
	s := w.s
	n, err := s.st.Q.NotificationToAddressGet(ctx, job.Args.NotificationID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // its share or organization was deleted
	}
	if err != nil {
		return err
	}
	if n.State != stateQueued {
		return nil
	}
	mark := func(ctx context.Context, state string) error {
		return s.st.Q.NotificationToAddressStateSet(ctx, db.NotificationToAddressStateSetParams{ID: n.ID, State: state})
	}
	if !n.HasAccess {
		return mark(ctx, stateDropped)
	}
	var m Message
	switch n.Kind {
	case "share_invitation":
		m, err = s.invitation(n)
	case "review_requested", "due":
		m, err = s.guestStage(n)
	default:
		err = fmt.Errorf("email: kind %q to an address", n.Kind)
	}
	if err != nil {
		if serr := mark(ctx, stateFailed); serr != nil {
			return serr
		}
		return river.JobCancel(err)
	}
	return s.send(ctx, n.Kind, m, mark)
}

// invitation is the email inviting n.Email to a share: the invitation's
// own link {APP_URL}/share/{token}#invitation={invitation}, rebuilt
// from the tokens sealed for it.
func (s *Service) invitation(n db.NotificationToAddressGetRow) (Message, error) {
	if s.invitations == nil || n.ShareID == nil {
		return Message{}, errors.New("email: no key to open an invitation's token")
	}
	token, err := s.invitations.Open(*n.ShareID, n.Email, n.TokenSealed)
	if err != nil {
		return Message{}, err
	}
	actor := "Someone"
	if n.ActorName != nil && *n.ActorName != "" {
		actor = *n.ActorName
	}
	names := make([]string, len(n.ShareCreativeNumbers))
	for i, num := range n.ShareCreativeNumbers {
		names[i] = creativeName(num, n.ShareCreativeTitles[i])
	}
	what := strings.Join(names, ", ")
	subject := n.OrganizationName + ": " + actor + " invites you to review " + what
	if len(names) > 1 {
		subject = fmt.Sprintf("%s: %s invites you to review %d creatives", n.OrganizationName, actor, len(names))
	}
	greeting := ""
	if n.InviteeName != nil && *n.InviteeName != "" {
		greeting = "Hello " + *n.InviteeName + ", "
	}
	them := "it"
	if len(names) > 1 {
		them = "them"
	}
	note := "You may " + fmt.Sprintf(permissionWords[share.Permission(n.Permission)], them) + ", without an account, until " +
		n.ExpiresAt.UTC().Format("2 January 2006 15:04 UTC") + "."
	if n.HasPassword {
		note += " The link asks for a password: " + actor + " gives it to you."
	}
	it := item{Kind: n.Kind, Subject: what,
		Line: greeting + actor + " of " + n.OrganizationName + " invites you to review " + what + ".",
		Note: note, Link: s.cfg.AppURL + share.ParseLinkTokens(token).Path()}
	why := "You get this email because " + actor + " of " + n.OrganizationName + " invited " + n.Email +
		". The link is yours alone: it proves that you are " + n.Email + ", so do not forward it."
	text, html, err := render(page{Title: subject, Items: []item{it}, Why: why})
	if err != nil {
		return Message{}, err
	}
	return Message{ID: n.ID.String() + "@" + s.msgHost, To: n.Email, Subject: subject, Text: text, HTML: html}, nil
}

// guestStage is the email asking a guest reviewer to review a stage that
// became active, or reminding them of its due date. It has no link: the
// guest's way in is the link of their share, whose token no one but its
// email and its creator has.
func (s *Service) guestStage(n db.NotificationToAddressGetRow) (Message, error) {
	var d detail
	if err := json.Unmarshal(n.Detail, &d); err != nil {
		return Message{}, fmt.Errorf("email: notification %s detail: %w", n.ID, err)
	}
	what := creativeName(n.CreativeNumber, n.CreativeTitle)
	line := dueLine(what, d)
	if n.Kind == "review_requested" {
		line = stageLine(what, d)
	}
	it := item{Kind: n.Kind, Subject: what, Line: line,
		Note: "Open the review link " + n.OrganizationName + " sent you to decide."}
	subject := subjectOf(it, d)
	why := "You get this email because " + n.Email + " is a reviewer of " + what + " for " + n.OrganizationName + "."
	text, html, err := render(page{Title: subject, Items: []item{it}, Why: why})
	if err != nil {
		return Message{}, err
	}
	return Message{ID: n.ID.String() + "@" + s.msgHost, To: n.Email, Subject: subject, Text: text, HTML: html}, nil
}

// permissionWords says what a guest of a share may do with the shared
// creatives (%s: it or them).
var permissionWords = map[share.Permission]string{
	share.PermissionView:    "look at %s and read the comments",
	share.PermissionComment: "look at %s and comment",
	share.PermissionDecide:  "look at %s, comment, and approve or request changes",
}

// creativeName is how an email names a creative: CR-000123 Title.
func creativeName(number int32, title string) string {
	return fmt.Sprintf("CR-%06d %s", number, title)
}
