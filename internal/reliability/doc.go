// Package reliability holds the process-level tests: the real creativeapi
// binary, built by the tests, killed, terminated and starved of its
// database under load. The fast runs are part of `go test ./...`; SOAK=1
// (`make soak`) runs them longer.
package reliability
