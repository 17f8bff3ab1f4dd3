# The placement window of solver/place_window.c as an instance of its own:
# the buffers of a lifetimes CSV that start or end in the window [A, B],
# cut to it, against the capacity left below the buffers live across the
# whole window (they meet every buffer of the window, so in any placement
# within max live they can be moved on top as one block). If the window
# has no placement within that capacity, neither has the whole instance
# within max live; a placement of the window says nothing about the rest.
#
# usage: /usr/bin/python3 bench/window_instance.py LIFETIMES.csv A B OUT.csv [ALIGN]
#   LIFETIMES.csv: id,lower,upper,size[,offset] (olla-onnx --lifetimes, or minimalloc's CSV)
#   ALIGN: sizes are rounded up to it and written in its units (default 64)
# prints the window's buffers, the block, the capacity (in units) and the
# free units at each time of the window; then decide it with
#   olla-onnx place OUT.csv o.csv --align 1 --capacity CAPACITY --time-limit 0 --work-limit UNITS -v
import csv
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: window_instance.py LIFETIMES.csv A B OUT.csv [ALIGN]")
    a, b = int(sys.argv[2]), int(sys.argv[3])
    align = int(sys.argv[5]) if len(sys.argv) > 5 else 64
    items = []
    with open(sys.argv[1]) as f:
        for r in csv.DictReader(f):
            lo, up, size = int(r["lower"]), int(r["upper"]), (int(r["size"]) + align - 1) // align
            if size > 0 and up > lo:
                items.append((lo, up, size))
    events = {}
    for lo, up, size in items:
        events[lo] = events.get(lo, 0) + size
        events[up] = events.get(up, 0) - size
    load, max_live = 0, 0
    for t in sorted(events):
        load += events[t]
        max_live = max(max_live, load)
    block, window = 0, []
    for lo, up, size in items:
        if up <= a or lo > b:
            continue
        if lo <= a and up > b:
            block += size
        else:
            window.append((max(lo, a), min(up, b + 1), size))
    cap = max_live - block
    free = [cap - sum(s for lo, up, s in window if lo <= t < up) for t in range(a, b + 1)]
    with open(sys.argv[4], "w") as f:
        f.write("id,lower,upper,size\n")
        for i, (lo, up, size) in enumerate(window):
            f.write("%d,%d,%d,%d\n" % (i, lo, up, size))
    print("window %d..%d: %d buffers, block %d, capacity %d (max live %d), free at each time %s"
          % (a, b, len(window), block, cap, max_live, free))


main()
