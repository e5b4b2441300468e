package auth

// NormalizeEmail is the one form of an email the service stores, looks up
// and throttles sign-ins by: ASCII letters in lower case, every other
// character exactly as sent. Unicode case folding is not used on purpose:
// it maps distinct addresses onto one (lower("vİewer") is "vi̇ewer" or
// "viewer" depending on the database's locale), so an address that is not
// the user's could sign in as them. The users table accepts only this form
// (migration 0003).
func NormalizeEmail(email string) string {
	for i := 0; i < len(email); i++ {
		if c := email[i]; 'A' <= c && c <= 'Z' {
			b := []byte(email)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return email
}
