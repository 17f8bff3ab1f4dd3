# Sourced by the corpus benchmarks: converts models with olla-onnx --report
# and leaves one report per model in OUT/<folder>/<model>.json (a one-line
# {"model","error"} record where the conversion failed; the reports are read
# by bench/reports.py).
#
#   convert_corpus OUT BUILD LIMIT BINDINGS MODEL...
#
# BINDINGS is a function of the model's name (folder/model) that prints the
# NAME=VALUE dimension bindings to offer; tests/tools/dim_names.py keeps the
# ones the model declares, as --dim flags.
convert_corpus() {
  local out=$1 build=$2 limit=$3 bindings=$4 here m name dims
  shift 4
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  for m in "$@"; do
    [ -f "$m" ] || continue
    name=$(basename "$(dirname "$m")")/$(basename "$m" .onnx)
    mkdir -p "$out/$(dirname "$name")"
    # shellcheck disable=SC2046
    dims=$(/usr/bin/python3 "$here/tests/tools/dim_names.py" "$m" $("$bindings" "$name"))
    # shellcheck disable=SC2086
    if ! "$build/olla-onnx" -q --time-limit "$limit" $dims \
          --report "$out/$name.json" "$m" "$out/$name.onnx" 2>"$out/$name.err"; then
      printf '{"model":"%s","error":"%s"}\n' "$m" "$(head -1 "$out/$name.err" | tr -d '"')" > "$out/$name.json"
    fi
  done
}
