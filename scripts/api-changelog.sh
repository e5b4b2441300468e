#!/bin/sh
# Writes CHANGELOG-API.md, the changes of the API a client can notice,
# newest first (`make api-changelog`, part of `make generate`): oasdiff's
# changelog of openapi.yaml against the last released spec ("Unreleased"),
# then of each released spec (api/released/) against the one before it.
# Breaking changes are marked with the levels of the gate
# (api/breaking-levels.txt); accepted ones stay marked.
# Usage: sh scripts/api-changelog.sh   (from anywhere)
set -eu
cd "$(dirname "$0")/.."

out=CHANGELOG-API.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/api-changelog.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
grep -Ev '^[[:space:]]*(#|$)' api/breaking-levels.txt >"$tmp/levels" || true

changes() {
	go tool -modfile=tools/go.mod oasdiff changelog "$1" "$2" -f markdown \
		--template api/changelog-template.md --severity-levels "$tmp/levels"
}

# Newest release first.
releases=$(ls api/released/openapi-*.yaml | sort -V -r)
latest=$(printf '%s\n' "$releases" | head -n 1)

{
	cat <<'EOF'
# API changelog

The changes of the HTTP API (`openapi.yaml`) a client can notice, newest
first. `make api-changelog` writes this file with oasdiff from the released
specs in `api/released/` and the current `openapi.yaml`: do not edit it.
What may change within a major version, and how deprecations work, is the
change policy in docs/frontend.md ("What may change") and in the reference at
`/docs`.

EOF
	printf '## Unreleased (openapi.yaml, version %s)\n\nSince %s:\n' "$(sh scripts/spec-version.sh openapi.yaml)" "$(sh scripts/spec-version.sh "$latest")"
	changes "$latest" openapi.yaml
	previous=""
	for spec in $releases; do
		if [ -n "$previous" ]; then
			printf '\n## %s\n\nSince %s:\n' "$(sh scripts/spec-version.sh "$previous")" "$(sh scripts/spec-version.sh "$spec")"
			changes "$spec" "$previous"
		fi
		previous=$spec
	done
	printf '\n## %s\n\nThe first released version.\n' "$(sh scripts/spec-version.sh "$previous")"
} | cat -s >"$tmp/out"

mv "$tmp/out" "$out"
chmod 644 "$out"
echo "api-changelog: wrote $out"
