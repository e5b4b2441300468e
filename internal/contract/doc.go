// Package contract holds the tests that hold openapi.yaml itself to account:
// every (operation, status) pair it declares must have been produced by the
// server and validated by some test of the suite, and the spec must avoid the
// schema patterns our tools read differently from each other. It has no code
// of its own.
package contract
