#!/usr/bin/env bash
# Installs what olla-onnx needs to build, test and make its models, from
# Debian's packages (and onnxruntime-node from npm for the runtime checks).
set -euo pipefail
pkgs=(cmake gcc make pkg-config protobuf-c-compiler libprotobuf-c-dev coinor-libcbc-dev
      libonnx-dev libjson-c-dev python3-onnx python3-numpy valgrind clang libclang-rt-14-dev chromium)
missing=()
# Node.js may come from elsewhere with its own npm; only ask Debian when absent.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
