#!/bin/sh
# Makes sure the PostgreSQL server binaries (initdb, postgres) are installed:
# installs Debian's package when run as root, else prints the one command.
set -eu
if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "ensure-postgres: installing the PostgreSQL server (apt-get install postgresql)"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
	exit 0
fi
echo "ensure-postgres: PostgreSQL server binaries not found; install them with: sudo apt-get install -y postgresql" >&2
exit 1
