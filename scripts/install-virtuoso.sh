#!/usr/bin/env bash
# Virtuoso 7 for the tests that run against a real Virtuoso (they skip where it is absent).
# Installs Debian's virtuoso-opensource when it is missing and this user may use apt-get;
# anything else (no apt, no root, no network) only prints why and leaves the tests to skip.
set -uo pipefail
command -v virtuoso-t >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-virtuoso: not root or no apt-get; the Virtuoso tests will skip" >&2
  exit 0
fi
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q virtuoso-opensource >/tmp/rra-virtuoso-apt.log 2>&1; then
  echo "install-virtuoso: apt-get install virtuoso-opensource failed (see /tmp/rra-virtuoso-apt.log); the Virtuoso tests will skip" >&2
fi
exit 0
