// Package emailcap holds the ceilings of the emails someone else can make
// us send (docs/email.md, "Ceilings"): per recipient for
// every email an anonymous or new caller can trigger, and per
// organization, address and inviting user for invitations. The rules are
// plain functions of the sends already made; store.go counts and records
// them in the caller's transaction.
package emailcap

import (
	"time"
)

// Window is one ceiling: at most Max emails in any Length.
type Window struct {
	Length time.Duration
	Max    int
}

// Day is the longest window: sends older than it count for nothing.
const Day = 24 * time.Hour

// PerRecipient caps the emails to one address that anybody can ask for
// (guest codes today; sign-up, resend, reset and email change reuse it).
var PerRecipient = []Window{{time.Minute, 1}, {time.Hour, 5}, {Day, 10}}

// The invitations' ceilings (§16 shares, §23 workspaces).
var (
	PerOrganizationAddress = []Window{{Day, 3}}
	PerOrganization        = []Window{{time.Hour, 50}, {Day, 500}}
	PerInvitingUser        = []Window{{Day, 100}}
)

// Wait is how long after now n more emails fit every window, given the
// times of the earlier ones (oldest first): zero when they fit now. More
// than a window's Max never fits: its Length, the most a caller waits
// before asking again with fewer.
func Wait(now time.Time, times []time.Time, n int, windows []Window) time.Duration {
	var wait time.Duration
	for _, w := range windows {
		inside := within(now, times, w.Length)
		over := len(inside) + n - w.Max
		switch {
		case over <= 0:
			continue
		case n > w.Max:
			wait = max(wait, w.Length)
		default:
			// The over-th oldest send must leave the window first.
			wait = max(wait, inside[over-1].Add(w.Length).Sub(now), time.Second)
		}
	}
	return wait
}

// within is the times of times after now-length (times oldest first).
func within(now time.Time, times []time.Time, length time.Duration) []time.Time {
	from := now.Add(-length)
	for i, t := range times {
		if t.After(from) {
			return times[i:]
		}
	}
	return nil
}

// Send is one earlier invitation of an organization.
type Send struct {
	Recipient string
	At        time.Time
}

// InvitationWait is how long after now an organization's inviting user
// may invite recipients (normalised, each once), given the
// organization's sends of the last day and the user's send times (both
// oldest first): zero when all of them fit now. All or nothing: one
// recipient over a ceiling holds back every one.
func InvitationWait(now time.Time, org []Send, user []time.Time, recipients []string) time.Duration {
	if len(recipients) == 0 {
		return 0
	}
	orgTimes := make([]time.Time, len(org))
	byRecipient := map[string][]time.Time{}
	for i, s := range org {
		orgTimes[i] = s.At
		byRecipient[s.Recipient] = append(byRecipient[s.Recipient], s.At)
	}
	wait := max(Wait(now, orgTimes, len(recipients), PerOrganization), Wait(now, user, len(recipients), PerInvitingUser))
	for _, r := range recipients {
		wait = max(wait, Wait(now, byRecipient[r], 1, PerOrganizationAddress))
	}
	return wait
}
