#!/bin/sh
# Makes sure a Chromium for the browser test of /docs (internal/e2e) is
# installed: $CHROMIUM or Debian's /usr/bin/chromium. Installs Debian's
# package when run as root, else prints the one command.
set -eu
if [ -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "ensure-chromium: installing Chromium (apt-get install chromium)"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
	exit 0
fi
echo "ensure-chromium: chromium not found; install it with: sudo apt-get install -y chromium (or set CHROMIUM=/path/to/chromium)" >&2
exit 1
