package creative

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/problem"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

// Patch is an edit with merge-patch meaning: a nil field is left alone.
type Patch struct {
	ExpectedVersion                         *int64
	Title, Type, AspectRatio, Geo, Language *string
	// ClientID, TaskID, DirectionID, ReviewerID: Set false leaves the field
	// alone; Set with a nil ID clears it.
	ClientID, TaskID, DirectionID, ReviewerID IDField
}

// IDField is a nullable reference of a Patch.
type IDField struct {
	Set bool
	ID  *uuid.UUID
}

// actions are the changes p asks for: an edit of the details, setting the
// reviewer, or both. A patch that sends nothing is judged as an edit.
func (p Patch) actions() []review.Action {
	details := p.Title != nil || p.Type != nil || p.AspectRatio != nil || p.Geo != nil || p.Language != nil ||
		p.ClientID.Set || p.TaskID.Set || p.DirectionID.Set
	switch {
	case details && p.ReviewerID.Set:
		return []review.Action{review.ActionEdit, review.ActionAssignReviewer}
	case p.ReviewerID.Set:
		return []review.Action{review.ActionAssignReviewer}
	}
	return []review.Action{review.ActionEdit}
}

// Update edits a creative and writes creative.updated. A patch that
// changes nothing answers the creative as it is, without a new version or
// an event of either kind.
func Update(ctx context.Context, q store.Tx, org, id, user uuid.UUID, p Patch) (Creative, error) {
	locked, who, err := lock(ctx, q.Queries, org, id, user)
	if err != nil {
		return Creative{}, err
	}
	c := locked.Creative
	names := lockedRow(locked, c)
	_, err = review.Check(reviewCreative(c), who, p.ExpectedVersion, func() error {
		var err error
		names, err = checkReferences(ctx, q.Queries, org, c, p, names)
		return err
	}, p.actions()...)
	if err != nil {
		return Creative{}, err
	}
	next, changes := apply(c, p)
	if len(changes) == 0 {
		return one(ctx, q.Queries, names, who)
	}
	encoded, err := json.Marshal(changes)
	if err != nil {
		return Creative{}, err
	}
	next.Version++
	next.UpdatedAt = locked.Now
	// The write goes with the read of the versions the answer shows.
	if err := q.Next().CreativeUpdate(ctx, db.CreativeUpdateParams{
		ID: id, ActorID: user, Changes: encoded, Title: next.Title, Type: next.Type, AspectRatio: next.AspectRatio,
		Geo: next.Geo, Language: next.Language, ClientID: next.ClientID, TaskID: next.TaskID,
		DirectionID: next.DirectionID, ReviewerID: next.ReviewerID, Version: next.Version, UpdatedAt: next.UpdatedAt,
	}); err != nil {
		return Creative{}, err
	}
	names.c = next
	return answerWithEvent(ctx, q, names, who, events.CreativeUpdated)
}

// checkReferences judges what p says about other records: the client and
// task must be of org, the reviewer a reviewer or admin of org who is not
// the author, and the type may change only before the first version. It
// returns the names the answer shows after the edit.
func checkReferences(ctx context.Context, q *db.Queries, org uuid.UUID, c db.Creative, p Patch, names row) (row, error) {
	var fields []problem.FieldError
	if p.Type != nil && *p.Type != c.Type && c.CurrentVersionID != nil {
		fields = append(fields, problem.FieldError{Field: "type", Code: problem.InvalidValue,
			Message: "Cannot change once a version is uploaded: its assets were checked against the type. Create a new creative instead."})
	}
	if (p.ClientID.Set && p.ClientID.ID != nil) || (p.TaskID.Set && p.TaskID.ID != nil) || (p.ReviewerID.Set && p.ReviewerID.ID != nil) {
		ref, err := q.CreativeReferences(ctx, db.CreativeReferencesParams{
			OrganizationID: org, ClientID: p.ClientID.ID, TaskID: p.TaskID.ID, ReviewerID: p.ReviewerID.ID,
		})
		if err != nil {
			return names, err
		}
		if p.ClientID.ID != nil {
			if ref.ClientName == nil {
				fields = append(fields, notOfOrganization("clientId", "client"))
			}
			names.clientName = ref.ClientName
		}
		if p.TaskID.ID != nil {
			if ref.TaskName == nil {
				fields = append(fields, notOfOrganization("taskId", "task"))
			}
			names.taskName = ref.TaskName
		}
		if p.ReviewerID.ID != nil {
			if f, ok := reviewerRefusal(*p.ReviewerID.ID, c.AuthorID, ref.ReviewerRole); !ok {
				fields = append(fields, f)
			}
			names.reviewerName = ref.ReviewerName
		}
	}
	if p.ClientID.Set && p.ClientID.ID == nil {
		names.clientName = nil
	}
	if p.TaskID.Set && p.TaskID.ID == nil {
		names.taskName = nil
	}
	if p.ReviewerID.Set && p.ReviewerID.ID == nil {
		names.reviewerName = nil
	}
	if fields != nil {
		return names, &Invalid{Fields: fields}
	}
	return names, nil
}

// reviewerRefusal says why reviewer (whose role in the organization is
// role, nil when not a member) may not review a creative of author.
func reviewerRefusal(reviewer, author uuid.UUID, role *string) (problem.FieldError, bool) {
	refuse := func(msg string) (problem.FieldError, bool) {
		return problem.FieldError{Field: "reviewerId", Code: problem.InvalidValue, Message: msg}, false
	}
	switch {
	case role == nil:
		return refuse("Is not a member of this organization.")
	case !review.Reviews(review.Role(*role)):
		return refuse("Must be a reviewer or an admin of this organization, not a member with the role " + *role + ".")
	case reviewer == author: // as review's decider refuses the author
		return refuse("Must not be the creative's author: nobody reviews their own creative.")
	}
	return problem.FieldError{}, true
}

// apply is c with p merged in, and the fields that changed, in the order
// of the API's fields.
func apply(c db.Creative, p Patch) (db.Creative, []Change) {
	var changes []Change
	text := func(field string, cur *string, to *string) {
		if to != nil && *to != *cur {
			from := *cur
			changes = append(changes, Change{Field: field, From: &from, To: to})
			*cur = *to
		}
	}
	id := func(field string, cur **uuid.UUID, to IDField) {
		if !to.Set || sameID(*cur, to.ID) {
			return
		}
		changes = append(changes, Change{Field: field, From: idText(*cur), To: idText(to.ID)})
		*cur = to.ID
	}
	text("title", &c.Title, p.Title)
	text("type", &c.Type, p.Type)
	text("aspectRatio", &c.AspectRatio, p.AspectRatio)
	text("geo", &c.Geo, p.Geo)
	text("language", &c.Language, p.Language)
	id("clientId", &c.ClientID, p.ClientID)
	id("taskId", &c.TaskID, p.TaskID)
	id("directionId", &c.DirectionID, p.DirectionID)
	id("reviewerId", &c.ReviewerID, p.ReviewerID)
	return c, changes
}

func sameID(a, b *uuid.UUID) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func idText(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}
