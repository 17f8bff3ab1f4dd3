#!/usr/bin/python3
# The buffers of a placement instance that are live at some time whose load
# is at least THETA times max live, as a minimalloc CSV (id,lower,upper,size).
# Any placement of the whole instance places them too, so when no placement
# of them fits within a capacity (`olla-onnx place SUBSET.csv OUT.csv
# --capacity C` says none exists), none of the whole does: a lower bound.
# When they do fit at max live, a proof of more than max live for the whole
# must involve the buffers live only at times of lower load
# (bench/RESULTS.md, compiler traces: the busiest times' buffers alone).
#
# usage: bench/load_subset.py IN.csv OUT.csv THETA
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peak_holes import profile  # noqa: E402  (the load at every step)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: bench/load_subset.py IN.csv OUT.csv THETA")
    theta = float(sys.argv[3])
    if not 0.0 < theta <= 1.0:
        sys.exit(f"THETA must be in (0, 1], not {sys.argv[3]}")
    d = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    if d.shape[0] == 0 or d.shape[1] < 4:
        sys.exit(f"{sys.argv[1]}: needs rows of id,lower,upper,size")
    ids, lo, hi, sz = d[:, 0], d[:, 1], d[:, 2], d[:, 3]
    if (lo < 0).any():
        sys.exit(f"{sys.argv[1]}: a lower time below 0")
    load = profile(lo, hi, sz)
    most = int(load.max())
    busy = load >= theta * most
    marked = np.concatenate([[0], np.cumsum(busy)])
    keep = (marked[hi] - marked[lo] > 0) & (sz > 0) & (hi > lo)
    with open(sys.argv[2], "w") as f:
        f.write("id,lower,upper,size\n")
        for i in np.where(keep)[0]:
            f.write(f"{ids[i]},{lo[i]},{hi[i]},{sz[i]}\n")
    print(f"{int(keep.sum())} of {len(ids)} buffers live at {int(busy.sum())} times of load >= {theta} x max live {most}")


if __name__ == "__main__":
    main()
