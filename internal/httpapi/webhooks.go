package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/internal/cursor"
	"creativeapi/internal/gate"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
	"creativeapi/internal/webhooks"
)

// The webhook handlers translate HTTP to the admin functions of
// internal/webhooks and back (docs/events.md, "The admin API"). An
// organization's endpoints and the platform's (the operator API) are one
// set of handlers parametrised by the owner (webhooks.Owner); the
// generated handlers of each only name the owner and wrap the answer in
// their operation's type.

// webhooksPath is the collection of owner's endpoints.
func webhooksPath(owner webhooks.Owner) string {
	if owner.IsPlatform() {
		return "/api/v1/operator/webhooks"
	}
	return fmt.Sprintf("/api/v1/organizations/%s/webhooks", owner.Organization)
}

// hookCaller is the request's caller as the webhook functions know it.
func hookCaller(ctx context.Context) webhooks.Caller {
	caller, _ := requestctx.CallerFrom(ctx)
	return webhooks.Caller{User: caller.UserID, Operator: caller.Operator}
}

// webhookBodyChecks reports a refused url with the schema's errors, in one
// 422: webhooks.CheckURL, as the service checks it again.
func (s *Server) webhookBodyChecks() map[string]gate.BodyCheck {
	check := func(body any) []problem.FieldError {
		req, _ := body.(map[string]any)
		url, ok := req["url"].(string)
		if !ok {
			return nil // absent or not a string: the schema's to report
		}
		return urlFieldErrors(webhooks.CheckURL(url, s.cfg.DevMode))
	}
	return map[string]gate.BodyCheck{
		"createWebhookEndpoint": check, "updateWebhookEndpoint": check,
		"createPlatformWebhookEndpoint": check, "updatePlatformWebhookEndpoint": check,
	}
}

// urlFieldErrors is a refused url as the field error of a 422.
func urlFieldErrors(err error) []problem.FieldError {
	var urlErr *webhooks.URLError
	if !errors.As(err, &urlErr) {
		return nil
	}
	return []problem.FieldError{{Field: "url", Code: problem.InvalidValue, Message: urlErr.Reason}}
}

// webhookProblem turns the admin functions' refusals into Problems; the
// organization and the role are answered as for every organization
// resource (organizationProblem), a caller who is not an operator as the
// operator API answers them (the 404 of a path that does not exist).
func webhookProblem(err error) error {
	switch {
	case errors.Is(err, webhooks.ErrEndpointNotVisible):
		return problem.New(http.StatusNotFound, problem.NotFound, "No webhook endpoint with this id is visible to you.")
	case errors.Is(err, webhooks.ErrDeliveryNotVisible):
		return problem.New(http.StatusNotFound, problem.NotFound, "No delivery with this id is visible to you at this webhook endpoint.")
	case errors.Is(err, webhooks.ErrNotOperator):
		return store.ErrNotFound
	case urlFieldErrors(err) != nil:
		return problem.Invalid(urlFieldErrors(err))
	}
	return organizationProblem(err)
}

// listEndpoints answers one page of owner's endpoints.
func (s *Server) listEndpoints(ctx context.Context, owner webhooks.Owner, limit *api.Limit, cur *api.Cursor) ([]api.WebhookEndpoint, nullable.Nullable[string], error) {
	size, after, err := page(webhookCursor, limit, cur)
	if err != nil {
		return nil, nil, err
	}
	p, err := webhooks.ListEndpoints(ctx, s.store.Q, owner, hookCaller(ctx), position(after), size)
	if err != nil {
		return nil, nil, webhookProblem(err)
	}
	return p.Items, nextCursor(webhookCursor, timeID(p.Next)), nil
}

// createEndpoint adds an endpoint of owner under the caller's
// Idempotency-Key; the answer is the only one that shows the secret.
func (s *Server) createEndpoint(ctx context.Context, owner webhooks.Owner, key *string, in webhooks.NewEndpoint) (rawJSON, error) {
	who := hookCaller(ctx)
	return s.command(ctx, key,
		// The stored answer holds the secret: only a caller who may still
		// manage the owner's endpoints gets it again.
		func(ctx context.Context) error {
			if err := webhooks.MayManage(ctx, s.store.Q, owner, who); err != nil {
				return webhookProblem(err)
			}
			return nil
		},
		func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
			ep, err := webhooks.CreateEndpoint(ctx, q.Queries, owner, who, in, s.cfg.DevMode)
			if err != nil {
				return idempotency.Response{}, webhookProblem(err)
			}
			if owner.IsPlatform() {
				return idempotency.JSON(http.StatusCreated, webhooks.NewPlatformEndpoint(ep), webhooksPath(owner)+"/"+ep.Id.String())
			}
			return idempotency.JSON(http.StatusCreated, ep, webhooksPath(owner)+"/"+ep.Id.String())
		})
}

// getEndpoint answers one endpoint of owner, without its secret.
func (s *Server) getEndpoint(ctx context.Context, owner webhooks.Owner, id uuid.UUID) (api.WebhookEndpoint, error) {
	ep, err := webhooks.GetEndpoint(ctx, s.store.Q, owner, hookCaller(ctx), id)
	if err != nil {
		return api.WebhookEndpoint{}, webhookProblem(err)
	}
	return ep, nil
}

// updateEndpoint changes an endpoint of owner in one transaction. It
// takes no Idempotency-Key: a repeat of an applied change changes nothing.
func (s *Server) updateEndpoint(ctx context.Context, owner webhooks.Owner, id uuid.UUID, p webhooks.Patch) (api.WebhookEndpoint, error) {
	var ep api.WebhookEndpoint
	err := s.store.InTx(ctx, func(q store.Tx) error {
		var err error
		ep, err = webhooks.UpdateEndpoint(ctx, q.Queries, owner, hookCaller(ctx), id, p, s.cfg.DevMode)
		return err
	})
	if err != nil {
		return api.WebhookEndpoint{}, webhookProblem(err)
	}
	return ep, nil
}

// deleteEndpoint removes an endpoint of owner with its deliveries.
func (s *Server) deleteEndpoint(ctx context.Context, owner webhooks.Owner, id uuid.UUID) error {
	if err := webhooks.DeleteEndpoint(ctx, s.store.Q, owner, hookCaller(ctx), id); err != nil {
		return webhookProblem(err)
	}
	return nil
}

// listDeliveries answers one page of an endpoint's deliveries, each with
// its attempts.
func (s *Server) listDeliveries(ctx context.Context, owner webhooks.Owner, id uuid.UUID, limit *api.Limit, cur *api.Cursor) (api.WebhookDeliveryList, error) {
	size, after, err := page(deliveryCursor, limit, cur)
	if err != nil {
		return api.WebhookDeliveryList{}, err
	}
	p, err := webhooks.ListDeliveries(ctx, s.store.Q, owner, hookCaller(ctx), id, position(after), size)
	if err != nil {
		return api.WebhookDeliveryList{}, webhookProblem(err)
	}
	return api.WebhookDeliveryList{Items: p.Items, NextCursor: nextCursor(deliveryCursor, timeID(p.Next))}, nil
}

// rotateSecret gives an endpoint of owner a new signing secret, shown
// once; the previous one signs beside it for webhooks.SecretOverlap.
func (s *Server) rotateSecret(ctx context.Context, owner webhooks.Owner, id uuid.UUID) (api.WebhookSecretRotation, error) {
	var rotation api.WebhookSecretRotation
	err := s.store.InTx(ctx, func(q store.Tx) error {
		var err error
		rotation, err = webhooks.RotateSecret(ctx, q.Queries, owner, hookCaller(ctx), id, time.Now())
		return err
	})
	if err != nil {
		return api.WebhookSecretRotation{}, webhookProblem(err)
	}
	return rotation, nil
}

// sendTest queues a signed webhook.test delivery to an endpoint of owner.
func (s *Server) sendTest(ctx context.Context, owner webhooks.Owner, id uuid.UUID) (api.WebhookDelivery, error) {
	d, err := s.hooks.SendTest(ctx, owner, hookCaller(ctx), id, time.Now())
	if err != nil {
		return api.WebhookDelivery{}, webhookProblem(err)
	}
	return d, nil
}

// redeliver queues a finished delivery of an endpoint of owner again.
func (s *Server) redeliver(ctx context.Context, owner webhooks.Owner, id, delivery uuid.UUID) (api.WebhookDelivery, error) {
	d, err := s.hooks.Redeliver(ctx, owner, hookCaller(ctx), id, delivery)
	if err != nil {
		return api.WebhookDelivery{}, webhookProblem(err)
	}
	return d, nil
}

func eventTypeNames[T ~string](types []T) []string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	return names
}

// position is a cursor's position as the webhook lists read it; nil for
// the first page.
func position(at cursor.TimeID) *webhooks.Position {
	if at == (cursor.TimeID{}) {
		return nil
	}
	return &webhooks.Position{At: at.At, ID: at.ID}
}

// timeID is a webhook list's next position as its cursor holds it.
func timeID(next *webhooks.Position) cursor.TimeID {
	if next == nil {
		return cursor.TimeID{}
	}
	return cursor.TimeID{At: next.At, ID: next.ID}
}

// The organization's endpoints (admins).

func (s *Server) ListWebhookEndpoints(ctx context.Context, r api.ListWebhookEndpointsRequestObject) (api.ListWebhookEndpointsResponseObject, error) {
	items, next, err := s.listEndpoints(ctx, webhooks.OrganizationOwner(r.OrganizationId), r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	return api.ListWebhookEndpoints200JSONResponse{Body: api.WebhookEndpointList{Items: items, NextCursor: next}}, nil
}

func (s *Server) CreateWebhookEndpoint(ctx context.Context, r api.CreateWebhookEndpointRequestObject) (api.CreateWebhookEndpointResponseObject, error) {
	in := webhooks.NewEndpoint{URL: r.Body.Url, EventTypes: eventTypeNames(r.Body.EventTypes), Enabled: r.Body.Enabled == nil || *r.Body.Enabled}
	return s.createEndpoint(ctx, webhooks.OrganizationOwner(r.OrganizationId), r.Params.IdempotencyKey, in)
}

func (s *Server) GetWebhookEndpoint(ctx context.Context, r api.GetWebhookEndpointRequestObject) (api.GetWebhookEndpointResponseObject, error) {
	ep, err := s.getEndpoint(ctx, webhooks.OrganizationOwner(r.OrganizationId), r.WebhookId)
	if err != nil {
		return nil, err
	}
	return api.GetWebhookEndpoint200JSONResponse{Body: ep}, nil
}

func (s *Server) UpdateWebhookEndpoint(ctx context.Context, r api.UpdateWebhookEndpointRequestObject) (api.UpdateWebhookEndpointResponseObject, error) {
	p := webhooks.Patch{URL: r.Body.Url, Enabled: r.Body.Enabled}
	if r.Body.EventTypes != nil {
		p.EventTypes = eventTypeNames(*r.Body.EventTypes)
	}
	ep, err := s.updateEndpoint(ctx, webhooks.OrganizationOwner(r.OrganizationId), r.WebhookId, p)
	if err != nil {
		return nil, err
	}
	return api.UpdateWebhookEndpoint200JSONResponse{Body: ep}, nil
}

func (s *Server) DeleteWebhookEndpoint(ctx context.Context, r api.DeleteWebhookEndpointRequestObject) (api.DeleteWebhookEndpointResponseObject, error) {
	if err := s.deleteEndpoint(ctx, webhooks.OrganizationOwner(r.OrganizationId), r.WebhookId); err != nil {
		return nil, err
	}
	return api.DeleteWebhookEndpoint204Response{}, nil
}

func (s *Server) ListWebhookDeliveries(ctx context.Context, r api.ListWebhookDeliveriesRequestObject) (api.ListWebhookDeliveriesResponseObject, error) {
	list, err := s.listDeliveries(ctx, webhooks.OrganizationOwner(r.OrganizationId), r.WebhookId, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	return api.ListWebhookDeliveries200JSONResponse{Body: list}, nil
}

func (s *Server) RotateWebhookSecret(ctx context.Context, r api.RotateWebhookSecretRequestObject) (api.RotateWebhookSecretResponseObject, error) {
	rotation, err := s.rotateSecret(ctx, webhooks.OrganizationOwner(r.OrganizationId), r.WebhookId)
	if err != nil {
		return nil, err
	}
	return api.RotateWebhookSecret200JSONResponse{Body: rotation}, nil
}

func (s *Server) SendWebhookTest(ctx context.Context, r api.SendWebhookTestRequestObject) (api.SendWebhookTestResponseObject, error) {
	d, err := s.sendTest(ctx, webhooks.OrganizationOwner(r.OrganizationId), r.WebhookId)
	if err != nil {
		return nil, err
	}
	return api.SendWebhookTest202JSONResponse{Body: d}, nil
}

func (s *Server) RedeliverWebhookDelivery(ctx context.Context, r api.RedeliverWebhookDeliveryRequestObject) (api.RedeliverWebhookDeliveryResponseObject, error) {
	d, err := s.redeliver(ctx, webhooks.OrganizationOwner(r.OrganizationId), r.WebhookId, r.DeliveryId)
	if err != nil {
		return nil, err
	}
	return api.RedeliverWebhookDelivery202JSONResponse{Body: d}, nil
}

// The platform's endpoints (operators; the gate answers anyone else the
// 404 of x-operator-only).

func (s *Server) ListPlatformWebhookEndpoints(ctx context.Context, r api.ListPlatformWebhookEndpointsRequestObject) (api.ListPlatformWebhookEndpointsResponseObject, error) {
	items, next, err := s.listEndpoints(ctx, webhooks.Platform(), r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	out := api.ListPlatformWebhookEndpoints200JSONResponse{Body: api.PlatformWebhookEndpointList{Items: make([]api.PlatformWebhookEndpoint, len(items)), NextCursor: next}}
	for i, ep := range items {
		out.Body.Items[i] = webhooks.PlatformEndpoint(ep)
	}
	return out, nil
}

func (s *Server) CreatePlatformWebhookEndpoint(ctx context.Context, r api.CreatePlatformWebhookEndpointRequestObject) (api.CreatePlatformWebhookEndpointResponseObject, error) {
	in := webhooks.NewEndpoint{URL: r.Body.Url, EventTypes: r.Body.EventTypes, Enabled: r.Body.Enabled == nil || *r.Body.Enabled}
	return s.createEndpoint(ctx, webhooks.Platform(), r.Params.IdempotencyKey, in)
}

func (s *Server) GetPlatformWebhookEndpoint(ctx context.Context, r api.GetPlatformWebhookEndpointRequestObject) (api.GetPlatformWebhookEndpointResponseObject, error) {
	ep, err := s.getEndpoint(ctx, webhooks.Platform(), r.WebhookId)
	if err != nil {
		return nil, err
	}
	return api.GetPlatformWebhookEndpoint200JSONResponse{Body: webhooks.PlatformEndpoint(ep)}, nil
}

func (s *Server) UpdatePlatformWebhookEndpoint(ctx context.Context, r api.UpdatePlatformWebhookEndpointRequestObject) (api.UpdatePlatformWebhookEndpointResponseObject, error) {
	p := webhooks.Patch{URL: r.Body.Url, Enabled: r.Body.Enabled}
	if r.Body.EventTypes != nil {
		p.EventTypes = *r.Body.EventTypes
	}
	ep, err := s.updateEndpoint(ctx, webhooks.Platform(), r.WebhookId, p)
	if err != nil {
		return nil, err
	}
	return api.UpdatePlatformWebhookEndpoint200JSONResponse{Body: webhooks.PlatformEndpoint(ep)}, nil
}

func (s *Server) DeletePlatformWebhookEndpoint(ctx context.Context, r api.DeletePlatformWebhookEndpointRequestObject) (api.DeletePlatformWebhookEndpointResponseObject, error) {
	if err := s.deleteEndpoint(ctx, webhooks.Platform(), r.WebhookId); err != nil {
		return nil, err
	}
	return api.DeletePlatformWebhookEndpoint204Response{}, nil
}

func (s *Server) ListPlatformWebhookDeliveries(ctx context.Context, r api.ListPlatformWebhookDeliveriesRequestObject) (api.ListPlatformWebhookDeliveriesResponseObject, error) {
	list, err := s.listDeliveries(ctx, webhooks.Platform(), r.WebhookId, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	return api.ListPlatformWebhookDeliveries200JSONResponse{Body: list}, nil
}

func (s *Server) RotatePlatformWebhookSecret(ctx context.Context, r api.RotatePlatformWebhookSecretRequestObject) (api.RotatePlatformWebhookSecretResponseObject, error) {
	rotation, err := s.rotateSecret(ctx, webhooks.Platform(), r.WebhookId)
	if err != nil {
		return nil, err
	}
	return api.RotatePlatformWebhookSecret200JSONResponse{Body: rotation}, nil
}

func (s *Server) SendPlatformWebhookTest(ctx context.Context, r api.SendPlatformWebhookTestRequestObject) (api.SendPlatformWebhookTestResponseObject, error) {
	d, err := s.sendTest(ctx, webhooks.Platform(), r.WebhookId)
	if err != nil {
		return nil, err
	}
	return api.SendPlatformWebhookTest202JSONResponse{Body: d}, nil
}

func (s *Server) RedeliverPlatformWebhookDelivery(ctx context.Context, r api.RedeliverPlatformWebhookDeliveryRequestObject) (api.RedeliverPlatformWebhookDeliveryResponseObject, error) {
	d, err := s.redeliver(ctx, webhooks.Platform(), r.WebhookId, r.DeliveryId)
	if err != nil {
		return nil, err
	}
	return api.RedeliverPlatformWebhookDelivery202JSONResponse{Body: d}, nil
}

func (r rawJSON) VisitCreatePlatformWebhookEndpointResponse(w http.ResponseWriter) error {
	return r.write(w)
}
