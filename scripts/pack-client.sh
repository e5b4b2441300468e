#!/bin/sh
# Packs the TypeScript client as the npm package @creativeapi/client
# (`make client-pack`, and the consumer tests in internal/e2e) the way its
# own folder does (`npm install && npm pack` in clients/typescript: prepack
# builds dist/), from a copy, so it writes nothing into the repository but
# OUT_DIR/creativeapi-client-<version>.tgz, the file a frontend team
# installs; CHANGELOG-API.md ships as the package's CHANGELOG.md. It needs
# only the package's own dependencies, not the repository's Node tools.
# Usage: sh scripts/pack-client.sh OUT_DIR   (prints the tarball's path last)
set -eu
[ $# -eq 1 ] || { echo "usage: sh scripts/pack-client.sh OUT_DIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
pkg=$root/clients/typescript

# The package's version is the API's, and it runs on the openapi-fetch it
# is tested against (the one the repository's lockfile installs).
version=$(sh "$root/scripts/spec-version.sh" "$root/openapi.yaml")
node - "$pkg/package.json" "$root/package-lock.json" "$version" <<'JS'
const fs = require("fs");
const [pkgFile, lockFile, version] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync(pkgFile, "utf8"));
const locked = JSON.parse(fs.readFileSync(lockFile, "utf8")).packages?.["node_modules/openapi-fetch"]?.version;
const fail = (msg) => { console.error(`pack-client: ${msg}`); process.exit(1); };
if (pkg.version !== version) fail(`clients/typescript/package.json has version ${pkg.version}, openapi.yaml ${version}: run \`make generate\``);
const pinned = pkg.dependencies?.["openapi-fetch"];
if (pinned !== locked) fail(`the package pins openapi-fetch ${pinned}, package-lock.json installs ${locked}: pin the same version in both`);
JS

stage=$(mktemp -d "${TMPDIR:-/tmp}/pack-client.XXXXXX")
trap 'rm -rf "$stage"' EXIT
cp -R "$pkg/package.json" "$pkg/README.md" "$pkg/src" "$pkg"/tsconfig.json "$pkg"/tsconfig.build.json "$stage/"
cp "$root/CHANGELOG-API.md" "$stage/CHANGELOG.md"
(cd "$stage" && npm install --no-audit --no-fund --prefer-offline --loglevel=error >&2)
name=$(cd "$stage" && npm pack --pack-destination "$out" --loglevel=error | tail -n 1)
echo "pack-client: packed @creativeapi/client $version" >&2
printf '%s\n' "$out/$name"
