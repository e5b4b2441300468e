package httpapi

import (
	"context"

	"creativeapi/gen/api"
	"creativeapi/internal/email"
	"creativeapi/internal/requestctx"
)

// GetNotificationSettings answers the caller's email settings.
func (s *Server) GetNotificationSettings(ctx context.Context, _ api.GetNotificationSettingsRequestObject) (api.GetNotificationSettingsResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	st, err := email.GetSettings(ctx, s.store, caller.UserID)
	if err != nil {
		return nil, err
	}
	return api.GetNotificationSettings200JSONResponse{Body: settingsBody(st)}, nil
}

// PutNotificationSettings saves the caller's email settings.
func (s *Server) PutNotificationSettings(ctx context.Context, req api.PutNotificationSettingsRequestObject) (api.PutNotificationSettingsResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	k := req.Body.Kinds
	st := email.Settings{Email: string(req.Body.Email), Kinds: map[string]bool{
		"mention": k.Mention, "review_requested": k.ReviewRequested, "decision": k.Decision, "due": k.Due, "deposit": k.Deposit,
	}}
	if err := email.PutSettings(ctx, s.store, caller.UserID, st); err != nil {
		return nil, err
	}
	return api.PutNotificationSettings200JSONResponse{Body: settingsBody(st)}, nil
}

// Unsubscribe turns off the kind its token names (RFC 8058 one-click);
// a bad token is the Problem writer's 404.
func (s *Server) Unsubscribe(ctx context.Context, req api.UnsubscribeRequestObject) (api.UnsubscribeResponseObject, error) {
	kind, err := email.Unsubscribe(ctx, s.store, email.NewTokens(s.cfg.UnsubscribeSecret), req.Params.Token)
	if err != nil {
		return nil, err
	}
	return api.Unsubscribe200JSONResponse{Body: api.Unsubscribed{Kind: api.UnsubscribedKind(kind)}}, nil
}

func settingsBody(st email.Settings) api.NotificationSettings {
	var b api.NotificationSettings
	b.Email = api.NotificationSettingsEmail(st.Email)
	b.Kinds.Mention, b.Kinds.ReviewRequested, b.Kinds.Decision = st.Kinds["mention"], st.Kinds["review_requested"], st.Kinds["decision"]
	b.Kinds.Due, b.Kinds.Deposit = st.Kinds["due"], st.Kinds["deposit"]
	return b
}
