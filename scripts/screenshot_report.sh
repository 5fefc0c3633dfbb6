#!/usr/bin/env bash
# Render a report.html in headless Chromium and save a PNG, to see the report
# the way a user will. Not part of CI.
#   scripts/screenshot_report.sh target/report/report.html target/report/report.png
set -euo pipefail
html=${1:?usage: $0 REPORT.html [OUT.png]}
out=${2:-${html%.html}.png}
if ! command -v chromium >/dev/null; then
  echo "installing Debian's chromium (needs root and the package registry)" >&2
  apt-get install -y -q chromium >/dev/null
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size=1100,2400 \
  --screenshot="$(realpath -m "$out")" "file://$(realpath "$html")" 2>/dev/null
echo "$out"
