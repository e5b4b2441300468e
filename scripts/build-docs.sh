#!/bin/sh
# Builds internal/docs/index.html, the API reference page served at /docs, from
# openapi.yaml with Redocly (`npm run docs:build`, `make generate`).
#
# The page must load nothing from the network and be byte-for-byte
# reproducible:
# - --inlineBundle embeds the Redoc script (no CDN <script>);
# - redocly.yaml sets `telemetry: off`, so the page gets
#   disableTelemetry: true whatever REDOCLY_TELEMETRY says;
# - the only remaining network load, the "API docs by Redocly" logo image from
#   cdn.redoc.ly, is replaced below by an inline SVG (the link stays);
# - the build embeds no time stamps or random ids (checked: two builds are
#   identical), so nothing else needs rewriting.
set -eu
cd "$(dirname "$0")/.."
sh scripts/npm-ci.sh >/dev/null

out=internal/docs/index.html
tmp=$(mktemp "${TMPDIR:-/tmp}/build-docs.XXXXXX")
log=$tmp.log
trap 'rm -f "$tmp" "$log"' EXIT
mkdir -p "$(dirname "$out")"

if ! node_modules/.bin/redocly build-docs openapi.yaml --inlineBundle --output "$tmp" >"$log" 2>&1; then
	cat "$log" >&2
	exit 1
fi

node - "$tmp" <<'JS'
const fs = require("fs");
const file = process.argv[2];
let html = fs.readFileSync(file, "utf8");
const svg = (w, text) =>
  "data:image/svg+xml," +
  encodeURIComponent(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="16" viewBox="0 0 ${w} 16">` +
      `<text x="0" y="12" font-family="sans-serif" font-size="12" font-weight="600" fill="#6b6b6b">${text}</text></svg>`,
  );
const swaps = [
  ["https://cdn.redoc.ly/redoc/logo-mini-full.svg", svg(50, "Redocly")],
  ["https://cdn.redoc.ly/redoc/logo-mini.svg", svg(10, "R")],
];
for (const [from, to] of swaps) {
  if (!html.includes(from)) {
    console.error(`build-docs: "${from}" not found: Redoc changed, review scripts/build-docs.sh`);
    process.exit(1);
  }
  html = html.split(from).join(to);
}
if (!html.includes('"disableTelemetry":true')) {
  console.error("build-docs: telemetry is not disabled (redocly.yaml must say `telemetry: off`)");
  process.exit(1);
}
fs.writeFileSync(file, html);
JS

mv "$tmp" "$out"
chmod 644 "$out"
echo "build-docs: wrote $out ($(wc -c <"$out" | tr -d ' ') bytes)"
