package webhooks

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/directory"
	"creativeapi/internal/events"
	"creativeapi/internal/review"
)

// Owner is whose webhook endpoints a call manages (docs/events.md): an
// organization's, which its admins manage and which receive its creative
// events, or the platform's, which operators manage and which receive
// every user's deposit events. The admin API is one set of functions for
// both; only who may call them and which event types they take differ.
type Owner struct {
	// Organization is the owning organization; uuid.Nil for the platform.
	Organization uuid.UUID
}

// Platform is the owner of the platform's endpoints.
func Platform() Owner { return Owner{} }

// OrganizationOwner is the owner of org's endpoints.
func OrganizationOwner(org uuid.UUID) Owner { return Owner{Organization: org} }

// IsPlatform reports whether o is the platform.
func (o Owner) IsPlatform() bool { return o.Organization == uuid.Nil }

// id is the owner as webhook_endpoints.owner_id holds it.
func (o Owner) id() uuid.UUID { return o.Organization }

// Caller is who calls the admin API.
type Caller struct {
	User uuid.UUID
	// Operator: a platform operator (the session's flag).
	Operator bool
}

// ErrNotOperator: the platform's endpoints exist only for operators (the
// gate answers the 404 first; the service holds the rule too).
var ErrNotOperator = errors.New("webhooks: the platform's endpoints are for operators")

// authorize refuses a caller who may not manage o's endpoints: anyone but
// an admin of the organization (directory.ErrOrganizationNotVisible for a
// non-member, *review.Refusal for another role), anyone but an operator
// for the platform.
func (o Owner) authorize(ctx context.Context, q *db.Queries, who Caller) error {
	if o.IsPlatform() {
		if !who.Operator {
			return ErrNotOperator
		}
		return nil
	}
	role, err := directory.MemberRole(ctx, q, o.Organization, who.User)
	if err != nil {
		return err
	}
	return review.AuthorizeWebhooks(role)
}

// platformEventType is what a platform endpoint subscribes to:
// "deposit.*" (every deposit event, of any type added later too) or one
// deposit type. It is a shape, not a list, so a deposit type added later
// needs no change here (openapi.yaml's PlatformWebhookEventType).
var platformEventType = regexp.MustCompile(`^deposit\.(\*|[a-z][a-z_]{0,62})$`)

// checkEventTypes refuses what the schema lets through only by mistake: an
// empty list or a type o's endpoints do not carry.
func (o Owner) checkEventTypes(types []string) error {
	if len(types) == 0 {
		return errors.New("webhooks: no event type")
	}
	for _, t := range types {
		ok := slices.Contains(events.CreativeTypes, events.Type(t))
		if o.IsPlatform() {
			ok = platformEventType.MatchString(t)
		}
		if !ok {
			return fmt.Errorf("webhooks: %q is not an event type these webhooks carry", t)
		}
	}
	return nil
}
