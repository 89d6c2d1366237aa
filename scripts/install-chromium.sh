#!/usr/bin/env bash
# Headless Chromium + chromedriver for the page's browser test (tests/serve/test_page.py; it skips
# where they are absent). Installs Debian's chromium and chromium-driver when missing and this user
# may use apt-get; anything else (no apt, no root, no network) only prints why and leaves it to skip.
set -uo pipefail
command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: not root or no apt-get; the browser test will skip" >&2
  exit 0
fi
log=/tmp/rra-chromium-apt.log
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >"$log" 2>&1; then
  # a fresh machine may have no package lists yet: read them once and try again
  if ! { apt-get update -q >>"$log" 2>&1 &&
         DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >>"$log" 2>&1; }; then
    echo "install-chromium: apt-get install chromium chromium-driver failed (see $log); the browser test will skip" >&2
  fi
fi
exit 0
