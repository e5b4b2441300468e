package config_test

import (
	"strings"
	"testing"

	"creativeapi/internal/config"
)

func TestLoad_MetricsAddr(t *testing.T) {
	tests := []struct {
		rule, value, want, err string
	}{
		{"metrics are off unless METRICS_ADDR is set", "", "", ""},
		{"a host and port turns them on", "127.0.0.1:8081", "127.0.0.1:8081", ""},
		{"all interfaces may be given as :port", ":9464", ":9464", ""},
		{"anything else is refused at start-up", "metrics.example", "", "METRICS_ADDR"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			cfg, err := config.Load(func(k string) string {
				if k == "METRICS_ADDR" {
					return tt.value
				}
				return ""
			})
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("METRICS_ADDR=%q: error %v, want one naming %s", tt.value, err, tt.err)
				}
			case err != nil:
				t.Fatalf("METRICS_ADDR=%q: %v", tt.value, err)
			case cfg.MetricsAddr != tt.want:
				t.Errorf("METRICS_ADDR=%q: MetricsAddr %q, want %q", tt.value, cfg.MetricsAddr, tt.want)
			}
		})
	}
}
