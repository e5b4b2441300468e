// Package apicompat holds the tests of the API's change policy: the
// breaking-change gate (scripts/api-diff.sh, `make api-diff`) run with the
// real oasdiff on edited copies of a released spec, and the policy text of
// openapi.yaml kept true to the spec. The package has no code of its own.
package apicompat
