#!/bin/sh
# Builds the TypeScript client as the npm package @creativeapi/client and
# packs it (`make client-pack`, and the consumer test in internal/e2e): tsc
# compiles clients/typescript/src to ES modules with their declarations,
# CHANGELOG-API.md ships as the package's CHANGELOG.md, and npm pack writes
# OUT_DIR/creativeapi-client-<version>.tgz, the file a frontend team
# installs. It writes nothing else into the repository.
# Usage: sh scripts/pack-client.sh OUT_DIR   (prints the tarball's path last)
set -eu
[ $# -eq 1 ] || { echo "usage: sh scripts/pack-client.sh OUT_DIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
pkg=$root/clients/typescript
sh "$root/scripts/npm-ci.sh" >&2

# The package's version is the API's, and it runs on the openapi-fetch it
# was compiled and tested against (the repository's lockfile).
version=$(sh "$root/scripts/spec-version.sh" "$root/openapi.yaml")
node - "$pkg/package.json" "$root/node_modules/openapi-fetch/package.json" "$version" <<'JS'
const fs = require("fs");
const [pkgFile, fetchFile, version] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync(pkgFile, "utf8"));
const installed = JSON.parse(fs.readFileSync(fetchFile, "utf8")).version;
const fail = (msg) => { console.error(`pack-client: ${msg}`); process.exit(1); };
if (pkg.version !== version) fail(`clients/typescript/package.json has version ${pkg.version}, openapi.yaml ${version}: run \`make generate\``);
const pinned = pkg.dependencies?.["openapi-fetch"];
if (pinned !== installed) fail(`the package pins openapi-fetch ${pinned}, package-lock.json installs ${installed}: pin the same version in both`);
JS

stage=$(mktemp -d "${TMPDIR:-/tmp}/pack-client.XXXXXX")
trap 'rm -rf "$stage"' EXIT
cp "$pkg/package.json" "$pkg/README.md" "$stage/"
cp "$root/CHANGELOG-API.md" "$stage/CHANGELOG.md"
node "$root/node_modules/typescript/bin/tsc" -p "$pkg/tsconfig.build.json" --outDir "$stage/dist"

name=$(cd "$stage" && npm pack --pack-destination "$out" --loglevel=error | tail -n 1)
echo "pack-client: packed @creativeapi/client $version" >&2
printf '%s\n' "$out/$name"
