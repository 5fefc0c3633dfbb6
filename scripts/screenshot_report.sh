#!/usr/bin/env bash
# Renders a report.html in headless Chromium at a desktop width (1100 px) and a
# phone width (390 px), saves a full-page PNG of each, and fails when:
#  - the page is wider than the window at either width (content a reader would
#    have to scroll the whole page sideways for);
#  - a table's last column cannot be reached: every table sits in a box that
#    scrolls sideways; where the table is wider than its box, the box must
#    scroll (overflow-x auto or scroll), show a cue that more columns wait
#    (its background shadow), keep the first column in view (position:
#    sticky), and, scrolled to its end, show the whole last column inside the
#    box, right of the sticky first column and inside the window.
#   scripts/screenshot_report.sh target/report/report.html docs/report
#   -> docs/report-desktop.png, docs/report-390.png
# Needs Debian's `chromium` (installed here when missing: root and the package
# registry) and python3. Exit 1 on a failed check or an empty screenshot, 2
# when Chromium is missing.
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
# of it (the report itself has no JavaScript). The probe's script writes what
# it measured, as JSON, into the probe page's DOM, which --dump-dom prints:
# documentElement.scrollWidth is the width the page needs, innerWidth the
# width it was given; per table (each in its .scroll box), the box's widths,
# its overflow-x, its background (the cue), the first column's position, and
# where the last column's cells are once the box is scrolled to its end.
cp "$html" "$work/report.html"
probe() {
  cat >"$work/probe.html" <<HTML
<!doctype html><body style="margin:0"><iframe id="f" src="report.html" style="width:${1}px;height:900px;border:0"></iframe>
<pre id="out"></pre>
<script>
f.onload = function () {
  var w = f.contentWindow, d = f.contentDocument, de = d.documentElement;
  var tables = [];
  d.querySelectorAll(".scroll").forEach(function (box) {
    var t = box.querySelector("table"), h = box.previousElementSibling;
    var st = w.getComputedStyle(box);
    var rows = Array.prototype.slice.call(t.rows);
    box.scrollLeft = box.scrollWidth;
    var b = box.getBoundingClientRect();
    var last = rows.map(function (r) { var c = r.cells[r.cells.length - 1].getBoundingClientRect(); return [c.left, c.right]; });
    var first = rows.map(function (r) { return r.cells[0].getBoundingClientRect().right; });
    tables.push({
      title: h ? h.textContent : "(untitled)",
      box: [b.left, b.right], scroll_width: box.scrollWidth, client_width: box.clientWidth,
      overflow_x: st.overflowX, cue: st.backgroundImage,
      sticky: w.getComputedStyle(rows[0].cells[0]).position,
      columns: rows[0].cells.length, last: last, first_right: first
    });
    box.scrollLeft = 0;
  });
  document.getElementById("out").textContent = JSON.stringify({
    scroll_width: de.scrollWidth, inner_width: w.innerWidth, scroll_height: de.scrollHeight, tables: tables
  });
};
</script></body>
HTML
  chrome --allow-file-access-from-files --window-size=1200,1000 --virtual-time-budget=3000 \
    --dump-dom "file://$work/probe.html" >"$work/dom.html"
}
status=0
for spec in desktop:1100 390:390; do
  name=${spec%%:*} width=${spec##*:}
  probe "$width"
  python3 - "$work/dom.html" "$html" "$width" "$name" <<'PY' || status=1
import html, json, re, sys
dom, page, width, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
m = re.search(r'<pre id="out">(.*?)</pre>', open(dom, encoding="utf-8").read(), re.S)
if not m or not m.group(1).strip():
    sys.exit(f"{page} at {width} px: Chromium gave no layout")
lay = json.loads(html.unescape(m.group(1)))
print(f"{name}: window {lay['inner_width']} px, page {lay['scroll_width']} px wide, {lay['scroll_height']} px tall")
bad = []
if lay["inner_width"] != width:
    bad.append(f"Chromium laid out {lay['inner_width']} px, not {width} px")
if lay["scroll_width"] > lay["inner_width"]:
    bad.append(f"the page is {lay['scroll_width']} px wide in a {lay['inner_width']} px window (overflows)")
if not lay["tables"]:
    bad.append("no table found in a .scroll box")
for t in lay["tables"]:
    title, (left, right) = t["title"], t["box"]
    hidden = t["scroll_width"] - t["client_width"]
    last_left = min(c[0] for c in t["last"])
    last_right = max(c[1] for c in t["last"])
    first_right = max(t["first_right"])
    where = f"last column at {last_left:.0f}-{last_right:.0f} px, box {left:.0f}-{right:.0f} px"
    problems = []
    if last_right > right + 1 or last_right > lay["inner_width"] + 1:
        problems.append("the last column cannot be scrolled into view")
    if hidden > 1:
        if t["overflow_x"] not in ("auto", "scroll"):
            problems.append(f"wider than its box by {hidden} px, and the box does not scroll (overflow-x {t['overflow_x']})")
        if "gradient" not in t["cue"]:
            problems.append("scrolls without a cue (no shadow on the box)")
        if t["sticky"] != "sticky":
            problems.append("the first column scrolls away with the rest")
        if last_left < first_right - 1:
            problems.append("the last column stays under the first one")
    state = (
        f"scrolls {hidden} px (overflow-x {t['overflow_x']}, "
        f"cue {'yes' if 'gradient' in t['cue'] else 'none'}, first column {t['sticky']})"
        if hidden > 1 else "fits"
    )
    print(f"  {title} ({t['columns']} columns): {state}; {where} when scrolled to the end")
    bad += [f"table {title!r}: {p}" for p in problems]
for b in bad:
    print(f"{page} at {width} px: {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
  height=$(python3 -c 'import html,json,re,sys; print(json.loads(html.unescape(re.search(r"<pre id=\"out\">(.*?)</pre>", open(sys.argv[1]).read(), re.S).group(1)))["scroll_height"])' "$work/dom.html" 2>/dev/null || echo 2000)
  out="$prefix-$name.png"
  mkdir -p "$(dirname "$out")"
  height=$((height < 8000 ? height : 8000))
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
