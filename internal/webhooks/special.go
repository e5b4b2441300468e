package webhooks

import (
	"encoding/binary"
	"net/netip"
)

// specialPurpose is an entry of IANA's IPv4 and IPv6 Special-Purpose
// Address Registries (RFC 6890 and its updates, as the registries stood in
// 2025): a block and whether the registry calls it globally reachable.
// The most specific entry holding an address decides (2001:1::1/128 is
// reachable inside 2001::/23, which is not); "N/A" counts as not.
type specialPurpose struct {
	prefix    netip.Prefix
	name      string
	reachable bool
}

func entry(prefix, name string, reachable bool) specialPurpose {
	return specialPurpose{netip.MustParsePrefix(prefix), name, reachable}
}

// specialPurposeRegistry holds both registries, IPv4 then IPv6, in their order.
var specialPurposeRegistry = []specialPurpose{
	entry("0.0.0.0/8", "this network", false),
	entry("0.0.0.0/32", "this host on this network", false),
	entry("10.0.0.0/8", "private-use", false),
	entry("100.64.0.0/10", "shared address space", false),
	entry("127.0.0.0/8", "loopback", false),
	entry("169.254.0.0/16", "link local", false),
	entry("172.16.0.0/12", "private-use", false),
	entry("192.0.0.0/24", "IETF protocol assignments", false),
	entry("192.0.0.0/29", "IPv4 service continuity prefix", false),
	entry("192.0.0.8/32", "IPv4 dummy address", false),
	entry("192.0.0.9/32", "Port Control Protocol anycast", true),
	entry("192.0.0.10/32", "TURN anycast", true),
	entry("192.0.0.170/32", "NAT64/DNS64 discovery", false),
	entry("192.0.0.171/32", "NAT64/DNS64 discovery", false),
	entry("192.0.2.0/24", "documentation (TEST-NET-1)", false),
	entry("192.31.196.0/24", "AS112-v4", true),
	entry("192.52.193.0/24", "AMT", true),
	entry("192.88.99.0/24", "deprecated (6to4 relay anycast)", false),
	entry("192.88.99.2/32", "6a44 relay anycast", false),
	entry("192.168.0.0/16", "private-use", false),
	entry("192.175.48.0/24", "direct delegation AS112 service", true),
	entry("198.18.0.0/15", "benchmarking", false),
	entry("198.51.100.0/24", "documentation (TEST-NET-2)", false),
	entry("203.0.113.0/24", "documentation (TEST-NET-3)", false),
	entry("240.0.0.0/4", "reserved", false),
	entry("255.255.255.255/32", "limited broadcast", false),

	entry("::1/128", "loopback", false),
	entry("::/128", "unspecified", false),
	entry("::ffff:0:0/96", "IPv4-mapped", false),
	entry("64:ff9b::/96", "IPv4-IPv6 translation", true),
	entry("64:ff9b:1::/48", "IPv4-IPv6 translation, local use", false),
	entry("100::/64", "discard-only", false),
	entry("100:0:0:1::/64", "dummy IPv6 prefix", false),
	entry("2001::/23", "IETF protocol assignments", false),
	entry("2001::/32", "Teredo", false),
	entry("2001:1::1/128", "Port Control Protocol anycast", true),
	entry("2001:1::2/128", "TURN anycast", true),
	entry("2001:1::3/128", "DNS-SD service registration protocol anycast", true),
	entry("2001:2::/48", "benchmarking", false),
	entry("2001:3::/32", "AMT", true),
	entry("2001:4:112::/48", "AS112-v6", true),
	entry("2001:10::/28", "deprecated (ORCHID)", false),
	entry("2001:20::/28", "ORCHIDv2", true),
	entry("2001:30::/28", "drone remote ID entity tags", true),
	entry("2001:db8::/32", "documentation", false),
	entry("2002::/16", "6to4", false),
	entry("2620:4f:8000::/48", "direct delegation AS112 service", true),
	entry("3fff::/20", "documentation", false),
	entry("5f00::/16", "segment routing SIDs", false),
	entry("fc00::/7", "unique-local", false),
	entry("fe80::/10", "link-local unicast", false),
}

// specialPurposeOf is the most specific registry entry holding ip.
func specialPurposeOf(ip netip.Addr) (specialPurpose, bool) {
	var found specialPurpose
	ok := false
	for _, e := range specialPurposeRegistry {
		if e.prefix.Contains(ip) && (!ok || e.prefix.Bits() > found.prefix.Bits()) {
			found, ok = e, true
		}
	}
	return found, ok
}

// globalUnicastV6 is IPv6's global unicast space (IANA IPv6 Address Space
// registry); the rest is reserved, multicast, or deprecated (site-local
// fec0::/10).
var globalUnicastV6 = netip.MustParsePrefix("2000::/3")

// Public reports whether a webhook may be sent to ip: the one rule of
// CheckURL (creation) and Dialer (connection). An address is public when
// it is unicast, IPv6 in the global unicast space, not in a block of the
// special-purpose registries that they do not call globally reachable,
// and, for an IPv6 form that carries an IPv4 address, when that address
// is public too: a translator or tunnel would deliver to it.
func Public(ip netip.Addr) bool {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		// IPv4-mapped: the socket connects to the IPv4 address itself.
		ip = ip.Unmap()
	}
	for _, v4 := range embeddedIPv4(ip) {
		if !Public(v4) {
			return false
		}
	}
	if e, ok := specialPurposeOf(ip); ok {
		return e.reachable
	}
	if ip.Is6() && !globalUnicastV6.Contains(ip) {
		return false
	}
	return ip.IsGlobalUnicast()
}

// embeddedIPv4 are the IPv4 addresses an IPv6 address carries: in its last
// 32 bits for IPv4-compatible (::/96), SIIT (::ffff:0:0:0/96) and NAT64
// (64:ff9b::/96, and 64:ff9b:1::/48 as RFC 6052's /96 form); in bits 16 to
// 48 for 6to4 (2002::/16); for Teredo (2001::/32) the server in bits 32 to
// 64 and the client in the last 32 bits, inverted.
func embeddedIPv4(ip netip.Addr) []netip.Addr {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	at := func(i int) netip.Addr { return netip.AddrFrom4([4]byte(b[i : i+4])) }
	last := at(12)
	hi := binary.BigEndian.Uint64(b[:8])
	mid := binary.BigEndian.Uint32(b[8:12])
	switch {
	case hi == 0 && mid == 0: // IPv4-compatible (:: and ::1 are judged as themselves too)
		return []netip.Addr{last}
	case hi == 0 && mid == 0xffff0000: // SIIT, RFC 2765
		return []netip.Addr{last}
	case hi == 0x0064ff9b00000000 && mid == 0: // NAT64 well-known prefix
		return []netip.Addr{last}
	case hi>>16 == 0x0064ff9b0001: // NAT64 local-use prefix
		return []netip.Addr{last}
	case b[0] == 0x20 && b[1] == 0x02: // 6to4
		return []netip.Addr{at(2)}
	case hi>>32 == 0x20010000: // Teredo
		client := binary.BigEndian.Uint32(b[12:]) ^ 0xffffffff
		var c [4]byte
		binary.BigEndian.PutUint32(c[:], client)
		return []netip.Addr{at(4), netip.AddrFrom4(c)}
	}
	return nil
}
