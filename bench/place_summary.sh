# Sourced by the placement benchmarks. place_summary ERR reads the summary
# line of `olla-onnx place -v` (the last "place: N buffers, max live ..." line
# of the file ERR) and sets: place_n (buffers), place_live (max live, bytes),
# place_arena (bytes), place_status (optimal, feasible, not-found),
# place_stop (none, budget, time), place_work (work units) and place_unit
# (the bytes of the searches' unit, from the last "(units of U)" line; empty
# when no search ran).
place_summary() {
    local line
    line=$(grep '^place: .*max live' "$1" | tail -1)
    place_n=$(echo "$line" | sed -n 's/^place: \([0-9]*\) buffers.*/\1/p')
    place_live=$(echo "$line" | sed -n 's/.*max live \([0-9]*\) bytes.*/\1/p')
    place_arena=$(echo "$line" | sed -n 's/.*arena \([0-9]*\) bytes.*/\1/p')
    place_status=$(echo "$line" | sed -n 's/.*work units, \([a-z-]*\),.*/\1/p')
    place_stop=$(echo "$line" | sed -n 's/.*stopped by \([a-z]*\),.*/\1/p')
    place_work=$(echo "$line" | sed -n 's/.* \([0-9]*\) work units.*/\1/p')
    place_unit=$(grep '(units of ' "$1" | tail -1 | sed -n 's/.*(units of \([0-9]*\)).*/\1/p')
}
