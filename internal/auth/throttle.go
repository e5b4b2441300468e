package auth

import (
	"math"
	"strings"
	"time"

	"github.com/google/uuid"
)

// ThrottlePolicy limits failed sign-ins per subject (an email or a client
// address) in fixed windows. Counters live in PostgreSQL, so the limits hold
// across replicas; this type is the one place the numbers are decided.
type ThrottlePolicy struct {
	// Window is the length of a fixed window, starting at its first failure.
	// PerEmail also bounds a share's password (ShareSubject): the guest
	// sign-in is throttled like a user's.
	Window time.Duration
	// PerEmail and PerAddress are the failures allowed in one window; the
	// next attempt is refused until the window ends.
	PerEmail   int
	PerAddress int
}

// DefaultThrottle allows 5 failures per email and 20 per client address in
// 15 minutes: enough for typos, far too few for guessing, and a shared
// office address is not locked out by one person.
var DefaultThrottle = ThrottlePolicy{Window: 15 * time.Minute, PerEmail: 5, PerAddress: 20}

const (
	emailSubjectPrefix   = "email:"
	addressSubjectPrefix = "ip:"
)

// EmailSubject is the throttling subject of an email, in the form users
// are looked up by (NormalizeEmail).
func EmailSubject(email string) string { return emailSubjectPrefix + NormalizeEmail(email) }

// AddressSubject is the throttling subject of a client address.
func AddressSubject(ip string) string { return addressSubjectPrefix + ip }

// Subjects are the counters one sign-in attempt is checked against and
// charged to, sorted (an email's before an address's, as their prefixes
// sort) so that every sign-in locks them in one order; an unknown client
// address is left out.
func (p ThrottlePolicy) Subjects(email, clientIP string) []string {
	subjects := []string{EmailSubject(email)}
	if clientIP != "" {
		subjects = append(subjects, AddressSubject(clientIP))
	}
	return subjects
}

// limit is the failures allowed for subject in one window.
func (p ThrottlePolicy) limit(subject string) int {
	if strings.HasPrefix(subject, addressSubjectPrefix) {
		return p.PerAddress
	}
	return p.PerEmail
}

// Counter is one subject's failures in the window that started at WindowStart.
type Counter struct {
	Subject     string
	Failures    int
	WindowStart time.Time
}

// Wait is how long an attempt must wait at now given its subjects'
// counters: zero when it may proceed, else the time until the last
// exhausted window ends (never below one second, the unit of Retry-After).
func (p ThrottlePolicy) Wait(now time.Time, counters []Counter) time.Duration {
	var wait time.Duration
	for _, c := range counters {
		end := c.WindowStart.Add(p.Window)
		if !end.After(now) || c.Failures < p.limit(c.Subject) {
			continue
		}
		wait = max(wait, end.Sub(now), time.Second)
	}
	return wait
}

// RetryAfterSeconds rounds a wait up to whole seconds for Retry-After.
func RetryAfterSeconds(wait time.Duration) int {
	return int(math.Ceil(wait.Seconds()))
}

// SharePasswordPolicy limits wrong share passwords (docs/shares.md): per
// (share, client address) in a fixed window, so one guesser locks out
// nobody else; and per share in a longer window, after which only the
// addresses that already opened the share may try until it ends, so a
// guesser spread over many addresses gets at most PerShare tries an hour.
type SharePasswordPolicy struct {
	Window      time.Duration
	PerAddress  int
	ShareWindow time.Duration
	PerShare    int
}

// DefaultSharePasswords allows 5 failures per (share, address) in 15
// minutes and 100 per share in an hour.
var DefaultSharePasswords = SharePasswordPolicy{Window: 15 * time.Minute, PerAddress: 5, ShareWindow: time.Hour, PerShare: 100}

// ShareAddressSubject is the throttling subject of a share's password
// tried from one client address; it sorts after ShareSubject.
func ShareAddressSubject(share uuid.UUID, ip string) string {
	return ShareSubject(share) + "/" + AddressSubject(ip)
}

// Wait is how long an attempt must wait at now given the share's counter
// and the address's (either may be zero-valued: none), and whether the
// address opened the share before: zero when it may try.
func (p SharePasswordPolicy) Wait(now time.Time, share, address Counter, opener bool) time.Duration {
	var wait time.Duration
	if end := address.WindowStart.Add(p.Window); end.After(now) && address.Failures >= p.PerAddress {
		wait = max(end.Sub(now), time.Second)
	}
	if end := share.WindowStart.Add(p.ShareWindow); end.After(now) && share.Failures >= p.PerShare && !opener {
		wait = max(wait, end.Sub(now), time.Second)
	}
	return wait
}
