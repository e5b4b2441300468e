package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

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
// internal/webhooks and back (docs/events.md, "The admin API").

func webhooksPath(org uuid.UUID) string {
	return fmt.Sprintf("/api/v1/organizations/%s/webhooks", org)
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
	return map[string]gate.BodyCheck{"createWebhookEndpoint": check, "updateWebhookEndpoint": check}
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
// resource (organizationProblem).
func webhookProblem(err error) error {
	switch {
	case errors.Is(err, webhooks.ErrEndpointNotVisible):
		return problem.New(http.StatusNotFound, problem.NotFound, "No webhook endpoint with this id is visible to you in this organization.")
	case urlFieldErrors(err) != nil:
		return problem.Invalid(urlFieldErrors(err))
	}
	return organizationProblem(err)
}

// ListWebhookEndpoints answers one page of an organization's endpoints.
func (s *Server) ListWebhookEndpoints(ctx context.Context, r api.ListWebhookEndpointsRequestObject) (api.ListWebhookEndpointsResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	size, after, err := page(webhookCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	p, err := webhooks.ListEndpoints(ctx, s.store.Q, r.OrganizationId, caller.UserID, position(after), size)
	if err != nil {
		return nil, webhookProblem(err)
	}
	return api.ListWebhookEndpoints200JSONResponse{Items: p.Items, NextCursor: nextCursor(webhookCursor, timeID(p.Next))}, nil
}

// CreateWebhookEndpoint adds an endpoint under the caller's
// Idempotency-Key; the answer is the only one that shows the secret.
func (s *Server) CreateWebhookEndpoint(ctx context.Context, r api.CreateWebhookEndpointRequestObject) (api.CreateWebhookEndpointResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	in := webhooks.NewEndpoint{URL: r.Body.Url, EventTypes: eventTypeNames(r.Body.EventTypes), Enabled: r.Body.Enabled == nil || *r.Body.Enabled}
	return s.command(ctx, r.Params.IdempotencyKey,
		// The stored answer holds the secret: only a caller who is still
		// an admin of the organization gets it again.
		func(ctx context.Context) error {
			if err := webhooks.MayManage(ctx, s.store.Q, r.OrganizationId, caller.UserID); err != nil {
				return webhookProblem(err)
			}
			return nil
		},
		func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
			ep, err := webhooks.CreateEndpoint(ctx, q.Queries, r.OrganizationId, caller.UserID, in, s.cfg.DevMode)
			if err != nil {
				return idempotency.Response{}, webhookProblem(err)
			}
			return idempotency.JSON(http.StatusCreated, ep, webhooksPath(r.OrganizationId)+"/"+ep.Id.String())
		})
}

// GetWebhookEndpoint answers one endpoint, without its secret.
func (s *Server) GetWebhookEndpoint(ctx context.Context, r api.GetWebhookEndpointRequestObject) (api.GetWebhookEndpointResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	ep, err := webhooks.GetEndpoint(ctx, s.store.Q, r.OrganizationId, r.WebhookId, caller.UserID)
	if err != nil {
		return nil, webhookProblem(err)
	}
	return api.GetWebhookEndpoint200JSONResponse(ep), nil
}

// UpdateWebhookEndpoint changes an endpoint in one transaction. It takes
// no Idempotency-Key: a repeat of an applied change changes nothing.
func (s *Server) UpdateWebhookEndpoint(ctx context.Context, r api.UpdateWebhookEndpointRequestObject) (api.UpdateWebhookEndpointResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	p := webhooks.Patch{URL: r.Body.Url, Enabled: r.Body.Enabled}
	if r.Body.EventTypes != nil {
		p.EventTypes = eventTypeNames(*r.Body.EventTypes)
	}
	var ep api.WebhookEndpoint
	err := s.store.InTx(ctx, func(q store.Tx) error {
		var err error
		ep, err = webhooks.UpdateEndpoint(ctx, q.Queries, r.OrganizationId, r.WebhookId, caller.UserID, p, s.cfg.DevMode)
		return err
	})
	if err != nil {
		return nil, webhookProblem(err)
	}
	return api.UpdateWebhookEndpoint200JSONResponse(ep), nil
}

// DeleteWebhookEndpoint removes an endpoint with its deliveries.
func (s *Server) DeleteWebhookEndpoint(ctx context.Context, r api.DeleteWebhookEndpointRequestObject) (api.DeleteWebhookEndpointResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	if err := webhooks.DeleteEndpoint(ctx, s.store.Q, r.OrganizationId, r.WebhookId, caller.UserID); err != nil {
		return nil, webhookProblem(err)
	}
	return api.DeleteWebhookEndpoint204Response{}, nil
}

// ListWebhookDeliveries answers one page of an endpoint's deliveries, each
// with its attempts.
func (s *Server) ListWebhookDeliveries(ctx context.Context, r api.ListWebhookDeliveriesRequestObject) (api.ListWebhookDeliveriesResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	size, after, err := page(deliveryCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	p, err := webhooks.ListDeliveries(ctx, s.store.Q, r.OrganizationId, r.WebhookId, caller.UserID, position(after), size)
	if err != nil {
		return nil, webhookProblem(err)
	}
	return api.ListWebhookDeliveries200JSONResponse{Items: p.Items, NextCursor: nextCursor(deliveryCursor, timeID(p.Next))}, nil
}

func eventTypeNames(types []api.WebhookEventType) []string {
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

// RotateWebhookSecret gives an endpoint a new signing secret, shown once;
// the previous one signs beside it for webhooks.SecretOverlap.
func (s *Server) RotateWebhookSecret(ctx context.Context, r api.RotateWebhookSecretRequestObject) (api.RotateWebhookSecretResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	var rotation api.WebhookSecretRotation
	err := s.store.InTx(ctx, func(q store.Tx) error {
		var err error
		rotation, err = webhooks.RotateSecret(ctx, q.Queries, r.OrganizationId, r.WebhookId, caller.UserID, time.Now())
		return err
	})
	if err != nil {
		return nil, webhookProblem(err)
	}
	return api.RotateWebhookSecret200JSONResponse(rotation), nil
}
