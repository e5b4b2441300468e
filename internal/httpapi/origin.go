package httpapi

import (
	"net/http"
	"net/url"
)

// originPolicy decides which origins may make unsafe requests: the
// server's own (PUBLIC_BASE_URL) and the trusted ones (ALLOWED_ORIGINS).
// The request's Host takes no part: it names whatever host the browser
// connected to, which a rebound DNS name makes the attacker's own.
type originPolicy struct {
	allowed map[string]bool
}

func newOriginPolicy(publicBaseURL string, trusted []string) originPolicy {
	allowed := make(map[string]bool, len(trusted)+1)
	if u, err := url.Parse(publicBaseURL); err == nil && u.Host != "" {
		allowed[u.Scheme+"://"+u.Host] = true
	}
	for _, o := range trusted {
		allowed[o] = true
	}
	return originPolicy{allowed: allowed}
}

// allows reports whether the unsafe request r may proceed. Browsers send
// Origin with every unsafe request (same-origin fetches included), so it
// is compared when present. Without it, only a browser's own
// Sec-Fetch-Site can say the request is cross-site; a client that is no
// browser sends neither, and still needs the session's CSRF token.
func (p originPolicy) allows(r *http.Request) bool {
	if origin := r.Header.Get("Origin"); origin != "" {
		return p.allowed[origin]
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}
