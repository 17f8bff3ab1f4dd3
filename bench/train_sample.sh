# Sourced by the benchmarks over traced torchvision training steps
# (place_hidden_train.sh, hidden_train_defaults.sh), with SRC set to the
# source tree: their common arguments and the traced steps they read.
# train_sample_args USAGE DIR [olla-onnx binary ["" for the release build]]
# [MODEL ...] sets DIR (created), BIN, MODELS (the five of the first sample
# by default) and BATCHES (from the environment, "1 32" by default).
train_sample_args() {
    local usage=$1
    shift
    [ -n "${1:-}" ] || { echo "$usage" >&2; exit 2; }
    DIR=$1
    BIN=${2:-}
    shift $(($# < 2 ? $# : 2))
    MODELS=${*:-googlenet resnet50 mnasnet1_0 inception_v3 densenet121}
    BATCHES=${BATCHES:-1 32}
    if [ -z "$BIN" ]; then
        . "$SRC/bench/release_binary.sh"
        BIN=$(release_binary "$SRC")
    fi
    mkdir -p "$DIR"
}
# train_step MODEL BATCH prints the path of MODEL's training step at BATCH
# in DIR, traced by bench/trace_train.py first when DIR does not hold it.
train_step() {
    local f="$DIR/${1}_bs$2.onnx"
    [ -s "$f" ] || /usr/bin/python3 "$SRC/bench/trace_train.py" "$1" "$2" "$f" >/dev/null
    echo "$f"
}
