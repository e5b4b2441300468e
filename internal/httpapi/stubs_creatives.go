package httpapi

import (
	"context"

	"creativeapi/gen/api"
)

// Placeholders: replaced by the creatives handlers.

func (s *Server) ListCreatives(ctx context.Context, r api.ListCreativesRequestObject) (api.ListCreativesResponseObject, error) {
	return nil, errNotImplemented
}

func (s *Server) GetCreative(ctx context.Context, r api.GetCreativeRequestObject) (api.GetCreativeResponseObject, error) {
	return nil, errNotImplemented
}

func (s *Server) ExecuteCreativeAction(ctx context.Context, r api.ExecuteCreativeActionRequestObject) (api.ExecuteCreativeActionResponseObject, error) {
	return nil, errNotImplemented
}

func (s *Server) creativeBodyChecks() map[string]BodyCheck { return nil }
