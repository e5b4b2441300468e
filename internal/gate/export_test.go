package gate

// Fingerprint exposes fingerprint to the tests of the package's API.
func (op *Operation) Fingerprint(params map[string]string, body []byte) []byte {
	return op.fingerprint(params, body)
}
