package webhooks

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrForbiddenDestination: the address is not a public one (loopback,
// private, link-local, shared, reserved...). Webhooks never reach inside
// the network the service runs in.
var ErrForbiddenDestination = errors.New("webhooks: destination address is not public")

// URLError is why an endpoint URL is refused, for a 422 on the url field.
type URLError struct{ Reason string }

func (e *URLError) Error() string { return e.Reason }

// CheckURL refuses an endpoint URL that is not absolute https (http too
// when allowPrivate: development), has credentials or a fragment, or names
// an address that is not public. Host names are checked where it matters,
// at delivery time, on the address they resolve to then (Dialer).
func CheckURL(raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return &URLError{"Must be an absolute URL."}
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	default:
		return &URLError{"Must be an https URL."}
	}
	if u.User != nil {
		return &URLError{"Must not carry credentials."}
	}
	if u.Fragment != "" {
		return &URLError{"Must not have a fragment."}
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && !allowPrivate && !Public(ip) {
		return &URLError{"Must not point to a private, loopback or link-local address."}
	}
	return nil
}

// Dialer connects only to public addresses (unless allowPrivate), checked
// on the address actually dialled, after name resolution: a name that
// resolves to a private address, or starts to, is refused then, before
// any byte is sent.
func Dialer(timeout time.Duration, allowPrivate bool) *net.Dialer {
	return &net.Dialer{
		Timeout: timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			if allowPrivate {
				return nil
			}
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", ErrForbiddenDestination, address)
			}
			if !Public(ap.Addr()) {
				return fmt.Errorf("%w: %s", ErrForbiddenDestination, ap.Addr())
			}
			return nil
		},
	}
}
