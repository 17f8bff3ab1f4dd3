#!/usr/bin/python3
# Where a placement loses space at its busiest time: the holes at that time
# and who made them (bench/RESULTS.md, compiler traces at 1.005x max live).
#
# usage: bench/peak_holes.py PLACED.csv [--holes K] [--time T]
#   PLACED.csv: id,lower,upper,size,offset (what `olla-onnx place` writes).
#
# At the busiest time tp (or T) every byte below max live must be used by a
# buffer live at tp for the arena to reach max live, so the holes there sum
# to the arena's excess at tp. For each of the K largest holes it prints the
# address range, the buffer that last held that range before tp (the one
# that left it) and the first that holds it after tp (the one that takes
# it), the span of time during which the whole range is free, and the
# fillers: the buffers live at tp whose lifetimes lie inside that span, the
# only ones that could have used the range at tp without moving the others.
import argparse
import sys

import numpy as np


def load(path):
    d = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    if d.shape[1] < 5:
        sys.exit(f"{path}: needs an offset column (id,lower,upper,size,offset): run olla-onnx place first")
    return d[:, 0], d[:, 1], d[:, 2], d[:, 3], d[:, 4]


def profile(lo, hi, sz):
    """The live bytes at every step."""
    t = np.zeros(int(hi.max()) + 2, dtype=np.int64)
    np.add.at(t, lo, sz)
    np.add.at(t, hi, -sz)
    return np.cumsum(t)


def holes_at(tp, lo, hi, sz, off):
    """(start, end, index below, index above) of every hole at time tp."""
    live = np.where((lo <= tp) & (hi > tp) & (sz > 0))[0]
    live = live[np.argsort(off[live], kind="stable")]
    out, cur, below = [], 0, -1
    for i in live:
        if off[i] > cur:
            out.append((cur, int(off[i]), below, int(i)))
        if off[i] + sz[i] > cur:
            cur, below = int(off[i] + sz[i]), int(i)
    return out, cur


def free_span(g0, g1, tp, lo, hi, sz, off):
    """(a, b, left, taker): the range [g0, g1) is free during [a, b) around tp;
    left is the buffer that ends at a there, taker the one starting at b."""
    meet = np.where((off < g1) & (off + sz > g0) & (sz > 0))[0]
    before = meet[hi[meet] <= tp]
    after = meet[lo[meet] > tp]
    left = int(before[np.argmax(hi[before])]) if len(before) else -1
    taker = int(after[np.argmin(lo[after])]) if len(after) else -1
    a = int(hi[left]) if left >= 0 else 0
    b = int(lo[taker]) if taker >= 0 else int(hi.max())
    return a, b, left, taker


def describe(i, ids, lo, hi, sz):
    return "none" if i < 0 else f"#{ids[i]} [{lo[i]},{hi[i]}) {sz[i]} B"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("placed")
    ap.add_argument("--holes", type=int, default=5)
    ap.add_argument("--time", type=int, default=None)
    args = ap.parse_args()
    ids, lo, hi, sz, off = load(args.placed)
    prof = profile(lo, hi, sz)
    ml = int(prof.max())
    tp = args.time if args.time is not None else int(np.argmax(prof))
    arena = int((off + sz).max())
    holes, top = holes_at(tp, lo, hi, sz, off)
    print(f"max live {ml}, arena {arena} ({arena / ml:.5f}), busiest time {tp} (load {prof[tp]}), "
          f"top there {top}, {len(holes)} holes of {sum(h[1] - h[0] for h in holes)} B")
    live_tp = (lo <= tp) & (hi > tp)
    for g0, g1, _, _ in sorted(holes, key=lambda h: h[0] - h[1])[: args.holes]:
        a, b, left, taker = free_span(g0, g1, tp, lo, hi, sz, off)
        fill = np.where(live_tp & (lo >= a) & (hi <= b))[0]
        same = left >= 0 and taker >= 0 and sz[left] == sz[taker]
        print(f"hole [{g0},{g1}) {g1 - g0} B, free during [{a},{b})")
        print(f"  left by {describe(left, ids, lo, hi, sz)}; taken by {describe(taker, ids, lo, hi, sz)}"
              f"{' (same size)' if same else ''}")
        big = fill[np.argsort(-sz[fill])][:4]
        print(f"  fillers: {len(fill)} buffers, {int(sz[fill].sum())} B; largest: "
              + (", ".join(describe(int(i), ids, lo, hi, sz) for i in big) or "none"))


if __name__ == "__main__":
    main()
