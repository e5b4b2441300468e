// Package docs embeds the API reference page rendered from openapi.yaml by
// `make generate` (Redoc, self-contained: it loads nothing from a CDN).
package docs

import _ "embed"

// HTML is the rendered reference page served at /docs.
//
//go:embed index.html
var HTML []byte
