#!/bin/sh
# Releases the API at openapi.yaml's info.version (`make api-release`): the
# gate must pass, then openapi.yaml is copied to
# api/released/openapi-<version>.yaml (what the gate compares with from now
# on), the accepted breaking changes are emptied (they are part of this
# release now) and CHANGELOG-API.md is rewritten. Commit the result, then
# pack the client (`make client-pack`): its version is the same.
# Usage: sh scripts/api-release.sh
set -eu
cd "$(dirname "$0")/.."

version=$(sh scripts/spec-version.sh openapi.yaml)
snapshot=api/released/openapi-$version.yaml
if [ -e "$snapshot" ]; then
	if cmp -s openapi.yaml "$snapshot"; then
		echo "api-release: $version is released already ($snapshot)"
		exit 0
	fi
	echo "api-release: $version was released with another openapi.yaml: raise info.version first" >&2
	exit 1
fi

sh scripts/api-diff.sh
cp openapi.yaml "$snapshot"
accepted=api/accepted-breaking-changes.txt
grep -E '^[[:space:]]*(#|$)' "$accepted" >"$accepted.tmp" || true
mv "$accepted.tmp" "$accepted"
sh scripts/api-changelog.sh
echo "api-release: released $version as $snapshot; commit it with CHANGELOG-API.md and $accepted"
