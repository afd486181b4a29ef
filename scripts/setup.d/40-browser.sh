#!/usr/bin/env bash
# Debian's Chromium for the web catalog's browser tests (tests/test_web_browser.py).
# Playwright drives it through executable_path=/usr/bin/chromium; no browser is
# downloaded.  Skipped when it is already installed.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "40-browser: /usr/bin/chromium is missing and this is not root; install Debian's chromium" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
/usr/bin/chromium --version
