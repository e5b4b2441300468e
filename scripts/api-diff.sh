#!/bin/sh
# The breaking-change gate (`make api-diff`, run by `make test`): compares
# the spec with the last released one and fails on any change oasdiff
# reports as breaking (ERR) or possibly breaking (WARN), with the levels
# adjusted to our change policy by api/breaking-levels.txt. It passes when
# - every such change is accepted, with a reason, in
#   api/accepted-breaking-changes.txt (a reviewed bug fix of the spec), or
# - info.version's major part is higher than the released one's: a new
#   major version may break (docs/frontend.md, "What may change").
# A version lower than the released one always fails.
#
# Usage: sh scripts/api-diff.sh [BASE REVISION]
#   BASE      the released spec (default: the highest version in api/released/)
#   REVISION  the spec to check (default: openapi.yaml)
#   ACCEPTED=file replaces api/accepted-breaking-changes.txt (tests).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)

abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$(pwd)" "$1" ;; esac; }

if [ $# -eq 2 ]; then
	base=$(abs "$1")
	revision=$(abs "$2")
elif [ $# -eq 0 ]; then
	base=$(ls "$root"/api/released/openapi-*.yaml 2>/dev/null | sort -V | tail -n 1)
	[ -n "$base" ] || { echo "api-diff: no released spec in api/released/" >&2; exit 1; }
	revision=$root/openapi.yaml
else
	echo "usage: sh scripts/api-diff.sh [BASE REVISION]" >&2
	exit 2
fi
accepted=$(abs "${ACCEPTED:-$root/api/accepted-breaking-changes.txt}")
levels=$root/api/breaking-levels.txt

base_version=$(sh "$root"/scripts/spec-version.sh "$base")
version=$(sh "$root"/scripts/spec-version.sh "$revision")
for v in "$base_version" "$version"; do
	if ! printf '%s\n' "$v" | grep -Eq '^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$'; then
		echo "api-diff: info.version \"$v\" is not MAJOR.MINOR.PATCH" >&2
		exit 1
	fi
done
if [ "$(printf '%s\n%s\n' "$base_version" "$version" | sort -V | head -n 1)" != "$base_version" ]; then
	echo "api-diff: info.version $version is lower than the released $base_version" >&2
	exit 1
fi

# Comments and blank lines stay out of what oasdiff reads: its levels parser
# refuses them, and an example in a comment could match a finding.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/api-diff.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
grep -Ev '^[[:space:]]*(#|$)' "$levels" >"$tmp/levels" || true
grep -Ev '^[[:space:]]*(#|$)' "$accepted" >"$tmp/accepted" || true
if grep -Ev ' -- reason: [^[:space:]]' "$tmp/accepted" >"$tmp/unexplained"; then
	echo "api-diff: every accepted breaking change needs \" -- reason: <why no client breaks>\"; these lines have none ($accepted):" >&2
	cat "$tmp/unexplained" >&2
	exit 1
fi

oasdiff() { (cd "$root" && go tool -modfile=tools/go.mod oasdiff "$@"); }
flags="--severity-levels $tmp/levels --err-ignore $tmp/accepted --warn-ignore $tmp/accepted --color never"

if [ "${base_version%%.*}" -lt "${version%%.*}" ]; then
	echo "api-diff: $base_version → $version is a new major version; its breaking changes are allowed:"
	# shellcheck disable=SC2086 # flags are words
	oasdiff breaking "$base" "$revision" $flags
	exit 0
fi

status=0
# shellcheck disable=SC2086
oasdiff breaking "$base" "$revision" $flags --fail-on WARN >"$tmp/report" || status=$?
cat "$tmp/report"
case $status in
0)
	echo "api-diff: $(basename "$revision") ($version) keeps every promise of the released $base_version"
	exit 0
	;;
1) ;;
*)
	echo "api-diff: oasdiff failed (exit $status)" >&2
	exit "$status"
	;;
esac
cat >&2 <<EOF

api-diff: FAILED: the changes above can break clients of the released $base_version.
Within a major version only additive changes are allowed (docs/frontend.md, "What may change"):
- make the change additive (a new optional field, a new operation), or deprecate instead of removing; or
- if it fixes a bug of the spec that no working client can depend on, accept it in
  api/accepted-breaking-changes.txt with these lines, each completed with its reason:
EOF
# shellcheck disable=SC2086
oasdiff breaking "$base" "$revision" $flags -f singleline |
	sed -n 's/^\(error\|warning\)\( at [^,]*\)\{0,1\}, in \(API \)\{0,1\}\(.*\) \[[a-z0-9-]*\]\..*$/\4 -- reason: /p' >&2
exit 1
