#!/usr/bin/python3
"""Checks the geometry of an olla-onnx SVG as a browser lays it out.

  svg_geometry.py page PLAN.svg PAGE.html
      wraps the SVG in a page whose script measures, in screen pixels, every
      axis tick (its value read from its label, with units), every level line
      and every text's box, and writes them as JSON into <pre id="geometry">.
  svg_geometry.py check DOM.html REPORT.json
      reads that JSON from Chromium's --dump-dom output and checks that
      the ticks of each axis lie on one straight line (value -> pixel), that
      the input-order peak (as the runtime runs it), planned peak, lower
      bound and arena lines sit where the axis puts the report's numbers
      (within 1 px), and that no two
      texts overlap. Prints one line per failure; exits 1 on any.
"""
import html
import json
import re
import sys

MEASURE = r"""
<pre id="geometry"></pre>
<script>
const UNITS = {B: 1, KiB: 1024, MiB: 1048576, GiB: 1073741824, TiB: 1099511627776};
function centreY(el) { const r = el.getBoundingClientRect(); return r.top + r.height / 2; }
function ticks(cls) {
  return [...document.querySelectorAll('g.' + cls + ' g.tick')].map(g => {
    const label = g.querySelector('text').textContent.trim();
    const m = label.match(/^([0-9.]+) (B|KiB|MiB|GiB|TiB)$/);
    return {label: label, value: m ? parseFloat(m[1]) * UNITS[m[2]] : null, y: centreY(g.querySelector('line'))};
  });
}
const levels = {};
for (const l of document.querySelectorAll('line.level'))
  levels[l.getAttribute('class').replace('level ', '')] = centreY(l);
const texts = [...document.querySelectorAll('text')].map(t => {
  const r = t.getBoundingClientRect();
  return {text: t.textContent, box: [r.left, r.top, r.right, r.bottom]};
});
document.getElementById('geometry').textContent = JSON.stringify(
  {live: ticks('live-y-ticks'), arena: ticks('arena-y-ticks'), levels: levels, texts: texts});
</script>
"""


def page(svg_path, html_path):
    svg = open(svg_path, encoding="utf-8").read()
    svg = re.sub(r"^<\?xml[^>]*\?>\s*", "", svg)
    with open(html_path, "w", encoding="utf-8") as f:
        f.write('<!DOCTYPE html><html><body style="margin:0">' + svg + MEASURE + "</body></html>")


def fit(ticks):
    """Least squares y = a + b * value over the ticks; (a, b, worst residual)."""
    n = len(ticks)
    sx = sum(t["value"] for t in ticks)
    sy = sum(t["y"] for t in ticks)
    sxx = sum(t["value"] ** 2 for t in ticks)
    sxy = sum(t["value"] * t["y"] for t in ticks)
    b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    a = (sy - b * sx) / n
    worst = max(abs(a + b * t["value"] - t["y"]) for t in ticks)
    return a, b, worst


def overlaps(p, q):
    (a0, a1, a2, a3), (b0, b1, b2, b3) = p["box"], q["box"]
    if a2 - a0 <= 0 or b2 - b0 <= 0:
        return False
    slack = 0.5
    return a0 < b2 - slack and b0 < a2 - slack and a1 < b3 - slack and b1 < a3 - slack


def check(dom_path, report_path):
    dom = open(dom_path, encoding="utf-8").read()
    m = re.search(r'<pre id="geometry">(.*?)</pre>', dom, re.S)
    if not m or not m.group(1).strip():
        print("FAIL: the page did not report its geometry")
        return 1
    g = json.loads(html.unescape(m.group(1)))
    rep = json.load(open(report_path))
    failures = []
    expected = {
        "live": {"input-peak": rep["input_executed_peak_bytes"], "planned-peak": rep["peak_bytes"]},
        "arena": {"arena-end": rep["arena_bytes"]},
    }
    if rep.get("lower_bound_bytes") is not None:
        expected["live"]["lower-bound"] = rep["lower_bound_bytes"]
    for axis, lines in expected.items():
        ticks = g[axis]
        bad = [t["label"] for t in ticks if t["value"] is None]
        if len(ticks) < 3 or bad:
            failures.append(f"{axis} axis: {len(ticks)} ticks, unreadable labels {bad}")
            continue
        a, b, worst = fit(ticks)
        if worst > 0.5 or b >= 0:
            failures.append(f"{axis} axis: ticks are not one linear scale going up (worst {worst:.2f} px)")
        for cls, value in lines.items():
            if cls not in g["levels"]:
                failures.append(f"no {cls} line")
                continue
            want, got = a + b * value, g["levels"][cls]
            if abs(want - got) > 1.0:
                failures.append(f"{cls} line at y={got:.1f}, its value {value} is at y={want:.1f} on the axis")
    texts = g["texts"]
    for i in range(len(texts)):
        for k in range(i + 1, len(texts)):
            if overlaps(texts[i], texts[k]):
                failures.append(f"labels overlap: '{texts[i]['text']}' and '{texts[k]['text']}'")
    for f in failures:
        print("FAIL: " + f)
    checked = sum(len(v) for v in expected.values())
    print(f"geometry: {checked} lines against their axes, {len(texts)} labels, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "page":
        page(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    sys.exit(__doc__)
