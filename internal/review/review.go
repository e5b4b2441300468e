// Package review holds the creative workflow's rules: the review state
// machine, the rights table of every change a caller may make to a creative
// (the four review actions, new versions, edits, reviewer assignment), and
// the order in which a refused change is answered. It is the one place
// these rules live: the creative service asks Decide to authorise a change,
// and Available and Allowed to tell a caller what they may do, so the
// answer and the authorisation can never disagree. No HTTP, no SQL.
package review

import (
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// Status is a creative's reviewStatus.
type Status string

// The review states. StatusArchived is final in v1.
const (
	StatusDraft            Status = "draft"
	StatusInReview         Status = "in_review"
	StatusChangesRequested Status = "changes_requested"
	StatusApproved         Status = "approved"
	StatusArchived         Status = "archived"
)

// Statuses lists every review state, in lifecycle order, so callers and tests
// can range over all of them.
var Statuses = []Status{StatusDraft, StatusInReview, StatusChangesRequested, StatusApproved, StatusArchived}

// Valid reports whether s is one of the review states, so a value read from
// storage can be checked before it is trusted.
func (s Status) Valid() bool {
	return slices.Contains(Statuses, s)
}

// Action is a change a caller asks to make to a creative: one of the four
// review actions of CreativeActionRequest, or one of the authoring changes.
type Action string

// The review actions of CreativeActionRequest.
const (
	ActionSubmit         Action = "submit"
	ActionRequestChanges Action = "request_changes"
	ActionApprove        Action = "approve"
	ActionArchive        Action = "archive"
)

// The authoring changes: a new version (addCreativeVersion), an edit of the
// details (updateCreative), and setting or clearing the assigned reviewer
// (updateCreative with reviewerId).
const (
	ActionAddVersion     Action = "add_version"
	ActionEdit           Action = "edit"
	ActionAssignReviewer Action = "assign_reviewer"
	// ActionSetReviewPlan sets or removes the creative's review stages
	// (putCreativeReviewPlan, deleteCreativeReviewPlan).
	ActionSetReviewPlan Action = "set_review_plan"
)

// Actions lists the review actions in canonical order; Available answers in
// this order so availableActions is stable for clients.
var Actions = []Action{ActionSubmit, ActionRequestChanges, ActionApprove, ActionArchive}

// Changes lists the authoring changes, in the order of Permissions.
var Changes = []Action{ActionAddVersion, ActionEdit, ActionAssignReviewer}

// Valid reports whether a is one of the review actions (the values a
// CreativeActionRequest may name).
func (a Action) Valid() bool {
	return slices.Contains(Actions, a)
}

// Role is a member's role in the creative's organization.
type Role string

// The membership roles.
const (
	RoleAdmin    Role = "admin"
	RoleReviewer Role = "reviewer"
	RoleAuthor   Role = "author"
	RoleViewer   Role = "viewer"
)

// Roles lists every membership role, so callers and tests can range over them.
var Roles = []Role{RoleAdmin, RoleReviewer, RoleAuthor, RoleViewer}

// RoleNames is Roles as strings, for help texts and messages.
func RoleNames() []string {
	names := make([]string, len(Roles))
	for i, r := range Roles {
		names[i] = string(r)
	}
	return names
}

// Valid reports whether r is one of the membership roles.
func (r Role) Valid() bool {
	return slices.Contains(Roles, r)
}

// Creative is the part of a creative the rules depend on, so the package
// needs neither the database row nor the API type.
type Creative struct {
	Status   Status
	AuthorID uuid.UUID
	// VersionAuthorID is the author of the version under review (the
	// current version); uuid.Nil when none was read. Like AuthorID it
	// names someone who never decides (ownWork).
	VersionAuthorID uuid.UUID
	// ReviewerID is the assigned reviewer; uuid.Nil means none is assigned
	// and any reviewer who is not the author may decide.
	ReviewerID uuid.UUID
	// HasCurrentVersion is false until a version is uploaded; submit needs one.
	HasCurrentVersion bool
	// Version is the creative's version, which expectedVersion is compared with.
	Version int32
	// HasPlan: the creative has a review plan (stages.go); its stages, not
	// an assigned reviewer, say who decides.
	HasPlan bool
	// Plan and Round are the review plan and where its current round
	// stands, when HasPlan. A Round without statuses (no round read) means
	// no stage is active: the rights are then those of every stage.
	Plan  Plan
	Round Round
}

// Caller is the signed-in user acting on a creative, with their role in the
// creative's organization.
type Caller struct {
	UserID uuid.UUID
	Role   Role
	// GuestEmail is a guest's email when Role is a guest's (GuestCaller);
	// UserID then holds the guest's id.
	GuestEmail string
	// GuestInvited: the guest's share invited GuestEmail (guestDecider).
	GuestInvited bool
	// GuestAccountID is the user whose email is GuestEmail, as sign-in
	// compares emails; uuid.Nil when there is none. A guest session with
	// an author's email is still that author (ownWork).
	GuestAccountID uuid.UUID
}

// Reason tells the HTTP layer which answer a Refusal becomes. Its values are
// the Problem codes, so the mapping cannot drift.
type Reason string

// The ways a change is refused, in the order Check answers them.
const (
	// Forbidden means the caller's role can never make this change to this
	// creative: 403 action_forbidden.
	Forbidden Reason = "action_forbidden"
	// VersionConflict means the caller saw another version of the creative
	// than the current one: 409 version_conflict.
	VersionConflict Reason = "version_conflict"
	// InvalidTransition means the caller may make the change, but not in
	// the creative's current state: 409 invalid_transition.
	InvalidTransition Reason = "invalid_transition"
	// OpenThreads means submit found open threads not marked addressed
	// (CheckOpenThreads): 409 open_threads.
	OpenThreads Reason = "open_threads"
	// ReviewPlanSet means the change names one reviewer of a creative
	// whose review plan names them by stage: 409 review_plan_set.
	ReviewPlanSet Reason = "review_plan_set"
)

// Refusal is the error Decide and Check return when a change may not be
// made, so the caller can pick the status code from Reason and show Detail
// as is.
type Refusal struct {
	Reason Reason
	// Detail is a human sentence for the Problem's detail field.
	Detail string
	// Threads are the threads an OpenThreads refusal is about.
	Threads []uuid.UUID
}

// Error returns the detail prefixed with the reason, for logs.
func (r *Refusal) Error() string {
	return string(r.Reason) + ": " + r.Detail
}

func forbidden(format string, args ...any) *Refusal {
	return &Refusal{Reason: Forbidden, Detail: fmt.Sprintf(format, args...)}
}

func invalidTransition(format string, args ...any) *Refusal {
	return &Refusal{Reason: InvalidTransition, Detail: fmt.Sprintf(format, args...)}
}

// rule is one row of the rights table.
type rule struct {
	// rights refuses a caller whose role can never make the change to this
	// creative. It runs for members of a role that may act at all
	// (admins, reviewers, authors); viewers are refused before it.
	rights func(c Creative, who Caller, a Action, isAuthor, isAdmin bool) *Refusal
	// from lists the states the change may be made in, explicitly, so an
	// unknown stored status is refused rather than allowed.
	from []Status
	// to is the state after the change from s.
	to func(s Status) Status
	// needsVersion: the creative must have a current version (submit).
	needsVersion bool
}

var notArchived = []Status{StatusDraft, StatusInReview, StatusChangesRequested, StatusApproved}

func stay(s Status) Status                 { return s }
func goTo(next Status) func(Status) Status { return func(Status) Status { return next } }

// table is the rights table: who may make each change, from which states,
// and where it leads. Every decision of the package comes from it.
//
//	action           from                              to                 who
//	submit           draft, changes_requested          in_review          the author, or an admin; needs a version
//	request_changes  in_review                         changes_requested  a reviewer or admin who is not the author; the assigned reviewer only, if one is set (admins always)
//	approve          in_review                         approved           as request_changes
//	archive          any but archived                  archived           an admin; the author while a draft
//	add_version      draft, changes_requested,         unchanged;         the author, or an admin
//	                 approved                          approved → draft
//	edit             any but archived                  unchanged          the author, or an admin
//	assign_reviewer  any but archived                  unchanged          an admin
//	set_review_plan  draft, changes_requested          unchanged          the author, or an admin
var table = map[Action]rule{
	ActionSubmit: {
		rights:       authorOrAdmin("submit this creative"),
		from:         []Status{StatusDraft, StatusChangesRequested},
		to:           goTo(StatusInReview),
		needsVersion: true,
	},
	ActionRequestChanges: {rights: decider, from: []Status{StatusInReview}, to: goTo(StatusChangesRequested)},
	ActionApprove:        {rights: decider, from: []Status{StatusInReview}, to: goTo(StatusApproved)},
	ActionArchive:        {rights: archiver, from: notArchived, to: goTo(StatusArchived)},
	ActionAddVersion: {
		rights: authorOrAdmin("add a version to this creative"),
		from:   []Status{StatusDraft, StatusChangesRequested, StatusApproved},
		// A new version of an approved creative needs a new review.
		to: func(s Status) Status {
			if s == StatusApproved {
				return StatusDraft
			}
			return s
		},
	},
	ActionEdit: {rights: authorOrAdmin("edit this creative"), from: notArchived, to: stay},
	ActionAssignReviewer: {
		rights: func(_ Creative, _ Caller, _ Action, _, isAdmin bool) *Refusal {
			if isAdmin {
				return nil
			}
			return forbidden("Only an admin may assign a reviewer to a creative.")
		},
		from: notArchived, to: stay,
	},
	// A plan changes only while no round is deciding: not during a review,
	// nor once approved (a new version brings the creative back to draft).
	ActionSetReviewPlan: {
		rights: authorOrAdmin("set the review plan of this creative"),
		from:   []Status{StatusDraft, StatusChangesRequested},
		to:     stay,
	},
}

func authorOrAdmin(what string) func(Creative, Caller, Action, bool, bool) *Refusal {
	return func(_ Creative, _ Caller, _ Action, isAuthor, isAdmin bool) *Refusal {
		if isAuthor || isAdmin {
			return nil
		}
		return forbidden("Only the creative's author or an admin may %s.", what)
	}
}

// Reviews reports whether a member with role may review creatives at all:
// reviewers and admins, and (decider adds) never on their own creative. It
// is also the rule for whom an admin may assign as a creative's reviewer.
func Reviews(role Role) bool { return role == RoleReviewer || role == RoleAdmin }

// decider is the right to request changes and approve: nobody decides on
// their own creative or version (ownWork), and an assigned reviewer
// excludes the other reviewers. With a review plan its stages say who decides: while a stage
// is active only its reviewers (and admins, whose decision overrides),
// otherwise the reviewers the plan names in any stage.
func decider(c Creative, who Caller, a Action, _, isAdmin bool) *Refusal {
	if !Reviews(who.Role) {
		return forbidden("Only a reviewer or an admin who is not the author may %s this creative.", verb(a))
	}
	if r := ownWork(c, who.UserID, a); r != nil {
		return r
	}
	if c.HasPlan {
		switch person, active := MemberKey(who.UserID), c.Round.Active(); {
		case isAdmin:
		case active >= 0 && !slices.Contains(c.Plan.Stages[active].Reviewers, person):
			return forbidden("Only the reviewers of the active stage (%d) or an admin may %s this creative now.", active+1, verb(a))
		case active < 0 && !c.Plan.Names(person):
			return forbidden("Only the reviewers the review plan names or an admin may %s this creative.", verb(a))
		}
		return nil
	}
	if !isAdmin && c.ReviewerID != uuid.Nil && c.ReviewerID != who.UserID {
		return forbidden("Only the assigned reviewer or an admin may %s this creative.", verb(a))
	}
	return nil
}

// ownWork refuses a decision (approve, request changes) by user on c when
// user wrote the creative or the version under review: nobody approves
// their own work, on any path (a reviewer's or stage member's decision,
// an admin's override, a guest whose email is the author's). It is the
// first refusal of every decision, so no other rule can let them through.
func ownWork(c Creative, user uuid.UUID, a Action) *Refusal {
	switch {
	case user == uuid.Nil:
		return nil
	case user == c.AuthorID:
		return forbidden("The author of a creative may not %s it; another reviewer or admin must.", verb(a))
	case user == c.VersionAuthorID:
		return forbidden("The author of the version under review may not %s the creative; another reviewer or admin must.", verb(a))
	}
	return nil
}

// archiver is the archive right. The author's exists only while the
// creative is a draft, because after submission it is no longer only theirs.
func archiver(c Creative, _ Caller, _ Action, isAuthor, isAdmin bool) *Refusal {
	if isAdmin || (isAuthor && c.Status == StatusDraft) {
		return nil
	}
	if isAuthor {
		return forbidden("The author may archive this creative only while it is a draft; ask an admin.")
	}
	return forbidden("Only an admin, or the author while the creative is a draft, may archive this creative.")
}

// Decide says whether who may make change a to c now and, if so, the status
// c moves to. Rights are checked before the state (403 action_forbidden
// before 409 invalid_transition). A refusal is a *Refusal.
func Decide(c Creative, who Caller, a Action) (Status, error) {
	if r := authorize(c, who, a); r != nil {
		return "", r
	}
	next, r := transition(c, a)
	if r != nil {
		return "", r
	}
	return next, nil
}

// Check is Decide in the full order a refused change is answered: the
// caller's rights (403 action_forbidden), then check, which judges the
// request against the creative (a 422 only someone allowed to make the
// change may learn about), then expectedVersion against the creative's
// version (409 version_conflict), then the state (409
// invalid_transition). check may be nil; its error is returned as is.
//
// A request may ask for several changes at once (an edit that also assigns
// the reviewer): each must be allowed, and the status after them is
// returned. expectedVersion is compared as sent, without narrowing.
func Check(c Creative, who Caller, expectedVersion *int64, check func() error, actions ...Action) (Status, error) {
	if len(actions) == 0 {
		return "", forbidden("No change was asked for.")
	}
	for _, a := range actions {
		if r := authorize(c, who, a); r != nil {
			return "", r
		}
	}
	if check != nil {
		if err := check(); err != nil {
			return "", err
		}
	}
	if expectedVersion != nil && *expectedVersion != int64(c.Version) {
		return "", &Refusal{Reason: VersionConflict,
			Detail: fmt.Sprintf("The creative is at version %d, not %d. Reload it and try again.", c.Version, *expectedVersion)}
	}
	next := c.Status
	for _, a := range actions {
		s, r := transition(Creative{Status: next, HasCurrentVersion: c.HasCurrentVersion, HasPlan: c.HasPlan}, a)
		if r != nil {
			return "", r
		}
		next = s
	}
	return next, nil
}

// Available lists, in canonical order, the review actions Decide allows who
// to run on c now. It never returns nil, so JSON says [].
func Available(c Creative, who Caller) []Action {
	out := make([]Action, 0, len(Actions))
	for _, a := range Actions {
		if _, err := Decide(c, who, a); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// Permissions are the authoring changes a caller may make to a creative now.
type Permissions struct {
	AddVersion, Edit, AssignReviewer bool
}

// Allowed says which authoring changes Decide allows who to make to c now.
func Allowed(c Creative, who Caller) Permissions {
	may := func(a Action) bool {
		_, err := Decide(c, who, a)
		return err == nil
	}
	return Permissions{AddVersion: may(ActionAddVersion), Edit: may(ActionEdit), AssignReviewer: may(ActionAssignReviewer)}
}

// Authorize is Check's first step alone: who's rights to make the changes
// to c, whatever c's version and state (403 action_forbidden). A replayed
// answer is given only to a caller it allows (docs/idempotency.md).
func Authorize(c Creative, who Caller, actions ...Action) error {
	for _, a := range actions {
		if r := authorize(c, who, a); r != nil {
			return r
		}
	}
	return nil
}

// AuthorizeCreate refuses a member whose role may not create creatives in
// their organization: authors and admins may.
func AuthorizeCreate(role Role) error {
	if role == RoleAuthor || role == RoleAdmin {
		return nil
	}
	return forbidden("Only authors and admins may create creatives; your role is %s.", role)
}

// AuthorizeUploads refuses a member whose role may not upload files to
// their organization: those who may create creatives (authors and admins).
func AuthorizeUploads(role Role) error {
	if role == RoleAuthor || role == RoleAdmin {
		return nil
	}
	return forbidden("Only authors and admins may upload files; your role is %s.", role)
}

// AuthorizeUploadDelete refuses deleting a pending upload to anyone but
// the member who created it and the organization's admins: another
// author's unfinished file is theirs to finish.
func AuthorizeUploadDelete(role Role, creator bool) error {
	if err := AuthorizeUploads(role); err != nil {
		return err
	}
	if creator || role == RoleAdmin {
		return nil
	}
	return forbidden("Only the member who created this upload, or an admin, may delete it.")
}

// RefuseUploadDelete is the refusal of deleting an upload that is no
// longer pending: a ready file belongs to the versions that name it, and
// a failed one holds nothing.
func RefuseUploadDelete(status string) error {
	return invalidTransition("This upload is %s; only a pending upload can be deleted.", status)
}

// AuthorizeWebhooks refuses a member who may not manage the organization's
// webhook endpoints: only admins may, since an endpoint receives every
// creative event of the organization, and its deliveries show where to.
func AuthorizeWebhooks(role Role) error {
	if role == RoleAdmin {
		return nil
	}
	return forbidden("Only admins may manage the organization's webhooks; your role is %s.", role)
}

// AuthorizeShares refuses a member who may not manage shares at all:
// admins manage every share of the organization, authors the shares of
// creatives they wrote (AuthorizeShareCreative); reviewers and viewers
// none, as a share lets outsiders in.
func AuthorizeShares(role Role) error {
	if role == RoleAdmin || role == RoleAuthor {
		return nil
	}
	return forbidden("Only admins and authors may share creatives; your role is %s.", role)
}

// AuthorizeShareCreative refuses to put a creative in a share for a
// member who may not share it: an admin may share any, an author only
// the creatives they wrote.
func AuthorizeShareCreative(role Role, isAuthor bool) error {
	if role == RoleAdmin || role == RoleAuthor && isAuthor {
		return nil
	}
	return forbidden("Authors may share only creatives they wrote.")
}

// AuthorizeSharePermission refuses a member who may not make a share
// with permission: a decide share lets its guests approve, so only an
// admin makes one (an author may share view or comment); the author's own
// approval by link is what it closes.
func AuthorizeSharePermission(role Role, permission string) error {
	if GuestRole(permission) == RoleGuestDecide && role != RoleAdmin {
		return forbidden("Only an admin may make a decide share; share view or comment, or ask an admin.")
	}
	return nil
}

// AuthorizePlanGuests refuses a member who is no admin to set, replace or
// remove a review plan that names guests: before, the creative's plan
// names guests; after, the plan asked for does (false for a removal). A
// plan's guests decide, so who they are is an admin's choice, as a decide
// share is.
func AuthorizePlanGuests(role Role, before, after bool) error {
	if (before || after) && role != RoleAdmin {
		return forbidden("Only an admin may set, change or remove a review plan that names guests.")
	}
	return nil
}

// SeesAllShares reports whether role reads every share of the
// organization (admins) rather than only those the caller made.
func SeesAllShares(role Role) bool { return role == RoleAdmin }

// authorize applies the rights of the table, which do not depend on the
// state except where a rule says so (the author's archive right).
func authorize(c Creative, who Caller, a Action) *Refusal {
	r, ok := table[a]
	if !ok {
		return forbidden("%q is not a change of a creative.", a)
	}
	switch who.Role {
	case RoleAdmin, RoleReviewer, RoleAuthor:
	case RoleViewer:
		return forbidden("A viewer may not %s a creative.", verb(a))
	case RoleGuestView, RoleGuestComment, RoleGuestDecide:
		return authorizeGuest(c, who, a)
	default:
		return forbidden("The role %q may not %s a creative.", who.Role, verb(a))
	}
	// A nil user id never counts as the author, so a zero Creative gives no
	// one the author's rights.
	isAuthor := who.UserID != uuid.Nil && who.UserID == c.AuthorID
	return r.rights(c, who, a, isAuthor, who.Role == RoleAdmin)
}

// transition applies the table's states to a caller already authorised.
func transition(c Creative, a Action) (Status, *Refusal) {
	r, ok := table[a]
	if !ok {
		return "", invalidTransition("%q is not a change of a creative.", a)
	}
	switch {
	case !slices.Contains(r.from, c.Status):
		return "", stateRefusal(a, c.Status)
	case r.needsVersion && !c.HasCurrentVersion:
		return "", invalidTransition("A version must be uploaded before the creative can be submitted.")
	case a == ActionAssignReviewer && c.HasPlan:
		return "", &Refusal{Reason: ReviewPlanSet,
			Detail: "The creative has a review plan: its stages name the reviewers. Change the plan, or remove it to assign a reviewer."}
	}
	return r.to(c.Status), nil
}

// stateRefusal says why a may not be made in state s.
func stateRefusal(a Action, s Status) *Refusal {
	switch {
	case a == ActionAddVersion && s == StatusArchived:
		return invalidTransition("A version cannot be added to an archived creative; archiving is final.")
	case a == ActionAddVersion:
		return invalidTransition("A version cannot be added while the creative is %s.", s)
	case a == ActionSetReviewPlan:
		return invalidTransition("The review plan can be changed only while the creative is draft or changes_requested, not %s.", s)
	case (a == ActionEdit || a == ActionAssignReviewer) && s == StatusArchived:
		return invalidTransition("An archived creative cannot be edited; archiving is final.")
	case s == StatusArchived:
		return invalidTransition("%s is not allowed while the creative is archived; archiving is final.", a)
	}
	return invalidTransition("%s is not allowed while the creative is %s.", a, s)
}

// verb spells an action for a sentence ("request changes on" reads better
// than "request_changes").
func verb(a Action) string {
	switch a {
	case ActionRequestChanges:
		return "request changes on"
	case ActionAddVersion:
		return "add a version to"
	case ActionAssignReviewer:
		return "assign a reviewer to"
	case ActionSetReviewPlan:
		return "set the review plan of"
	}
	return string(a)
}

// CheckOpenThreads is submit's last refusal, after Check's: threads left
// open on any version follow the work, and a submit does not go past the
// ones the author has not marked addressed (unaddressed, oldest first)
// unless the caller acknowledges them (docs/review.md, "Threads that
// follow the work"). Only submit looks at threads.
func CheckOpenThreads(a Action, unaddressed []uuid.UUID, acknowledged bool) error {
	if a != ActionSubmit || len(unaddressed) == 0 || acknowledged {
		return nil
	}
	noun := "threads are"
	if len(unaddressed) == 1 {
		noun = "thread is"
	}
	return &Refusal{Reason: OpenThreads, Threads: unaddressed,
		Detail: fmt.Sprintf("%d open %s not marked addressed. Address them (addressedInVersion), or submit with acknowledgeOpenThreads.", len(unaddressed), noun)}
}
