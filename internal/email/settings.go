package email

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/store"
)

// Settings are how one person gets notification emails: Email is
// instant, daily or off; Kinds switches each kind (Kinds lists them).
type Settings struct {
	Email string
	Kinds map[string]bool
}

// GetSettings reads user's settings (the defaults when none were saved).
func GetSettings(ctx context.Context, st *store.Store, user uuid.UUID) (Settings, error) {
	r, err := st.Q.NotificationSettingsGet(ctx, user)
	if err != nil {
		return Settings{}, err
	}
	return Settings{Email: r.Email, Kinds: map[string]bool{
		"mention": r.Mention, "review_requested": r.ReviewRequested, "decision": r.Decision, "due": r.Due, "deposit": r.Deposit,
	}}, nil
}

// PutSettings saves user's settings.
func PutSettings(ctx context.Context, st *store.Store, user uuid.UUID, s Settings) error {
	return st.Q.NotificationSettingsPut(ctx, db.NotificationSettingsPutParams{
		UserID: user, Email: s.Email, Mention: s.Kinds["mention"], ReviewRequested: s.Kinds["review_requested"],
		Decision: s.Kinds["decision"], Due: s.Kinds["due"], Deposit: s.Kinds["deposit"],
	})
}

// Unsubscribe turns off what token names (a kind, or all email for the
// digest's token) and returns that kind; a token this server did not sign,
// or of a user who no longer exists, is store.ErrNotFound.
func Unsubscribe(ctx context.Context, st *store.Store, tokens Tokens, token string) (string, error) {
	user, kind, err := tokens.Verify(token)
	if err != nil {
		return "", store.ErrNotFound
	}
	var n int64
	switch {
	case kind == KindDigest:
		n, err = st.Q.NotificationEmailOff(ctx, user)
	case slices.Contains(Kinds, kind):
		n, err = st.Q.NotificationKindOff(ctx, db.NotificationKindOffParams{UserID: user, Kind: kind})
	}
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", store.ErrNotFound // the user is gone
	}
	return kind, nil
}
