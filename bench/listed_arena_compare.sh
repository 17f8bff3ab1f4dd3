#!/bin/bash
# Two builds of olla-onnx on the same models with `--runtime listed`, both
# sharing modes, default budgets: one line per model and sharing with each
# build's planned peak, arena, (arena - peak) / peak, placement status and
# total seconds (from --report), and "same" or "differs" for the first three.
# A last line counts them. The two builds run one after the other on each
# model, so the seconds see the same load.
# usage: bench/listed_arena_compare.sh BASE_BIN NEW_BIN MODEL.onnx...
#   bench/listed_arena_compare.sh /tmp/base/build/olla-onnx build/olla-onnx /tmp/tr/m2/*.onnx
set -eu
if [ $# -lt 3 ]; then
    echo "usage: bench/listed_arena_compare.sh BASE_BIN NEW_BIN MODEL.onnx..." >&2
    exit 2
fi
BASE=$1 NEW=$2
shift 2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# one run: prints "peak arena frag status seconds", or "refused" when the
# tool refuses the model
run() {
    if ! "$1" -q --runtime listed --sharing "$2" --report "$W/r.json" "$3" "$W/o.onnx" 2>/dev/null; then
        echo refused
        return
    fi
    /usr/bin/python3 - "$W/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p, a = r["peak_bytes"], r["arena_bytes"]
print("%d %d %.4f%% %s %.2f" % (p, a, 100.0 * (a - p) / p, r["placement_status"], r["total_seconds"]))
PY
}
echo "| model | sharing | base peak | base arena | base above | base status | base s | new peak | new arena | new above | new status | new s | |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
same=0 differs=0 refused=0 base_s=0 new_s=0
for f in "$@"; do
    for sh in runtime none; do
        b=$(run "$BASE" "$sh" "$f")
        n=$(run "$NEW" "$sh" "$f")
        if [ "$b" = refused ] || [ "$n" = refused ]; then
            refused=$((refused + 1))
            echo "| $(basename "$f" .onnx) | $sh | $b | | | | | $n | | | | | |"
            continue
        fi
        read -r bp ba bf bst bs <<<"$b"
        read -r np na nf nst ns <<<"$n"
        verdict=same
        if [ "$bp $ba" != "$np $na" ]; then verdict=differs; fi
        [ "$verdict" = same ] && same=$((same + 1)) || differs=$((differs + 1))
        base_s=$(/usr/bin/python3 -c "print('%.2f' % ($base_s + $bs))")
        new_s=$(/usr/bin/python3 -c "print('%.2f' % ($new_s + $ns))")
        echo "| $(basename "$f" .onnx) | $sh | $bp | $ba | $bf | $bst | $bs | $np | $na | $nf | $nst | $ns | $verdict |"
    done
done
echo "same peak and arena: $same; differ: $differs; refused by either: $refused; total seconds base $base_s, new $new_s"
