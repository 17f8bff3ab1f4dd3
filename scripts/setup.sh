#!/usr/bin/env bash
# Installs, from Debian's packages, what olla-onnx needs.
#
#   bash scripts/setup.sh           to build and run the tool (compiler, CMake,
#                                   protobuf-c, CBC, json-c, ONNX's schema)
#   bash scripts/setup.sh --test    also what the test suite needs: Python's
#                                   onnx and numpy (to make test models),
#                                   valgrind, clang (fuzzing), Chromium (the
#                                   SVG is checked in a browser), Node.js and
#                                   npm (ONNX Runtime, scripts/setup_ort.sh)
#   bash scripts/setup.sh [--test] --list   print the packages, install nothing
#
# Only what is missing is installed; a machine that has it all is left alone.
set -euo pipefail
run_pkgs=(cmake gcc make pkg-config protobuf-c-compiler libprotobuf-c-dev coinor-libcbc-dev libonnx-dev
          libjson-c-dev)
test_pkgs=(python3-onnx python3-numpy python3-torch valgrind clang libclang-rt-14-dev chromium)
want_test=0; list=0
for a in "$@"; do
  case "$a" in
    --test) want_test=1 ;;
    --list) list=1 ;;
    *) echo "usage: bash scripts/setup.sh [--test] [--list]" >&2; exit 2 ;;
  esac
done
pkgs=("${run_pkgs[@]}")
[ $want_test -eq 1 ] && pkgs+=("${test_pkgs[@]}")
missing=()
if [ $want_test -eq 1 ]; then
  # Node.js may come from elsewhere with its own npm; only ask Debian when absent.
  if [ $list -eq 1 ]; then pkgs+=(nodejs npm); else
    command -v node >/dev/null || missing+=(nodejs)
    command -v npm >/dev/null || missing+=(npm)
  fi
fi
if [ $list -eq 1 ]; then printf '%s\n' "${pkgs[@]}"; exit 0; fi
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
