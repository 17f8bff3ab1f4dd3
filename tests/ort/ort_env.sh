# Sourced by the scripts that run ONNX Runtime for Node.js with the allocation
# counter (tests/cli/test_ort_harness.sh, test_ort_memory.sh,
# test_ort_memory_corpus.sh; bench/ort_memory_bench.sh, ort_opt_levels.sh,
# ort_written_bench.sh). The caller sets src (the source tree) and bin (the
# build tree); this sets
#   ort   this folder (the Node.js drivers and node_modules)
#   lib   the allocation counter, built in bin
# and defines
#   json_int NAME TEXT       the integer value of "NAME": in a line of JSON
#   ort_skip_unless_ready [onnx]
#                            exits 77 with a "skipped:" line unless node,
#                            onnxruntime-node and the counter are there (and,
#                            with onnx, /usr/bin/python3 can import onnx)
ort="$src/tests/ort"
lib="$bin/tests/ort/libolla_alloc_counter.so"

json_int() { sed -n "s/.*\"$1\":\([0-9-]*\).*/\1/p" <<<"$2"; }

ort_skip_unless_ready() {
    if ! command -v node >/dev/null || [ ! -d "$ort/node_modules/onnxruntime-node" ]; then
        echo "skipped: node or tests/ort/node_modules missing (run scripts/setup_ort.sh)"; exit 77
    fi
    if [ "${1:-}" = onnx ] && ! /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
        echo "skipped: /usr/bin/python3 cannot import onnx"; exit 77
    fi
    if [ ! -f "$lib" ]; then
        echo "skipped: the allocation counter is not built in $bin/tests/ort (it needs Linux and glibc)"; exit 77
    fi
}
