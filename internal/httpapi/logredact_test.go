package httpapi

import (
	"testing"
)

func TestLogPathAndQueryWriteSecretsAsRedacted(t *testing.T) {
	t.Parallel()
	paths := []struct{ name, in, want string }{
		{"a share's link", "/share/AbC-123_x", "/share/[redacted]"},
		{"a share's link with more after it", "/share/AbC/x", "/share/[redacted]/x"},
		{"any case", "/SHARE/AbC", "/SHARE/[redacted]"},
		{"an access token in a path", "/api/v1/cat_0123abc/x", "/api/v1/[redacted]/x"},
		{"the shares list keeps its ids", "/api/v1/organizations/o/shares/s", "/api/v1/organizations/o/shares/s"},
		{"a path without secrets", "/api/v1/me", "/api/v1/me"},
		{"share with nothing after it", "/share/", "/share/"},
	}
	for _, tc := range paths {
		t.Run(tc.name, func(t *testing.T) {
			if got := logPath(tc.in); got != tc.want {
				t.Errorf("logPath(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	queries := []struct{ name, in, want string }{
		{"token, code, state and invitation", "token=a&code=b&state=c&invitation=d", "token=[redacted]&code=[redacted]&state=[redacted]&invitation=[redacted]"},
		{"an email of a sign-on start", "email=ada%40example.test&next=%2F", "email=[redacted]&next=%2F"},
		{"names in any case and escaped", "Token=a&%63ode=b", "Token=[redacted]&%63ode=[redacted]"},
		{"other parameters stay", "limit=10&cursor=abc", "limit=10&cursor=abc"},
		{"a name without a value", "token&x=1", "token&x=1"},
		{"a repeated parameter", "token=a&token=b", "token=[redacted]&token=[redacted]"},
	}
	for _, tc := range queries {
		t.Run(tc.name, func(t *testing.T) {
			if got := logQuery(tc.in); got != tc.want {
				t.Errorf("logQuery(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func BenchmarkLogPath(b *testing.B) {
	for range b.N {
		_ = logPath("/api/v1/organizations/0193f6a0-0000-7000-8000-00000000abcd/creatives")
	}
}
