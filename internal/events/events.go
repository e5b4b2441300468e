// Package events is the transactional outbox (docs/events.md): every state
// change writes its event with Write, in the transaction of the change; the
// Publisher gives committed events their place in the published order and
// hands them on (webhook deliveries, live streams).
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
)

// Type is an event type (docs/events.md lists which change writes which).
type Type string

// The event types. Creative events belong to an organization (webhooks and
// the organization's members' streams); deposit events to their owner.
const (
	CreativeCreated          Type = "creative.created"
	CreativeVersionAdded     Type = "creative.version_added"
	CreativeUpdated          Type = "creative.updated"
	CreativeSubmitted        Type = "creative.submitted"
	CreativeChangesRequested Type = "creative.changes_requested"
	CreativeApproved         Type = "creative.approved"
	CreativeArchived         Type = "creative.archived"
	// CreativeDecisionRecorded is one person's decision in a stage of a
	// review plan; CreativeStageApproved a stage whose rule held.
	CreativeDecisionRecorded Type = "creative.decision_recorded"
	CreativeStageApproved    Type = "creative.stage_approved"
	// CreativeStageDueSoon and CreativeStageOverdue announce an active
	// stage a day before its due date and at it, once per stage and round.
	CreativeStageDueSoon    Type = "creative.stage_due_soon"
	CreativeStageOverdue    Type = "creative.stage_overdue"
	CreativeCommentAdded    Type = "creative.comment_added"
	CreativeCommentResolved Type = "creative.comment_resolved"
	// ShareCreated and ShareRevoked are a share made and revoked; their
	// data is the Share without its token.
	ShareCreated            Type = "share.created"
	ShareRevoked            Type = "share.revoked"
	DepositAwaitingTransfer Type = "deposit.awaiting_transfer"
	DepositConfirming       Type = "deposit.confirming"
	DepositCredited         Type = "deposit.credited"
	DepositExpired          Type = "deposit.expired"
	DepositUnderReview      Type = "deposit.under_review"
	DepositRefunded         Type = "deposit.refunded"
	DepositCancelled        Type = "deposit.cancelled"
	// DepositTopUpRequested: the payer asked to pay the rest of a short
	// transfer; the deposit, still under review, shows review.topUp.
	DepositTopUpRequested Type = "deposit.top_up_requested"

	// CreativeMentioned belongs to the user a comment mentions (their live
	// stream only): it is no organization event, so no webhook gets it.
	CreativeMentioned Type = "creative.mentioned"

	// WebhookTest is the event an admin or operator sends one endpoint to
	// try it (webhooks.Tools.SendTest): it belongs to no one, so no stream
	// and no fan-out carries it, only the delivery the test makes.
	WebhookTest Type = "webhook.test"
)

// CreativeTypes are the organization-level event types, the ones webhook
// endpoints subscribe to (openapi.yaml's WebhookEventType lists the same):
// the creatives' and the shares'.
var CreativeTypes = []Type{
	CreativeCreated, CreativeVersionAdded, CreativeUpdated, CreativeSubmitted,
	CreativeChangesRequested, CreativeApproved, CreativeArchived,
	CreativeCommentAdded, CreativeCommentResolved,
	CreativeDecisionRecorded, CreativeStageApproved, CreativeStageDueSoon, CreativeStageOverdue,
	ShareCreated, ShareRevoked,
}

// MembersStream reports whether events of type t go to the live streams
// of the organization's members: share events do not, since who may see
// a share depends on the role (admins all, authors their own) and a
// share names its guests' addresses; webhooks, which admins manage, get
// them.
func MembersStream(t Type) bool { return !strings.HasPrefix(string(t), "share.") }

// creativeActionTypes maps a review action (openapi.yaml's CreativeAction)
// to its event type.
var creativeActionTypes = map[string]Type{
	"submit":          CreativeSubmitted,
	"request_changes": CreativeChangesRequested,
	"approve":         CreativeApproved,
	"archive":         CreativeArchived,
}

// CreativeActionType is the event type of a review action.
func CreativeActionType(action string) (Type, error) {
	t, ok := creativeActionTypes[action]
	if !ok {
		return "", fmt.Errorf("events: no event type for action %q", action)
	}
	return t, nil
}

// DepositType is the event type of a deposit now in status (its effective
// status: deposit.awaiting_transfer after a revert, deposit.confirming each
// time its confirmations change, and so on).
func DepositType(status string) Type { return Type("deposit." + status) }

// Event is one event to write. Exactly one of OrganizationID and UserID is
// set: who may see it.
type Event struct {
	Type           Type
	OrganizationID uuid.UUID
	UserID         uuid.UUID
	// Timestamp is when the change happened (the transaction's clock).
	Timestamp time.Time
	// Data is the resource as the API shows it.
	Data any
}

// Payload is the body of an event, as webhooks post it and streams send it.
// UserID names the user an event belongs to (a deposit's owner): the
// platform's webhooks receive every user's deposit events and must tell
// whose they are.
type Payload struct {
	Type      Type       `json:"type"`
	Timestamp time.Time  `json:"timestamp"`
	UserID    *uuid.UUID `json:"userId,omitempty"`
	Data      any        `json:"data"`
}

// Write writes evs to the outbox with one statement on q, which must be the
// transaction of the change they report (a change and its event commit
// together or not at all). Pass the transaction's Next() to send it with
// the next statement.
func Write(ctx context.Context, q *db.Queries, evs ...Event) error {
	if len(evs) == 0 {
		return nil
	}
	p := db.OutboxEventsInsertParams{
		Types: make([]string, len(evs)), OrganizationIds: make([]uuid.UUID, len(evs)),
		UserIds: make([]uuid.UUID, len(evs)), Payloads: make([][]byte, len(evs)),
	}
	for i, e := range evs {
		if (e.OrganizationID == uuid.Nil) == (e.UserID == uuid.Nil) {
			return fmt.Errorf("events: %s needs an organization or a user, not both", e.Type)
		}
		payload := Payload{Type: e.Type, Timestamp: e.Timestamp.UTC(), Data: e.Data}
		if e.UserID != uuid.Nil {
			payload.UserID = &e.UserID
		}
		body, err := json.Marshal(payload)
		if err != nil {
			return fmt.Errorf("events: encode %s: %w", e.Type, err)
		}
		p.Types[i], p.OrganizationIds[i], p.UserIds[i], p.Payloads[i] = string(e.Type), e.OrganizationID, e.UserID, body
	}
	return q.OutboxEventsInsert(ctx, p)
}
