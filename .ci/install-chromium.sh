#!/usr/bin/env bash
# Installs Debian's headless Chromium for the HTML-timeline test (HtmlTimelineChromiumTest), if it is
# missing. Idempotent: does nothing when /usr/bin/chromium exists. Without it the test skips.
# .ci/run calls it when CI=true.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-chromium: not root, skipping (the HTML timeline test will be skipped)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
chromium --version
