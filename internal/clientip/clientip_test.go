package clientip_test

import (
	"net/netip"
	"testing"

	"creativeapi/internal/clientip"
)

func TestXForwardedForIsBelievedOnlyAsFarAsTheHopsAreTrustedProxies(t *testing.T) {
	t.Parallel()
	proxies := clientip.New([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")})
	none := clientip.New(nil)
	tests := []struct {
		name       string
		r          clientip.Resolver
		remoteAddr string
		xff        []string
		want       string
	}{
		{"without trusted proxies the peer is the client", none, "203.0.113.7:5000", []string{"198.51.100.1"}, "203.0.113.7"},
		{"a peer that is no trusted proxy is the client, whatever it forwards", proxies, "203.0.113.7:5000", []string{"198.51.100.1"}, "203.0.113.7"},
		{"a trusted proxy without the header is the client", proxies, "10.0.0.2:5000", nil, "10.0.0.2"},
		{"behind one trusted proxy", proxies, "10.0.0.2:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a client's own entries on the left are not believed", proxies, "10.0.0.2:5000", []string{"1.1.1.1, 198.51.100.1"}, "198.51.100.1"},
		{"behind two trusted proxies", proxies, "10.0.0.2:5000", []string{"198.51.100.1, 10.0.0.9"}, "198.51.100.1"},
		{"hops over several header lines are read as one list", proxies, "10.0.0.2:5000", []string{"1.1.1.1", "198.51.100.1", "10.0.0.9"}, "198.51.100.1"},
		{"only trusted hops: the leftmost", proxies, "10.0.0.2:5000", []string{"10.0.0.7, 10.0.0.9"}, "10.0.0.7"},
		{"an unreadable hop ends the walk at the nearest one read", proxies, "10.0.0.2:5000", []string{"198.51.100.1, unknown, 10.0.0.9"}, "10.0.0.9"},
		{"an unreadable last hop leaves the peer", proxies, "10.0.0.2:5000", []string{"198.51.100.1, _hidden"}, "10.0.0.2"},
		{"hops with ports", proxies, "10.0.0.2:5000", []string{"198.51.100.1:4711"}, "198.51.100.1"},
		{"IPv6 hops", proxies, "[fd00::1]:5000", []string{"2001:db8::7, fd00::2"}, "2001:db8::7"},
		{"IPv6 hops with ports", proxies, "[fd00::1]:5000", []string{"[2001:db8::7]:443"}, "2001:db8::7"},
		{"IPv4-mapped IPv6 is IPv4", proxies, "[::ffff:10.0.0.2]:5000", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		{"no readable peer", proxies, "pipe", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Of(tt.remoteAddr, tt.xff); got != tt.want {
				t.Fatalf("Of(%q, %q) = %q, want %q", tt.remoteAddr, tt.xff, got, tt.want)
			}
		})
	}
}
