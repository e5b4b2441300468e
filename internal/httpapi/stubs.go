package httpapi

import (
	"context"
	"errors"

	"creativeapi/gen/api"
)

// Placeholders replaced by each resource's handler file.
var errNotImplemented = errors.New("not implemented")

func (s *Server) SignIn(ctx context.Context, r api.SignInRequestObject) (api.SignInResponseObject, error) {
	return nil, errNotImplemented
}
func (s *Server) SignOut(ctx context.Context, r api.SignOutRequestObject) (api.SignOutResponseObject, error) {
	return nil, errNotImplemented
}
func (s *Server) GetMe(ctx context.Context, r api.GetMeRequestObject) (api.GetMeResponseObject, error) {
	return nil, errNotImplemented
}
func (s *Server) ListCreatives(ctx context.Context, r api.ListCreativesRequestObject) (api.ListCreativesResponseObject, error) {
	return nil, errNotImplemented
}
func (s *Server) GetCreative(ctx context.Context, r api.GetCreativeRequestObject) (api.GetCreativeResponseObject, error) {
	return nil, errNotImplemented
}
func (s *Server) ExecuteCreativeAction(ctx context.Context, r api.ExecuteCreativeActionRequestObject) (api.ExecuteCreativeActionResponseObject, error) {
	return nil, errNotImplemented
}
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
