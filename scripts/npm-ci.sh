#!/bin/sh
# Installs the Node tools (package.json) from package-lock.json, but only when
# node_modules is missing or was installed from another lockfile: the sha256 of
# package-lock.json is kept in node_modules/.lock-hash. Prints one line.
# Usage: sh scripts/npm-ci.sh   (from anywhere; works on the repo root)
set -eu
cd "$(dirname "$0")/.."

command -v node >/dev/null 2>&1 || { echo "npm-ci: node is not installed (Node 20.19+ is required)" >&2; exit 1; }

want=$(node -e 'process.stdout.write(require("crypto").createHash("sha256").update(require("fs").readFileSync("package-lock.json")).digest("hex"))')
have=$(cat node_modules/.lock-hash 2>/dev/null || true)

if [ "$want" = "$have" ]; then
	echo "npm-ci: node_modules is up to date with package-lock.json"
	exit 0
fi

if [ -d node_modules ]; then why="stale"; else why="missing"; fi
echo "npm-ci: node_modules is $why, running npm ci"
npm ci --no-audit --no-fund --loglevel=error >/dev/null
printf '%s\n' "$want" > node_modules/.lock-hash
