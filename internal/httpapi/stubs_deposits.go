package httpapi

import (
	"context"

	"creativeapi/gen/api"
)

// Placeholders: replaced by the deposits handlers.

func (s *Server) GetAccountBalance(ctx context.Context, r api.GetAccountBalanceRequestObject) (api.GetAccountBalanceResponseObject, error) {
	return nil, errNotImplemented
}

func (s *Server) ListAccountDeposits(ctx context.Context, r api.ListAccountDepositsRequestObject) (api.ListAccountDepositsResponseObject, error) {
	return nil, errNotImplemented
}

func (s *Server) CreateAccountDeposit(ctx context.Context, r api.CreateAccountDepositRequestObject) (api.CreateAccountDepositResponseObject, error) {
	return nil, errNotImplemented
}

func (s *Server) GetAccountDeposit(ctx context.Context, r api.GetAccountDepositRequestObject) (api.GetAccountDepositResponseObject, error) {
	return nil, errNotImplemented
}

func (s *Server) depositBodyChecks() map[string]BodyCheck { return nil }
