# Sourced by the scripts that run ONNX Runtime for Node.js (tests/cli/
# test_ort.sh, test_ort_compare.sh, test_ort_harness.sh, test_ort_memory.sh,
# test_ort_memory_corpus.sh; bench/ort_memory_bench.sh, ort_opt_levels.sh,
# ort_written_bench.sh). The caller sets src (the source tree) and, where it
# uses the allocation counter, bin (the build tree); this sets
#   ort   this folder (the Node.js drivers and node_modules)
#   lib   the allocation counter, built in bin
# and defines
#   json_int NAME TEXT       the integer value of "NAME": in a line of JSON
#   ort_skip_unless_ready [onnx] [counter]
#                            exits 77 with a "skipped:" line unless node and
#                            onnxruntime-node are there (with onnx, and
#                            /usr/bin/python3 can import onnx; with counter,
#                            and the counter is built)
#   ort_training_skip_unless_ready
#                            exits 77 with a "skipped:" line unless node and
#                            onnxruntime-web's training build are there
#                            (train_run.mjs, train_compare.mjs)
ort="$src/tests/ort"
lib="${bin:-}/tests/ort/libolla_alloc_counter.so"

json_int() { sed -n "s/.*\"$1\":\([0-9-]*\).*/\1/p" <<<"$2"; }

ort_skip_unless_ready() {
    if ! command -v node >/dev/null || [ ! -d "$ort/node_modules/onnxruntime-node" ]; then
        echo "skipped: node or tests/ort/node_modules missing (run scripts/setup_ort.sh)"; exit 77
    fi
    local need
    for need in "$@"; do
        case $need in
        onnx)
            if ! /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
                echo "skipped: /usr/bin/python3 cannot import onnx"; exit 77
            fi ;;
        counter)
            if [ ! -f "$lib" ]; then
                echo "skipped: the allocation counter is not built in ${bin:-}/tests/ort (it needs Linux and glibc)"; exit 77
            fi ;;
        *) echo "ort_skip_unless_ready: unknown requirement '$need'" >&2; exit 2 ;;
        esac
    done
}

ort_training_skip_unless_ready() {
    if ! command -v node >/dev/null; then
        echo "skipped: node not found (install Node.js and npm, then run scripts/setup_ort.sh)"; exit 77
    fi
    local dist="$ort/node_modules/onnxruntime-web/dist"
    if [ ! -f "$dist/cjs/ort.training.wasm.min.js" ] || [ ! -f "$dist/ort-training-wasm-simd.wasm" ]; then
        echo "skipped: onnxruntime-web's training build is not in tests/ort/node_modules (run scripts/setup_ort.sh)"; exit 77
    fi
}
