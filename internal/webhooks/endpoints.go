package webhooks

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/cursor"
	"creativeapi/internal/store"
)

// The admin API of webhook endpoints (docs/events.md, "The admin API"):
// each function checks that the caller may manage the owner's endpoints
// (Owner.authorize: an admin of the organization, an operator for the
// platform) before it reads or writes anything of them, so anyone else
// learns nothing but the refusal. Refusals:
// directory.ErrOrganizationNotVisible (not a member, or no such
// organization), *review.Refusal (not an admin), ErrNotOperator,
// ErrEndpointNotVisible, *URLError (the url).

// ErrEndpointNotVisible: no endpoint with this id of this owner.
var ErrEndpointNotVisible = errors.New("webhook endpoint not visible")

// NewEndpoint is what an admin sends to add an endpoint.
type NewEndpoint struct {
	URL        string
	EventTypes []string
	Enabled    bool
}

// Patch is a change of an endpoint; nil fields stay as they are.
type Patch struct {
	URL        *string
	EventTypes []string
	Enabled    *bool
}

// Position is where a page continues: after the row with this time and id.
type Position struct {
	At time.Time
	ID uuid.UUID
}

// EndpointPage is one page of endpoints, newest first; Next is nil on the
// last page.
type EndpointPage struct {
	Items []api.WebhookEndpoint
	Next  *Position
}

// DeliveryPage is one page of an endpoint's deliveries, newest first.
type DeliveryPage struct {
	Items []api.WebhookDelivery
	Next  *Position
}

// MayManage refuses who unless they may manage owner's endpoints (for an
// organization: 404 when not a member, 403 for another role): a replayed
// creation goes only to them.
func MayManage(ctx context.Context, q *db.Queries, owner Owner, who Caller) error {
	return owner.authorize(ctx, q, who)
}

// CreateEndpoint adds an endpoint with a new signing secret, the only
// answer that carries it.
func CreateEndpoint(ctx context.Context, q *db.Queries, owner Owner, who Caller, in NewEndpoint, allowPrivate bool) (api.NewWebhookEndpoint, error) {
	if err := owner.authorize(ctx, q, who); err != nil {
		return api.NewWebhookEndpoint{}, err
	}
	if err := CheckURL(in.URL, allowPrivate); err != nil {
		return api.NewWebhookEndpoint{}, err
	}
	if err := owner.checkEventTypes(in.EventTypes); err != nil {
		return api.NewWebhookEndpoint{}, err
	}
	ep, err := q.WebhookEndpointCreate(ctx, db.WebhookEndpointCreateParams{
		OwnerID: owner.id(), Url: in.URL, EventTypes: in.EventTypes, Enabled: in.Enabled, Secret: NewSecret(),
	})
	if err != nil {
		return api.NewWebhookEndpoint{}, err
	}
	b := endpointBody(ep)
	return api.NewWebhookEndpoint{
		Id: b.Id, Url: b.Url, EventTypes: b.EventTypes, Enabled: b.Enabled, DisabledReason: b.DisabledReason,
		CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt, Secret: ep.Secret,
	}, nil
}

// ListEndpoints reads one page of owner's endpoints, newest first.
func ListEndpoints(ctx context.Context, q *db.Queries, owner Owner, who Caller, after *Position, limit int) (EndpointPage, error) {
	if err := owner.authorize(ctx, q, who); err != nil {
		return EndpointPage{}, err
	}
	params := db.WebhookEndpointPageParams{OwnerID: owner.id(), RowLimit: cursor.Over(limit)}
	if after != nil {
		params.CursorCreatedAt, params.CursorID = &after.At, &after.ID
	}
	rows, err := q.WebhookEndpointPage(ctx, params)
	if err != nil {
		return EndpointPage{}, err
	}
	rows, more := cursor.Trim(rows, limit)
	page := EndpointPage{Items: make([]api.WebhookEndpoint, len(rows))}
	for i, ep := range rows {
		page.Items[i] = endpointBody(ep)
	}
	if more {
		last := rows[len(rows)-1]
		page.Next = &Position{At: last.CreatedAt, ID: last.ID}
	}
	return page, nil
}

// GetEndpoint reads one endpoint of owner.
func GetEndpoint(ctx context.Context, q *db.Queries, owner Owner, who Caller, id uuid.UUID) (api.WebhookEndpoint, error) {
	if err := owner.authorize(ctx, q, who); err != nil {
		return api.WebhookEndpoint{}, err
	}
	ep, err := q.WebhookEndpointGet(ctx, db.WebhookEndpointGetParams{ID: id, OwnerID: owner.id()})
	if err != nil {
		return api.WebhookEndpoint{}, endpointNotVisible(err)
	}
	return endpointBody(ep), nil
}

// UpdateEndpoint applies p to an endpoint of owner; q must be a
// transaction (the endpoint is locked from the read to the write). A patch
// that changes nothing writes nothing.
func UpdateEndpoint(ctx context.Context, q *db.Queries, owner Owner, who Caller, id uuid.UUID, p Patch, allowPrivate bool) (api.WebhookEndpoint, error) {
	if err := owner.authorize(ctx, q, who); err != nil {
		return api.WebhookEndpoint{}, err
	}
	if p.URL != nil {
		if err := CheckURL(*p.URL, allowPrivate); err != nil {
			return api.WebhookEndpoint{}, err
		}
	}
	if p.EventTypes != nil {
		if err := owner.checkEventTypes(p.EventTypes); err != nil {
			return api.WebhookEndpoint{}, err
		}
	}
	ep, err := q.WebhookEndpointLock(ctx, db.WebhookEndpointLockParams{ID: id, OwnerID: owner.id()})
	if err != nil {
		return api.WebhookEndpoint{}, endpointNotVisible(err)
	}
	next, changed := Apply(ep, p)
	if changed {
		ep, err = q.WebhookEndpointUpdate(ctx, db.WebhookEndpointUpdateParams{
			ID: id, Url: next.Url, EventTypes: next.EventTypes, Enabled: next.Enabled, DisabledReason: next.DisabledReason,
		})
		if err != nil {
			return api.WebhookEndpoint{}, err
		}
	}
	return endpointBody(ep), nil
}

// Apply is the endpoint after p, and whether anything changed. Turning an
// endpoint on clears why the service turned it off (a receiver that
// answered 410 and is back); turning it off keeps that reason.
func Apply(ep db.WebhookEndpoint, p Patch) (db.WebhookEndpoint, bool) {
	next := ep
	if p.URL != nil {
		next.Url = *p.URL
	}
	if p.EventTypes != nil {
		next.EventTypes = p.EventTypes
	}
	if p.Enabled != nil {
		next.Enabled = *p.Enabled
		if next.Enabled {
			next.DisabledReason = nil
		}
	}
	changed := next.Url != ep.Url || !slices.Equal(next.EventTypes, ep.EventTypes) || next.Enabled != ep.Enabled ||
		(next.DisabledReason == nil) != (ep.DisabledReason == nil)
	return next, changed
}

// DeleteEndpoint removes an endpoint of owner with its deliveries and
// their attempts. A job of a delivery that is gone ends without an attempt.
func DeleteEndpoint(ctx context.Context, q *db.Queries, owner Owner, who Caller, id uuid.UUID) error {
	if err := owner.authorize(ctx, q, who); err != nil {
		return err
	}
	n, err := q.WebhookEndpointDelete(ctx, db.WebhookEndpointDeleteParams{ID: id, OwnerID: owner.id()})
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrEndpointNotVisible
	}
	return nil
}

// ListDeliveries reads one page of an endpoint's deliveries, newest
// first, each with its attempts, in three queries whatever the page holds.
func ListDeliveries(ctx context.Context, q *db.Queries, owner Owner, who Caller, id uuid.UUID, after *Position, limit int) (DeliveryPage, error) {
	if err := owner.authorize(ctx, q, who); err != nil {
		return DeliveryPage{}, err
	}
	if _, err := q.WebhookEndpointGet(ctx, db.WebhookEndpointGetParams{ID: id, OwnerID: owner.id()}); err != nil {
		return DeliveryPage{}, endpointNotVisible(err)
	}
	params := db.WebhookDeliveryListParams{EndpointID: id, RowLimit: cursor.Over(limit)}
	if after != nil {
		params.CursorCreatedAt, params.CursorID = &after.At, &after.ID
	}
	rows, err := q.WebhookDeliveryList(ctx, params)
	if err != nil {
		return DeliveryPage{}, err
	}
	var page DeliveryPage
	rows, more := cursor.Trim(rows, limit)
	if more {
		last := rows[len(rows)-1]
		page.Next = &Position{At: last.CreatedAt, ID: last.ID}
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	attempts, err := q.WebhookAttemptsForDeliveries(ctx, ids)
	if err != nil {
		return DeliveryPage{}, err
	}
	logs := make(map[uuid.UUID][]db.WebhookDeliveryAttempt, len(rows))
	for _, a := range attempts {
		logs[a.DeliveryID] = append(logs[a.DeliveryID], a)
	}
	page.Items = make([]api.WebhookDelivery, len(rows))
	for i, r := range rows {
		d := db.WebhookDelivery{ID: r.ID, EndpointID: r.EndpointID, EventID: r.EventID, EventType: r.EventType, Status: r.Status,
			Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt, MessageID: r.MessageID}
		page.Items[i] = deliveryBody(d, r.EventSeq, logs[r.ID])
	}
	return page, nil
}

// endpointNotVisible turns a missing row into ErrEndpointNotVisible.
func endpointNotVisible(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return ErrEndpointNotVisible
	}
	return err
}

// SecretOverlap is how long a rotated-out secret keeps signing beside the
// new one, so a receiver can switch at its own pace.
const SecretOverlap = 24 * time.Hour

// RotateSecret gives an endpoint of owner a new signing secret; q must be
// a transaction. The secret it replaces signs beside it for SecretOverlap
// (a second rotation within it drops the oldest).
func RotateSecret(ctx context.Context, q *db.Queries, owner Owner, who Caller, id uuid.UUID, now time.Time) (api.WebhookSecretRotation, error) {
	if err := owner.authorize(ctx, q, who); err != nil {
		return api.WebhookSecretRotation{}, err
	}
	if _, err := q.WebhookEndpointLock(ctx, db.WebhookEndpointLockParams{ID: id, OwnerID: owner.id()}); err != nil {
		return api.WebhookSecretRotation{}, endpointNotVisible(err)
	}
	ep, err := q.WebhookEndpointRotateSecret(ctx, db.WebhookEndpointRotateSecretParams{
		ID: id, Secret: NewSecret(), PreviousUntil: now.Add(SecretOverlap),
	})
	if err != nil {
		return api.WebhookSecretRotation{}, err
	}
	return api.WebhookSecretRotation{Secret: ep.Secret, PreviousSecretExpiresAt: ep.PreviousSecretUntil.UTC()}, nil
}
