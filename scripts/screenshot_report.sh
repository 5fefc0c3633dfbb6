#!/usr/bin/env bash
# Renders a report.html in headless Chromium at a desktop width (1100 px) and a
# phone width (390 px), saves a full-page PNG of each, and fails when the page
# is wider than the window at either width (content a reader would have to
# scroll sideways for; tables scroll inside their own box and do not count).
#   scripts/screenshot_report.sh target/report/report.html docs/report
#   -> docs/report-desktop.png, docs/report-390.png
# Needs Debian's `chromium` (installed here when missing: root and the package
# registry). Exit 1 on overflow or an empty screenshot, 2 when Chromium is missing.
set -euo pipefail
html=${1:?usage: $0 REPORT.html [OUT_PREFIX]}
prefix=${2:-${html%.html}}
if ! command -v chromium >/dev/null; then
  echo "installing Debian's chromium (needs root and the package registry)" >&2
  apt-get install -y -q chromium fonts-dejavu-core >/dev/null || exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chrome() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --hide-scrollbars "$@" 2>/dev/null
}
# Chromium will not lay out a window narrower than 500 px, so the page is
# measured in an iframe of the width asked for, from a probe page beside a copy
# of it (the report itself has no JavaScript). documentElement.scrollWidth is
# the width the page needs; innerWidth the width it was given.
cp "$html" "$work/report.html"
probe() {
  cat >"$work/probe.html" <<HTML
<!doctype html><body style="margin:0"><iframe id="f" src="report.html" style="width:${1}px;height:900px;border:0"></iframe>
<script>f.onload=function(){var d=f.contentDocument.documentElement;document.body.setAttribute("data-layout",[d.scrollWidth,f.contentWindow.innerWidth,d.scrollHeight].join(" "))}</script></body>
HTML
  chrome --allow-file-access-from-files --window-size=1200,1000 --virtual-time-budget=3000 \
    --dump-dom "file://$work/probe.html" |
    sed -n 's/.*data-layout="\([0-9]*\) \([0-9]*\) \([0-9]*\)".*/\1 \2 \3/p' | head -1
}
status=0
for spec in desktop:1100 390:390; do
  name=${spec%%:*} width=${spec##*:}
  layout=$(probe "$width")
  if [ -z "$layout" ]; then
    echo "$html at $width px: Chromium gave no layout" >&2
    exit 1
  fi
  read -r scroll_w inner_w scroll_h <<<"$layout"
  echo "$name: window $inner_w px, page $scroll_w px wide, $scroll_h px tall"
  if [ "$inner_w" -ne "$width" ]; then
    echo "$html: Chromium laid out $inner_w px, not $width px" >&2
    status=1
  fi
  if [ "$scroll_w" -gt "$inner_w" ]; then
    echo "$html: the page is $scroll_w px wide in a $inner_w px window (overflows)" >&2
    status=1
  fi
  out="$prefix-$name.png"
  height=$((scroll_h < 8000 ? scroll_h : 8000))
  chrome --window-size="$width,$height" --virtual-time-budget=2000 \
    --screenshot="$(realpath -m "$out")" "file://$(realpath "$html")"
  # The PNG's own header: present, and as wide as the window.
  python3 - "$out" "$width" <<'PY' || status=1
import struct, sys
path, width = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()
if len(data) < 1000 or data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(f"{path}: not a PNG or nearly empty ({len(data)} bytes)")
w, h = struct.unpack(">II", data[16:24])
if w != width:
    sys.exit(f"{path}: {w} px wide, expected {width}")
print(f"{path}: {w}x{h}, {len(data)} bytes")
PY
done
exit "$status"
