package config_test

import (
	"testing"

	"creativeapi/internal/config"
)

// TestPublicBaseURLNamesLoopbackLocalhost: the default PUBLIC_BASE_URL
// names a loopback ADDR localhost, the one host name of every URL of a
// development setup (a frontend on localhost:5173 and the API on
// localhost:8080 are one site for the session cookie; 127.0.0.1 is another).
func TestPublicBaseURLNamesLoopbackLocalhost(t *testing.T) {
	tests := []struct {
		addr, publicBaseURL, want string
	}{
		{"", "", "http://localhost:8080"},
		{"127.0.0.1:13080", "", "http://localhost:13080"},
		{"[::1]:8080", "", "http://localhost:8080"},
		{"localhost:8080", "", "http://localhost:8080"},
		{"10.1.2.3:8080", "", "http://10.1.2.3:8080"},
		{"127.0.0.1:8080", "https://api.example.com", "https://api.example.com"},
	}
	for _, tt := range tests {
		cfg, err := config.Load(func(k string) string {
			switch k {
			case "ADDR":
				return tt.addr
			case "PUBLIC_BASE_URL":
				return tt.publicBaseURL
			}
			return ""
		})
		if err != nil || cfg.PublicBaseURL != tt.want {
			t.Errorf("ADDR=%q PUBLIC_BASE_URL=%q: %q, %v; want %q", tt.addr, tt.publicBaseURL, cfg.PublicBaseURL, err, tt.want)
		}
	}
}
