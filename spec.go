// Package creativeapi embeds the API's single source, openapi.yaml, so the
// binary serves the very text it was generated from.
package creativeapi

import _ "embed"

// OpenAPIYAML is openapi.yaml as committed.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// APIChangelog is CHANGELOG-API.md, the API's changes by version (written
// by `make api-changelog`), which the reference at /docs links to.
//
//go:embed CHANGELOG-API.md
var APIChangelog []byte
