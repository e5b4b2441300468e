// Package creativeapi embeds the API's single source, openapi.yaml, so the
// binary serves the very text it was generated from.
package creativeapi

import _ "embed"

// OpenAPIYAML is openapi.yaml as committed.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte
