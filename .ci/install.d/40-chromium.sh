#!/usr/bin/env bash
# Debian's Chromium for the console's browser tests (test/browser/, driven by puppeteer-core with
# this system browser; puppeteer downloads nothing). Fonts for readable screenshots.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi
chromium --version
