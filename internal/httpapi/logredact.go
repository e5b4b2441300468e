package httpapi

import (
	"net/url"
	"strings"
)

// redacted stands in the access log for a value that is a secret.
const redacted = "[redacted]"

// secretQueryParams are the query parameters whose values the access log
// never writes (docs/operations.md): links carry tokens and codes there
// (`/api/v1/unsubscribe?token=…`, a sign-in's `code` and `state`, an
// invitation), and an email typed into a sign-on start is a person's.
var secretQueryParams = map[string]bool{
	"token": true, "code": true, "state": true, "invitation": true, "email": true,
}

// secretPathSegments name the path segments whose next segment is a
// secret: a share's link is `{APP_URL}/share/{token}`, and with APP_URL
// unset it points at this server (APP_URL defaults to PUBLIC_BASE_URL),
// so the link's requests reach the access log as a 404.
var secretPathSegments = []string{"share"}

// accessTokenPrefix starts every personal access token (docs/tokens.md):
// a token pasted into a path is no less a secret.
const accessTokenPrefix = "cat_"

// logPath is p as the access log writes it: the segment after `share`
// (any case) and any segment that looks like an access token written as
// [redacted]. It allocates only when it redacts.
func logPath(p string) string {
	if !mayHoldSecret(p) {
		return p
	}
	segs := strings.Split(p, "/")
	changed := false
	for i, s := range segs {
		if strings.HasPrefix(s, accessTokenPrefix) || (i > 0 && isSecretPathSegment(segs[i-1]) && s != "") {
			segs[i], changed = redacted, true
		}
	}
	if !changed {
		return p
	}
	return strings.Join(segs, "/")
}

// mayHoldSecret is logPath's cheap test, so a request's log line costs
// nothing more when its path holds neither a share nor a token.
func mayHoldSecret(p string) bool {
	return strings.Contains(p, accessTokenPrefix) || containsFold(p, "share")
}

func isSecretPathSegment(s string) bool {
	for _, name := range secretPathSegments {
		if strings.EqualFold(s, name) {
			return true
		}
	}
	return false
}

func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// logQuery is the raw query q as the access log writes it: each pair kept
// as sent, but the value of a secret parameter (secretQueryParams, its
// name compared unescaped and in any case) written as [redacted].
func logQuery(q string) string {
	var b strings.Builder
	b.Grow(len(q))
	for i, pair := range strings.Split(q, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		name, _, hasValue := strings.Cut(pair, "=")
		if unescaped, err := url.QueryUnescape(name); err == nil {
			name = unescaped
		}
		if hasValue && secretQueryParams[strings.ToLower(strings.TrimSpace(name))] {
			b.WriteString(pair[:strings.IndexByte(pair, '=')+1])
			b.WriteString(redacted)
			continue
		}
		b.WriteString(pair)
	}
	return b.String()
}
