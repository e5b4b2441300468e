// Package clientip tells which client address a request came from. Behind
// a load balancer every connection comes from the balancer, so the client
// is named in X-Forwarded-For; but any client can send that header, so it
// is believed only as far as the hops that added to it are trusted proxies
// (TRUSTED_PROXIES).
package clientip

import (
	"net"
	"net/netip"
	"strings"
)

// Resolver finds client addresses given the trusted proxies' networks.
type Resolver struct {
	trusted []netip.Prefix
}

// New returns a Resolver trusting the proxies in the given networks; with
// none, X-Forwarded-For is ignored.
func New(trusted []netip.Prefix) Resolver {
	return Resolver{trusted: trusted}
}

// Of is the client address of a request that arrived from remoteAddr
// (host:port, as net/http gives it) with the X-Forwarded-For header values
// xff. From a trusted peer it is the rightmost X-Forwarded-For hop that is
// not a trusted proxy: each trusted proxy appended the address it saw, so
// every hop from there to the right was written by a trusted proxy, while
// anything to its left may be the client's own invention. An unreadable
// hop ends the walk at the nearest hop already read. It returns "" when
// remoteAddr names no IP address.
func (r Resolver) Of(remoteAddr string, xff []string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	client, ok := parse(host)
	if !ok {
		return ""
	}
	if !r.isTrusted(client) || len(xff) == 0 {
		return client.String()
	}
	hops := strings.Split(strings.Join(xff, ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := parse(hops[i])
		if !ok {
			break
		}
		client = hop
		if !r.isTrusted(hop) {
			break
		}
	}
	return client.String()
}

func (r Resolver) isTrusted(addr netip.Addr) bool {
	for _, p := range r.trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// parse reads one address as proxies write it: an IP, maybe with a port
// (1.2.3.4:80, [::1]:80), IPv4-mapped IPv6 read as IPv4, without a zone.
func parse(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	addr, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return netip.Addr{}, false
		}
		addr = ap.Addr()
	}
	return addr.Unmap().WithZone(""), true
}
