#!/bin/sh
# Prints info.version of an OpenAPI YAML file (default: openapi.yaml), the
# one version of the API: the gate, the changelog, the release snapshot and
# the npm package of the client all read it from here.
# Usage: sh scripts/spec-version.sh [FILE]
set -eu
file=${1:-$(dirname "$0")/../openapi.yaml}
version=$(awk '/^info:/ { inside = 1; next }
	inside && /^[^ #]/ { exit }
	inside && /^  version:/ { v = $2; gsub(/["'\'']/, "", v); print v; exit }' "$file")
if [ -z "$version" ]; then
	echo "spec-version: no info.version in $file" >&2
	exit 1
fi
printf '%s\n' "$version"
