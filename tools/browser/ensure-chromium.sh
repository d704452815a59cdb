#!/bin/sh
# Makes a headless Chromium available for the browser test of GET /docs (test/api/docs-browser.test.ts):
# Debian's `chromium` package, driven by playwright-core (which downloads no browser of its own).
# Prints the browser's path. Installs it with apt-get when missing and allowed (root, apt-get
# present); otherwise says what to install and exits 1. CHROMIUM_PATH overrides the search.
set -eu
find_browser() {
  for candidate in "${CHROMIUM_PATH:-}" "$(command -v chromium || true)" "$(command -v chromium-browser || true)" /usr/bin/chromium /usr/lib/chromium/chromium; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
  done
  return 1
}
if find_browser; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium (apt-get install -y chromium)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends chromium >&2 || { apt-get update >&2 && apt-get install -y --no-install-recommends chromium >&2; }
  find_browser && exit 0
fi
echo "no Chromium found: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH" >&2
exit 1
