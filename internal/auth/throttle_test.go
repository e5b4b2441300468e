package auth_test

import (
	"slices"
	"testing"
	"time"

	"creativeapi/internal/auth"
)

func TestThrottlePolicy(t *testing.T) {
	t.Parallel()
	p := auth.DefaultThrottle
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	email, ip := auth.EmailSubject("Ada@Example.test"), auth.AddressSubject("192.0.2.7")
	tests := []struct {
		name     string
		counters []auth.Counter
		want     time.Duration
	}{
		{"no failures pass", nil, 0},
		{"five failures per email are allowed before the sixth attempt is refused", []auth.Counter{{email, 4, now.Add(-time.Minute)}}, 0},
		{"the sixth attempt for an email waits for the window's end", []auth.Counter{{email, 5, now.Add(-time.Minute)}}, 14 * time.Minute},
		{"an address may fail five times and more", []auth.Counter{{ip, 5, now.Add(-time.Minute)}}, 0},
		{"the twenty-first attempt from an address waits", []auth.Counter{{ip, 20, now.Add(-10 * time.Minute)}}, 5 * time.Minute},
		{"an ended window no longer counts", []auth.Counter{{email, 50, now.Add(-15 * time.Minute)}}, 0},
		{"the longest wait of the exhausted subjects wins", []auth.Counter{{email, 5, now.Add(-14 * time.Minute)}, {ip, 20, now.Add(-5 * time.Minute)}}, 10 * time.Minute},
		{"a wait is at least a second", []auth.Counter{{email, 5, now.Add(-15*time.Minute + time.Millisecond)}}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Wait(now, tt.counters); got != tt.want {
				t.Errorf("Wait = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestThrottleDefaultsAreThePublishedPolicy(t *testing.T) {
	t.Parallel()
	want := auth.ThrottlePolicy{Window: 15 * time.Minute, PerEmail: 5, PerAddress: 20}
	if auth.DefaultThrottle != want {
		t.Fatalf("DefaultThrottle = %+v; openapi.yaml's 429 documents %+v", auth.DefaultThrottle, want)
	}
}

func TestThrottleSubjects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, email, ip string
		want            []string
	}{
		{"email is lowercased and the address added", "Ada@Example.TEST", "192.0.2.7", []string{"email:ada@example.test", "ip:192.0.2.7"}},
		{"an unknown address is left out", "ada@example.test", "", []string{"email:ada@example.test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := auth.DefaultThrottle.Subjects(tt.email, tt.ip); !slices.Equal(got, tt.want) {
				t.Errorf("Subjects = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRetryAfterSecondsRoundsUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		wait time.Duration
		want int
	}{
		{time.Second, 1},
		{1500 * time.Millisecond, 2},
		{15 * time.Minute, 900},
	}
	for _, tt := range tests {
		if got := auth.RetryAfterSeconds(tt.wait); got != tt.want {
			t.Errorf("RetryAfterSeconds(%s) = %d, want %d", tt.wait, got, tt.want)
		}
	}
}

func TestSharePasswordsWaitPerAddressAndOnlyOpenersPassTheSharesCeiling(t *testing.T) {
	p := auth.DefaultSharePasswords
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	started := now.Add(-5 * time.Minute)
	for _, tc := range []struct {
		name           string
		share, address auth.Counter
		opener         bool
		want           time.Duration
	}{
		{"nothing counted", auth.Counter{}, auth.Counter{}, false, 0},
		{"four from the address", auth.Counter{Failures: 4, WindowStart: started}, auth.Counter{Failures: 4, WindowStart: started}, false, 0},
		{"five from the address", auth.Counter{Failures: 5, WindowStart: started}, auth.Counter{Failures: 5, WindowStart: started}, false, 10 * time.Minute},
		{"the address's window ended", auth.Counter{Failures: 5, WindowStart: started}, auth.Counter{Failures: 5, WindowStart: now.Add(-15 * time.Minute)}, false, 0},
		{"a hundred on the share, a new address", auth.Counter{Failures: 100, WindowStart: started}, auth.Counter{}, false, 55 * time.Minute},
		{"a hundred on the share, an opener", auth.Counter{Failures: 100, WindowStart: started}, auth.Counter{Failures: 1, WindowStart: started}, true, 0},
		{"the share's hour ended", auth.Counter{Failures: 100, WindowStart: now.Add(-time.Hour)}, auth.Counter{}, false, 0},
	} {
		if got := p.Wait(now, tc.share, tc.address, tc.opener); got != tc.want {
			t.Errorf("%s: wait %s, want %s", tc.name, got, tc.want)
		}
	}
}
