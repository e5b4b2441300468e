package httpapi

import (
	"context"

	"creativeapi/gen/api"
)

// Placeholders: replaced by the auth handlers.

func (s *Server) SignIn(ctx context.Context, r api.SignInRequestObject) (api.SignInResponseObject, error) {
	return nil, errNotImplemented
}

func (s *Server) SignOut(ctx context.Context, r api.SignOutRequestObject) (api.SignOutResponseObject, error) {
	return nil, errNotImplemented
}

func (s *Server) GetMe(ctx context.Context, r api.GetMeRequestObject) (api.GetMeResponseObject, error) {
	return nil, errNotImplemented
}
