// Package migrations embeds the versioned schema migrations, applied in
// name order by `creativeapi migrate`. Together they must produce exactly
// schema.sql; a test proves it.
package migrations

import "embed"

// FS holds the NNNN_name.sql files.
//
//go:embed *.sql
var FS embed.FS
