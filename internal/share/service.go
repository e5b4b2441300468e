package share

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/apifield"
	"creativeapi/internal/auth"
	"creativeapi/internal/directory"
	"creativeapi/internal/emailcap"
	"creativeapi/internal/events"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
	"creativeapi/internal/userref"
)

// The organization side of shares: each function checks the caller's
// membership and role first (review.AuthorizeShares), so a reviewer or
// viewer learns nothing but the refusal. Refusals:
// directory.ErrOrganizationNotVisible, *review.Refusal, ErrNotVisible,
// *CreativeError, *ExpiryError, ErrArchived, ErrLimit.

var (
	// ErrNotVisible: no share with this id that the caller may see (an
	// author sees only the shares they made).
	ErrNotVisible = errors.New("share not visible")
	// ErrArchived: a creative of a new share is archived.
	ErrArchived = errors.New("share of an archived creative")
	// ErrLimit: the organization has MaxLive live shares already, or a
	// new share lists more than MaxCreatives creatives.
	ErrLimit = errors.New("share limit")
)

// CreativeError names the creative id of a new share that is not one of
// the organization's: another workspace's and a missing one alike.
type CreativeError struct{ Index int }

func (e *CreativeError) Error() string { return "share: creative id is not one of the organization's" }

// InviteError names the invitation of a new share whose email is a
// member's of the organization: members sign in (docs/shares.md).
type InviteError struct{ Index int }

func (e *InviteError) Error() string { return "share: an invited email is a member's" }

// Invite is a person to email a new share's link to.
type Invite struct {
	Email string
	Name  string
}

// New is a share as its creator asks for it. PasswordHash is the
// password already hashed (auth.HashPassword), outside any transaction.
type New struct {
	CreativeIDs  []uuid.UUID
	Permission   Permission
	ExpiresAt    *time.Time
	PasswordHash *string
	Invite       []Invite
}

// Share is a share as the API shows it, without its token.
type Share struct {
	ID            uuid.UUID
	CreativeIDs   []uuid.UUID
	Permission    Permission
	ExpiresAt     time.Time
	HasPassword   bool
	CreatedBy     uuid.UUID
	CreatedByName string
	CreatedAt     time.Time
	RevokedAt     *time.Time
	Invitations   []Invitation
}

// Invitation is one person a share's link was emailed to.
type Invitation struct {
	Email      string
	Name       *string
	SentAt     *time.Time
	LastSeenAt *time.Time
}

// Position is where a page continues: after the share with this time
// and id.
type Position struct {
	At time.Time
	ID uuid.UUID
}

// Page is one page of shares, newest first; Next is nil on the last.
type Page struct {
	Items []Share
	Next  *Position
}

// callerRole is the caller's role in org, refused unless they may
// manage shares at all.
func callerRole(ctx context.Context, q *db.Queries, org, user uuid.UUID) (review.Role, error) {
	role, err := directory.MemberRole(ctx, q, org, user)
	if err != nil {
		return "", err
	}
	return role, review.AuthorizeShares(role)
}

// MayCreate refuses a caller who may not make shares in org: a replayed
// create (which holds the token) goes only to a caller who still may.
func MayCreate(ctx context.Context, q *db.Queries, org, user uuid.UUID) error {
	_, err := callerRole(ctx, q, org, user)
	return err
}

// Create makes a share of in.CreativeIDs in one transaction (q) and
// returns it with its token, which exists nowhere else afterwards but
// sealed for each invitation until its email is sent (seal nil: email is
// off, no invitation is sealed or sent).
func Create(ctx context.Context, tx store.Tx, org, user uuid.UUID, in New, seal *Sealer, now time.Time) (Share, string, error) {
	q := tx.Queries
	role, err := callerRole(ctx, q, org, user)
	if err != nil {
		return Share{}, "", err
	}
	if err := review.AuthorizeSharePermission(role, string(in.Permission)); err != nil {
		return Share{}, "", err
	}
	if len(in.CreativeIDs) > MaxCreatives {
		return Share{}, "", ErrLimit
	}
	expiresAt, err := Expiry(in.ExpiresAt, now)
	if err != nil {
		return Share{}, "", err
	}
	if err := checkCreatives(ctx, q, org, user, role, in.CreativeIDs); err != nil {
		return Share{}, "", err
	}
	// The lock makes count and insert one step for the organization.
	if _, err := q.ShareOrganizationLock(ctx, org); err != nil {
		return Share{}, "", err
	}
	live, err := q.ShareLiveCount(ctx, org)
	if err != nil {
		return Share{}, "", err
	}
	if live >= MaxLive {
		return Share{}, "", ErrLimit
	}
	emails, err := invitedEmails(ctx, q, org, in.Invite)
	if err != nil {
		return Share{}, "", err
	}
	// All or nothing: over a ceiling, no share and no invitation.
	if err := emailcap.ReserveInvitations(ctx, q, now, org, user, unique(emails)); err != nil {
		return Share{}, "", err
	}
	token, hash := NewToken()
	row, err := q.ShareCreate(ctx, db.ShareCreateParams{
		OrganizationID: org, TokenHash: hash, Permission: string(in.Permission), ExpiresAt: expiresAt,
		PasswordHash: in.PasswordHash, CreatedBy: user,
	})
	if err != nil {
		return Share{}, "", err
	}
	if err := q.ShareCreativesAdd(ctx, db.ShareCreativesAddParams{ShareID: row.ID, CreativeIds: in.CreativeIDs}); err != nil {
		return Share{}, "", err
	}
	if len(in.Invite) > 0 {
		names := make([]string, len(in.Invite))
		hashes := make([][]byte, len(in.Invite))
		var sealed [][]byte
		for i, inv := range in.Invite {
			names[i] = inv.Name
			// Each invitation has a link of its own: its token verifies
			// the guest session it opens, since only that inbox got it.
			invitation, invitationHash := NewToken()
			hashes[i] = invitationHash
			if seal != nil {
				sealed = append(sealed, seal.Seal(row.ID, emails[i], LinkTokens{Share: token, Invitation: invitation}.String()))
			}
		}
		if err := q.ShareInvitationsAdd(ctx, db.ShareInvitationsAddParams{
			ShareID: row.ID, Emails: emails, Names: names, TokensSealed: sealed, TokenHashes: hashes,
		}); err != nil {
			return Share{}, "", err
		}
	}
	s, err := Get(ctx, q, org, row.ID, user)
	if err != nil {
		return Share{}, "", err
	}
	// The event never holds the token (Answer without it); it travels
	// with the statement after it (the stored answer, or COMMIT).
	ev := events.Event{Type: events.ShareCreated, OrganizationID: org, Timestamp: s.CreatedAt, Data: s.Answer("", "")}
	return s, token, events.Write(ctx, tx.Next(), ev)
}

// invitedEmails are the invitations' emails, normalised, in order; an
// email of a member of org is *InviteError (the first such index).
func invitedEmails(ctx context.Context, q *db.Queries, org uuid.UUID, invite []Invite) ([]string, error) {
	emails := make([]string, len(invite))
	for i, inv := range invite {
		emails[i] = auth.NormalizeEmail(inv.Email)
	}
	if len(emails) == 0 {
		return emails, nil
	}
	members, err := q.ShareMemberEmails(ctx, db.ShareMemberEmailsParams{OrganizationID: org, Emails: emails})
	if err != nil || len(members) == 0 {
		return emails, err
	}
	for i, e := range emails {
		if slices.Contains(members, e) {
			return nil, &InviteError{Index: i}
		}
	}
	return emails, nil
}

// unique is emails without repeats, in order (a share invites an address
// once).
func unique(emails []string) []string {
	out := make([]string, 0, len(emails))
	for _, e := range emails {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// checkCreatives refuses ids that are not creatives of org (422 on the
// first such index), a creative the caller may not share, and an
// archived one.
func checkCreatives(ctx context.Context, q *db.Queries, org, user uuid.UUID, role review.Role, ids []uuid.UUID) error {
	rows, err := q.ShareCreativesOfOrganization(ctx, db.ShareCreativesOfOrganizationParams{OrganizationID: org, Ids: ids})
	if err != nil {
		return err
	}
	found := make(map[uuid.UUID]db.ShareCreativesOfOrganizationRow, len(rows))
	for _, r := range rows {
		found[r.ID] = r
	}
	for i, id := range ids {
		if _, ok := found[id]; !ok {
			return &CreativeError{Index: i}
		}
	}
	for _, id := range ids {
		if err := review.AuthorizeShareCreative(role, found[id].AuthorID == user); err != nil {
			return err
		}
	}
	for _, id := range ids {
		if review.Status(found[id].ReviewStatus) == review.StatusArchived {
			return ErrArchived
		}
	}
	return nil
}

// List reads one page of the shares the caller may see: every share of
// org for an admin, their own for an author.
func List(ctx context.Context, q *db.Queries, org, user uuid.UUID, after *Position, limit int) (Page, error) {
	role, err := callerRole(ctx, q, org, user)
	if err != nil {
		return Page{}, err
	}
	params := db.SharePageParams{OrganizationID: org, RowLimit: int32(limit) + 1}
	if !review.SeesAllShares(role) {
		params.CreatedBy = &user
	}
	if after != nil {
		params.CursorCreatedAt, params.CursorID = &after.At, &after.ID
	}
	rows, err := q.SharePage(ctx, params)
	if err != nil {
		return Page{}, err
	}
	var p Page
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1].Share
		p.Next = &Position{At: last.CreatedAt, ID: last.ID}
	}
	p.Items = make([]Share, len(rows))
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		p.Items[i] = view(r.Share, r.CreatedByName, r.CreativeIds)
		ids[i] = r.Share.ID
	}
	if err := withInvitations(ctx, q, p.Items, ids); err != nil {
		return Page{}, err
	}
	return p, nil
}

// Get reads one share the caller may see.
func Get(ctx context.Context, q *db.Queries, org, id, user uuid.UUID) (Share, error) {
	role, err := callerRole(ctx, q, org, user)
	if err != nil {
		return Share{}, err
	}
	r, err := visible(ctx, q, org, id, user, role)
	if err != nil {
		return Share{}, err
	}
	s := []Share{view(r.Share, r.CreatedByName, r.CreativeIds)}
	if err := withInvitations(ctx, q, s, []uuid.UUID{id}); err != nil {
		return Share{}, err
	}
	return s[0], nil
}

// Revoke ends a share the caller may see at once; revoking a revoked
// share again changes nothing. Guest sessions are scoped to their share
// and read its revocation on every request, so they end with it.
func Revoke(ctx context.Context, tx store.Tx, org, id, user uuid.UUID) error {
	q := tx.Queries
	role, err := callerRole(ctx, q, org, user)
	if err != nil {
		return err
	}
	r, err := visible(ctx, q, org, id, user, role)
	if err != nil {
		return err
	}
	revoked, err := q.ShareRevoke(ctx, db.ShareRevokeParams{ID: id, OrganizationID: org})
	if err != nil || len(revoked) == 0 {
		return err // revoked already: no second event
	}
	r.Share.RevokedAt = &revoked[0]
	sh := []Share{view(r.Share, r.CreatedByName, r.CreativeIds)}
	if err := withInvitations(ctx, q, sh, []uuid.UUID{id}); err != nil {
		return err
	}
	ev := events.Event{Type: events.ShareRevoked, OrganizationID: org, Timestamp: revoked[0], Data: sh[0].Answer("", "")}
	return events.Write(ctx, tx.Next(), ev)
}

// visible reads share id of org, ErrNotVisible when there is none or the
// caller is an author who did not make it.
func visible(ctx context.Context, q *db.Queries, org, id, user uuid.UUID, role review.Role) (db.ShareGetRow, error) {
	r, err := q.ShareGet(ctx, db.ShareGetParams{ID: id, OrganizationID: org})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return db.ShareGetRow{}, ErrNotVisible
	case err != nil:
		return db.ShareGetRow{}, err
	case !review.SeesAllShares(role) && r.Share.CreatedBy != user:
		return db.ShareGetRow{}, ErrNotVisible
	}
	return r, nil
}

func view(s db.Share, createdByName string, creativeIDs []uuid.UUID) Share {
	return Share{
		ID: s.ID, CreativeIDs: creativeIDs, Permission: Permission(s.Permission), ExpiresAt: s.ExpiresAt,
		HasPassword: s.PasswordHash != nil, CreatedBy: s.CreatedBy, CreatedByName: createdByName,
		CreatedAt: s.CreatedAt, RevokedAt: s.RevokedAt, Invitations: []Invitation{},
	}
}

// withInvitations fills in the invitations of shares (ids in the same
// order) with one read.
func withInvitations(ctx context.Context, q *db.Queries, shares []Share, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := q.ShareInvitationsOf(ctx, ids)
	if err != nil {
		return err
	}
	at := make(map[uuid.UUID]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	for _, r := range rows {
		i := at[r.ShareID]
		shares[i].Invitations = append(shares[i].Invitations, Invitation{Email: r.Email, Name: r.Name, SentAt: r.SentAt, LastSeenAt: r.LastSeenAt})
	}
	return nil
}

// Answer is the share as the API shows it: token and url are null but in
// the create answer (pass "" elsewhere).
func (sh Share) Answer(token, url string) api.Share {
	out := api.Share{
		Id: sh.ID, CreativeIds: sh.CreativeIDs, Permission: api.SharePermission(sh.Permission), ExpiresAt: sh.ExpiresAt.UTC(),
		HasPassword: sh.HasPassword, CreatedBy: userref.Member(sh.CreatedBy, sh.CreatedByName), CreatedAt: sh.CreatedAt.UTC(),
		RevokedAt: apifield.Nullable(sh.RevokedAt), Token: apifield.Nullable[string](nil), Url: apifield.Nullable[string](nil),
		Invitations: make([]api.ShareInvitation, len(sh.Invitations)),
	}
	if token != "" {
		out.Token.Set(token)
		out.Url.Set(url)
	}
	for i, inv := range sh.Invitations {
		out.Invitations[i] = api.ShareInvitation{Email: inv.Email, Name: apifield.Nullable(inv.Name),
			SentAt: apifield.Nullable(inv.SentAt), LastSeenAt: apifield.Nullable(inv.LastSeenAt)}
	}
	return out
}
