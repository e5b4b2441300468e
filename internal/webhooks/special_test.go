package webhooks_test

import (
	"net/netip"
	"testing"

	"creativeapi/internal/webhooks"
)

// TestPublicFollowsTheSpecialPurposeRegistries judges an address of every
// block of IANA's IPv4 and IPv6 special-purpose registries (its first and
// last), as the registry's "globally reachable" column says, the most
// specific block deciding.
func TestPublicFollowsTheSpecialPurposeRegistries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		block, first, last string
		public             bool
	}{
		{"0.0.0.0/8", "0.0.0.0", "0.255.255.255", false},
		{"0.0.0.0/32", "0.0.0.0", "0.0.0.0", false},
		{"10.0.0.0/8", "10.0.0.0", "10.255.255.255", false},
		{"100.64.0.0/10", "100.64.0.0", "100.127.255.255", false},
		{"127.0.0.0/8", "127.0.0.0", "127.255.255.255", false},
		{"169.254.0.0/16", "169.254.0.0", "169.254.255.255", false},
		{"172.16.0.0/12", "172.16.0.0", "172.31.255.255", false},
		{"192.0.0.0/24", "192.0.0.0", "192.0.0.255", false},
		{"192.0.0.0/29", "192.0.0.0", "192.0.0.7", false},
		{"192.0.0.8/32", "192.0.0.8", "192.0.0.8", false},
		{"192.0.0.9/32", "192.0.0.9", "192.0.0.9", true},
		{"192.0.0.10/32", "192.0.0.10", "192.0.0.10", true},
		{"192.0.0.170/32", "192.0.0.170", "192.0.0.170", false},
		{"192.0.0.171/32", "192.0.0.171", "192.0.0.171", false},
		{"192.0.2.0/24", "192.0.2.0", "192.0.2.255", false},
		{"192.31.196.0/24", "192.31.196.0", "192.31.196.255", true},
		{"192.52.193.0/24", "192.52.193.0", "192.52.193.255", true},
		{"192.88.99.0/24", "192.88.99.0", "192.88.99.255", false},
		{"192.88.99.2/32", "192.88.99.2", "192.88.99.2", false},
		{"192.168.0.0/16", "192.168.0.0", "192.168.255.255", false},
		{"192.175.48.0/24", "192.175.48.0", "192.175.48.255", true},
		{"198.18.0.0/15", "198.18.0.0", "198.19.255.255", false},
		{"198.51.100.0/24", "198.51.100.0", "198.51.100.255", false},
		{"203.0.113.0/24", "203.0.113.0", "203.0.113.255", false},
		{"240.0.0.0/4", "240.0.0.0", "255.255.255.254", false},
		{"255.255.255.255/32", "255.255.255.255", "255.255.255.255", false},

		{"::1/128", "::1", "::1", false},
		{"::/128", "::", "::", false},
		{"::ffff:0:0/96", "::ffff:0.0.0.0", "::ffff:255.255.255.255", false},
		// Reachable, and judged by the IPv4 address it carries.
		{"64:ff9b::/96", "64:ff9b::0.0.0.0", "64:ff9b::255.255.255.255", false},
		{"64:ff9b:1::/48", "64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", false},
		{"100::/64", "100::", "100::ffff:ffff:ffff:ffff", false},
		{"100:0:0:1::/64", "100:0:0:1::", "100:0:0:1:ffff:ffff:ffff:ffff", false},
		{"2001::/23", "2001::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", false},
		{"2001::/32", "2001::", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", false},
		{"2001:1::1/128", "2001:1::1", "2001:1::1", true},
		{"2001:1::2/128", "2001:1::2", "2001:1::2", true},
		{"2001:1::3/128", "2001:1::3", "2001:1::3", true},
		{"2001:2::/48", "2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff", false},
		{"2001:3::/32", "2001:3::", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff", true},
		{"2001:4:112::/48", "2001:4:112::", "2001:4:112:ffff:ffff:ffff:ffff:ffff", true},
		{"2001:10::/28", "2001:10::", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", false},
		{"2001:20::/28", "2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", true},
		{"2001:30::/28", "2001:30::", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", true},
		{"2001:db8::/32", "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", false},
		{"2002::/16", "2002::", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false},
		{"2620:4f:8000::/48", "2620:4f:8000::", "2620:4f:8000:ffff:ffff:ffff:ffff:ffff", true},
		{"3fff::/20", "3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", false},
		{"5f00::/16", "5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false},
		{"fc00::/7", "fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false},
		{"fe80::/10", "fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false},
	} {
		block := netip.MustParsePrefix(tc.block)
		for _, a := range []string{tc.first, tc.last} {
			ip := netip.MustParseAddr(a)
			if !block.Contains(ip) {
				t.Fatalf("%s is not in %s", a, tc.block)
			}
			if got := webhooks.Public(ip); got != tc.public {
				t.Errorf("%s (%s): Public = %v, want %v", a, tc.block, got, tc.public)
			}
		}
	}
}

// TestEveryRegistryBlockIsJudgedByTheTable keeps the table above complete.
func TestEveryRegistryBlockIsJudgedByTheTable(t *testing.T) {
	t.Parallel()
	want := map[string]bool{}
	for _, b := range []string{"0.0.0.0/8", "0.0.0.0/32", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.0.0/29", "192.0.0.8/32", "192.0.0.9/32", "192.0.0.10/32", "192.0.0.170/32",
		"192.0.0.171/32", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.88.99.2/32",
		"192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4",
		"255.255.255.255/32", "::1/128", "::/128", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
		"100:0:0:1::/64", "2001::/23", "2001::/32", "2001:1::1/128", "2001:1::2/128", "2001:1::3/128", "2001:2::/48",
		"2001:3::/32", "2001:4:112::/48", "2001:10::/28", "2001:20::/28", "2001:30::/28", "2001:db8::/32", "2002::/16",
		"2620:4f:8000::/48", "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10"} {
		want[netip.MustParsePrefix(b).String()] = true
	}
	for _, b := range webhooks.SpecialPurposeBlocks() {
		if !want[b.String()] {
			t.Errorf("registry block %s has no case in TestPublicFollowsTheSpecialPurposeRegistries", b)
		}
		delete(want, b.String())
	}
	for b := range want {
		t.Errorf("%s is tested but not in the registry Public reads", b)
	}
}

// TestPublicJudgesTheIPv4AddressAnIPv6AddressCarries: every IPv6 form that
// embeds an IPv4 address is refused when that address is not public.
func TestPublicJudgesTheIPv4AddressAnIPv6AddressCarries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, addr string
		public     bool
	}{
		{"IPv4-mapped loopback", "::ffff:127.0.0.1", false},
		{"IPv4-mapped public", "::ffff:93.184.216.34", true},
		{"IPv4-compatible loopback", "::127.0.0.1", false},
		{"IPv4-compatible public", "::93.184.216.34", false},
		{"SIIT loopback", "::ffff:0:7f00:1", false},
		{"SIIT private", "::ffff:0:a00:1", false},
		{"6to4 loopback", "2002:7f00:1::", false},
		{"6to4 private", "2002:c0a8:101::1", false},
		{"Teredo, loopback client", "2001:0:5db8:1234:0:ffff:80ff:fffe", false}, // client ^0xffffffff = 127.0.0.1
		{"Teredo, private server", "2001:0:a00:1::1", false},
		{"NAT64 to loopback", "64:ff9b::7f00:1", false},
		{"NAT64 to a private address", "64:ff9b::10.0.0.1", false},
		{"NAT64 to metadata", "64:ff9b::169.254.169.254", false},
		{"NAT64 to a public address", "64:ff9b::93.184.216.34", true},
		{"local-use NAT64 to loopback", "64:ff9b:1::7f00:1", false},
		{"site-local (deprecated)", "fec0::1", false},
		{"multicast", "ff02::1", false},
		{"IPv4 multicast", "224.0.0.1", false},
		{"a public IPv4 address", "93.184.216.34", true},
		{"a public IPv6 address", "2606:2800:220:1:248:1893:25c8:1946", true},
	} {
		if got := webhooks.Public(netip.MustParseAddr(tc.addr)); got != tc.public {
			t.Errorf("%s (%s): Public = %v, want %v", tc.name, tc.addr, got, tc.public)
		}
	}
}
