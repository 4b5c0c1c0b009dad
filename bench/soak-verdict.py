#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/soak.sh's verdict and plot: from its CSV, after the first fifth
# (warm-up), the least-squares slope of each series, projected over the
# rest of the run; RSS may grow at most max(2 MiB, 5%), descriptors at
# most 4. Draws every series, each scaled to its own range, as an SVG.
# Usage: soak-verdict.py CSV SVG; exit 1 if something grew.
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
if len(rows) < 5:
    sys.exit("soak-verdict: %d samples: too few to judge" % len(rows))
t = [float(r["t_s"]) for r in rows]
series = {k: [float(r[k]) for r in rows] for k in rows[0] if k != "t_s"}
bounds = {
    "rss_parent_kb": lambda m: max(2048, 0.05 * m),
    "rss_child_kb": lambda m: max(2048, 0.05 * m),
    "fds_parent": lambda m: 4,
    "fds_child": lambda m: 4,
}


def slope(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return (sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
            if sxx else 0.0)


start = len(rows) // 5
grew = False
for name, ys in series.items():
    xs, tail = t[start:], ys[start:]
    mean = sum(tail) / len(tail)
    growth = slope(xs, tail) * (xs[-1] - xs[0])
    bound = bounds.get(name)
    verdict = ""
    if bound:
        ok = growth <= bound(mean)
        verdict = " ok (bound %.0f)" % bound(mean) if ok else \
            " GREW (bound %.0f)" % bound(mean)
        grew |= not ok
    print("soak: %-14s first %10.1f last %10.1f mean %10.1f "
          "trend over the run %+9.1f%s"
          % (name, ys[0], ys[-1], mean, growth, verdict))

# The plot: each series on its own scale, in one chart.
W, H, PAD = 900, 420, 50
colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f"]
out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
       'font-family="sans-serif" font-size="12">' % (W, H + 120),
       '<rect width="100%" height="100%" fill="white"/>',
       '<text x="%d" y="20">greygated soak: each series scaled to its own '
       'range (min..max in the legend); x: %.0f s</text>' % (PAD, t[-1]),
       '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>'
       % (PAD, H, W - PAD, H)]
for i, (name, ys) in enumerate(series.items()):
    lo, hi = min(ys), max(ys)
    span = (hi - lo) or 1.0
    pts = " ".join("%.1f,%.1f" % (PAD + (x - t[0]) / ((t[-1] - t[0]) or 1)
                                  * (W - 2 * PAD),
                                  H - 10 - (y - lo) / span * (H - 60))
                   for x, y in zip(t, ys))
    c = colours[i % len(colours)]
    out.append('<polyline fill="none" stroke="%s" points="%s"/>' % (c, pts))
    out.append('<text x="%d" y="%d" fill="%s">%s: %.1f .. %.1f</text>'
               % (PAD + (i % 2) * 420, H + 25 + (i // 2) * 18, c, name, lo,
                  hi))
out.append("</svg>")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
sys.exit(1 if grew else 0)
