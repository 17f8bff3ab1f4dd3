#!/usr/bin/python3
"""Statistics of minimalloc-format placement traces, to compare generated
traces with real ones (bench/place_compiler_traces.sh): buffers, time
steps, max live, buffers live at the busiest time, the size-weighted share
of pairs of them whose lifetimes cross (one created earlier is freed
earlier: neither lifetime holds the other), the share of buffers by
lifetime (at most 10 steps, 11-100, over 1000), size quantiles (10%, 50%,
90%, 99%, max) and the share of all bytes in the largest 1% of buffers.
usage: bench/trace_stats.py TRACE.csv..."""
import sys

import numpy as np


def crossing(lo, up, sz):
    """Size-weighted share of crossing pairs among buffers all live at one time."""
    o = np.lexsort((-up, lo))
    u, s = up[o], sz[o].astype(float)
    cross = total = 0.0
    for j in range(1, len(u)):
        cross += s[:j][u[:j] < u[j]].sum() * s[j]
        total += s[:j].sum() * s[j]
    return cross / total if total > 0 else 0.0


def stats(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1, usecols=(1, 2, 3), dtype=np.int64, ndmin=2)
    keep = (a[:, 1] > a[:, 0]) & (a[:, 2] > 0)
    lo, up, sz = a[keep, 0], a[keep, 1], a[keep, 2]
    times = np.unique(np.concatenate([lo, up]))
    load = np.zeros(len(times) + 1, dtype=np.int64)
    np.add.at(load, np.searchsorted(times, lo), sz)
    np.add.at(load, np.searchsorted(times, up), -sz)
    load = np.cumsum(load)[:-1]
    p = times[int(np.argmax(load))]
    at = (lo <= p) & (up > p)
    life = up - lo
    q = [int(np.quantile(sz, x)) for x in (0.1, 0.5, 0.9, 0.99)] + [int(sz.max())]
    top = np.sort(sz)[::-1][: max(1, len(sz) // 100)].sum() / sz.sum()
    return "| %s | %d | %d | %d | %d | %.3f | %.2f / %.2f / %.2f | %s | %.2f |" % (
        path.split("/")[-1], len(sz), int(up.max() - lo.min()), int(load.max()), int(at.sum()),
        crossing(lo[at], up[at], sz[at]), (life <= 10).mean(), ((life > 10) & (life <= 100)).mean(),
        (life > 1000).mean(), " ".join(str(x) for x in q), top)


print("| trace | buffers | steps | max live | live at the peak | crossing at the peak | lifetimes <= 10 / 11-100 / > 1000 | sizes 10% 50% 90% 99% max | bytes in the largest 1% |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sys.argv[1:]:
    print(stats(f))
