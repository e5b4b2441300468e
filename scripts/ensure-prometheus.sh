#!/bin/sh
# Makes sure the Prometheus server and promtool are installed, for the
# metrics tests (internal/operations) and `make prometheus`: installs
# Debian's package when run as root, else prints the one command. (The
# tests start their own Prometheus; they need no service of the package.)
set -eu
if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "ensure-prometheus: installing Prometheus (apt-get install prometheus)"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
	exit 0
fi
echo "ensure-prometheus: prometheus or promtool not found; install them with: sudo apt-get install -y --no-install-recommends prometheus" >&2
exit 1
