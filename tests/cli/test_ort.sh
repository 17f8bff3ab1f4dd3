#!/usr/bin/env bash
# Converter equivalence under ONNX Runtime: every model of models/ and of
# $OLLA_CORPUS/infer (when present) is converted, and the result must compute
# bit-for-bit the same outputs as the original on the same random inputs
# (tests/ort/compare.mjs). Symbolic input dimensions are bound to 2, both for
# the converter and for the comparison. A model ONNX Runtime cannot run is
# counted as skipped, never as passed; a converter failure, an output it does
# not write, or any difference is a failure. The closing line reads
# "ort: N passed, M skipped, F failed".
#
# Environment:
#   OLLA                the converter binary (set by ctest)
#   OLLA_SOURCE_DIR     the source tree (set by ctest)
#   OLLA_CORPUS         the corpus folder (optional)
#   OLLA_ORT_MODELS     overrides the list of models: space-separated paths,
#                       or @FILE for a file with one path per line
#   OLLA_ORT_CONVERTER  overrides the conversion command: a command line, split
#                       on spaces, in which {in}, {out} and {dims} are replaced
#                       by the input model, the output model and the --dim
#                       options. Default: "$OLLA {dims} {in} {out}". To check
#                       the comparison side alone, use a converter that only
#                       reorders nodes:
#                       OLLA_ORT_CONVERTER='/usr/bin/python3 scripts/permute_nodes.py {in} {out} --seed 3'
#
# Needs node and tests/ort/node_modules (scripts/setup_ort.sh); exits 77
# (skipped) without them.
set -u
src="${OLLA_SOURCE_DIR:?OLLA_SOURCE_DIR must point at the source tree}"
. "$src/tests/ort/ort_env.sh"
ort_skip_unless_ready
if [ -n "${OLLA_ORT_CONVERTER:-}" ]; then
  converter="$OLLA_ORT_CONVERTER"
else
  [ -n "${OLLA:-}" ] && [ -x "$OLLA" ] || { echo "OLLA must name the olla-onnx binary"; exit 1; }
  converter="$OLLA {dims} {in} {out}"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

list="${OLLA_ORT_MODELS:-}"
if [ "${list:0:1}" = "@" ]; then
  mapfile -t models <"${list:1}" || { echo "cannot read the model list ${list:1}"; exit 1; }
elif [ -n "$list" ]; then
  read -r -a models <<<"$list"
else
  models=("$src"/models/*.onnx)
  if [ -n "${OLLA_CORPUS:-}" ] && [ -d "$OLLA_CORPUS/infer" ]; then
    models+=("$OLLA_CORPUS"/infer/*.onnx)
  else
    echo "note: corpus not found; only models/ is checked"
  fi
fi

passed=0 skipped=0 failed=0 i=0
for in in "${models[@]}"; do
  i=$((i + 1))
  name="$(basename "$in" .onnx)"
  wd="$work/$i"
  mkdir -p "$wd"
  # External data files are found beside the model: give the output the same
  # neighbours as the input.
  for data in "$(dirname "$in")"/*.bin; do
    [ -e "$data" ] && cp "$data" "$wd/"  # a copy: ONNX Runtime rejects links leading out of the folder
  done
  out="$wd/$name.onnx"

  dims=()
  dim_names="$(node "$ort/dims.mjs" "$in" 2>/dev/null)"
  for d in $dim_names; do dims+=(--dim "$d=2"); done

  cmd=()
  for word in $converter; do
    case "$word" in
      "{in}") cmd+=("$in") ;;
      "{out}") cmd+=("$out") ;;
      "{dims}") cmd+=("${dims[@]}") ;;
      *) cmd+=("$word") ;;
    esac
  done
  if ! "${cmd[@]}" >"$wd/convert.log" 2>&1; then
    echo "FAIL $in: conversion failed: ${cmd[*]}: $(tail -n 1 "$wd/convert.log")"
    failed=$((failed + 1)); continue
  fi
  if [ ! -s "$out" ]; then
    echo "FAIL $in: the converter wrote no $out"
    failed=$((failed + 1)); continue
  fi

  result="$(node "$ort/compare.mjs" "$in" "$out" "${dims[@]}" 2>&1)"
  rc=$?
  if [ "$rc" -gt 128 ]; then
    # ONNX Runtime itself crashed: a skip if it crashes on the original too.
    node "$ort/compare.mjs" "$in" "$in" "${dims[@]}" >/dev/null 2>&1
    self=$?
    if [ "$self" -gt 128 ]; then
      result="SKIP $in: ONNX Runtime crashes on it (signal $((self - 128)))"; rc=77
    else
      result="FAIL $in: ONNX Runtime crashes (signal $((rc - 128))) on the converted model but not on the original"; rc=1
    fi
  fi
  echo "$result" | grep -E '^(PASS|SKIP|FAIL)' || echo "$result"
  case "$rc" in
    0) passed=$((passed + 1)) ;;
    77) skipped=$((skipped + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
done

echo "ort: $passed passed, $skipped skipped, $failed failed"
if [ "$failed" -ne 0 ]; then exit 1; fi
if [ "$passed" -eq 0 ]; then echo "no model was compared"; exit 1; fi
exit 0
