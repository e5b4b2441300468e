package emailcap

import (
	"testing"
	"time"
)

func TestWaitIsUntilEnoughEarlierSendsLeaveTheirWindow(t *testing.T) {
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, tc := range []struct {
		name  string
		times []time.Time
		n     int
		want  time.Duration
	}{
		{"none yet", nil, 1, 0},
		{"one a minute: the second waits for the first to leave it", []time.Time{ago(20 * time.Second)}, 1, 40 * time.Second},
		{"a minute later it fits", []time.Time{ago(61 * time.Second)}, 1, 0},
		{"five an hour", []time.Time{ago(50 * time.Minute), ago(40 * time.Minute), ago(30 * time.Minute), ago(20 * time.Minute), ago(10 * time.Minute)}, 1, 10 * time.Minute},
		{"ten a day", []time.Time{ago(23 * time.Hour), ago(22 * time.Hour), ago(21 * time.Hour), ago(20 * time.Hour), ago(19 * time.Hour),
			ago(18 * time.Hour), ago(17 * time.Hour), ago(16 * time.Hour), ago(15 * time.Hour), ago(14 * time.Hour)}, 1, time.Hour},
	} {
		if got := Wait(now, tc.times, tc.n, PerRecipient); got != tc.want {
			t.Errorf("%s: wait %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestInvitationsAreAllOrNothingUnderEveryCeiling(t *testing.T) {
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	recipients := func(n int, prefix string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = prefix + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "@brand.test"
		}
		return out
	}
	sends := func(emails []string, at time.Time) []Send {
		out := make([]Send, len(emails))
		for i, e := range emails {
			out[i] = Send{Recipient: e, At: at}
		}
		return out
	}
	thrice := sends([]string{"x@brand.test", "x@brand.test", "x@brand.test"}, now.Add(-time.Hour))
	if w := InvitationWait(now, thrice, nil, []string{"y@brand.test", "x@brand.test"}); w != 23*time.Hour {
		t.Errorf("a fourth invitation of an address in a day: wait %s", w)
	}
	forty := sends(recipients(40, "o"), now.Add(-30*time.Minute))
	if w := InvitationWait(now, forty, nil, recipients(10, "n")); w != 0 {
		t.Errorf("50 in the hour: wait %s", w)
	}
	if w := InvitationWait(now, forty, nil, recipients(11, "n")); w != 30*time.Minute {
		t.Errorf("51 in the hour: wait %s, want the 40 to leave it", w)
	}
	user := make([]time.Time, 100)
	for i := range user {
		user[i] = now.Add(-2 * time.Hour)
	}
	if w := InvitationWait(now, nil, user, []string{"z@brand.test"}); w != 22*time.Hour {
		t.Errorf("the user's 101st of the day: wait %s", w)
	}
}
