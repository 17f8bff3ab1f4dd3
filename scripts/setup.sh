#!/usr/bin/env bash
# Installs, from Debian's packages, what olla-onnx needs.
#
#   bash scripts/setup.sh           to build and run the tool (compiler, CMake,
#                                   protobuf-c, CBC, json-c, ONNX's schema)
#   bash scripts/setup.sh --python  also what `pip install .` needs to build
#                                   the Python package offline: the Python
#                                   headers, pip, setuptools, wheel, venv, and
#                                   Python's onnx
#   bash scripts/setup.sh --test    also what the test suite needs: the above,
#                                   pytest, Python's numpy (to make test
#                                   models), torch (the reference the
#                                   gradients of the generated training
#                                   steps are checked on), jq, valgrind, clang (fuzzing),
#                                   Chromium (the SVG is checked in a
#                                   browser), Node.js and npm (ONNX Runtime,
#                                   scripts/setup_ort.sh), and Slurm with
#                                   munge (a one-node cluster for batch --shard)
#   bash scripts/setup.sh [--python] [--test] --list   print the packages, install nothing
#
# Only what is missing is installed; a machine that has it all is left alone.
set -euo pipefail
run_pkgs=(cmake gcc make pkg-config protobuf-c-compiler libprotobuf-c-dev coinor-libcbc-dev libonnx-dev
          libjson-c-dev)
python_pkgs=(python3-dev python3-pip python3-setuptools python3-wheel python3-venv python3-onnx)
test_pkgs=(python3-numpy python3-torch python3-pytest jq valgrind clang libclang-rt-14-dev chromium slurm-wlm munge)
want_test=0; want_python=0; list=0
for a in "$@"; do
  case "$a" in
    --test) want_test=1; want_python=1 ;;
    --python) want_python=1 ;;
    --list) list=1 ;;
    *) echo "usage: bash scripts/setup.sh [--python] [--test] [--list]" >&2; exit 2 ;;
  esac
done
pkgs=("${run_pkgs[@]}")
[ $want_python -eq 1 ] && pkgs+=("${python_pkgs[@]}")
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
