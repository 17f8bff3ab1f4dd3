#!/bin/bash
# Builds minimalloc (github.com/google/minimalloc), the benchmark peer of
# `olla-onnx place`, from its public source against Debian's abseil
# (apt-get install -y libabsl-dev g++). Nothing of minimalloc is kept in
# this repository; the binary goes to OUT (default /tmp/minimalloc-build).
#
# usage: bench/build_minimalloc.sh SRC_DIR [OUT_DIR]
#   SRC_DIR: a checkout of google/minimalloc (its src/ folder is used);
#            a bare git directory works too (the tree at HEAD is exported).
#
# Debian 12 ships abseil 20220623, which has no absl/log (added in
# 20230125). minimalloc uses it only to print (LOG, DLOG) and to set up
# logging in main.cc, so a three-header stand-in written here maps LOG to
# std::cerr and DLOG to nothing (as in an optimized build). Debian's
# abseil also keeps its own absl::string_view (not std::string_view), so one
# loop variable of the CSV reader (converter.cc) is retyped from
# std::string_view to absl::string_view in the copy. The solver is compiled
# unchanged, with -O2 -DNDEBUG as its CMake Release build would.
set -eu
SRC=${1:?usage: bench/build_minimalloc.sh SRC_DIR [OUT_DIR]}
OUT=${2:-/tmp/minimalloc-build}
mkdir -p "$OUT/src" "$OUT/shim/absl/log"
if [ -d "$SRC/src" ]; then
    cp "$SRC"/src/*.cc "$SRC"/src/*.h "$OUT/src/"
else # a bare repository
    git --git-dir="$SRC" archive HEAD src | tar -x -C "$OUT"
fi
sed -i 's/for (const std::string_view& record : records)/for (absl::string_view record : records)/' \
    "$OUT/src/converter.cc"
cat > "$OUT/shim/absl/log/log.h" <<'EOF'
#ifndef SHIM_ABSL_LOG_LOG_H
#define SHIM_ABSL_LOG_LOG_H
#include <iostream>
namespace shim_log {
struct Line {
    bool on;
    ~Line() { if (on) std::cerr << std::endl; }
    template <class T> Line &operator<<(const T &v) { if (on) std::cerr << v; return *this; }
};
}
#define LOG(severity) shim_log::Line{true}
#define DLOG(severity) shim_log::Line{false}
#endif
EOF
cat > "$OUT/shim/absl/log/globals.h" <<'EOF'
#ifndef SHIM_ABSL_LOG_GLOBALS_H
#define SHIM_ABSL_LOG_GLOBALS_H
#include "absl/base/log_severity.h"
namespace absl {
inline void SetStderrThreshold(LogSeverityAtLeast) {}
inline void EnableLogPrefix(bool) {}
}
#endif
EOF
cat > "$OUT/shim/absl/log/initialize.h" <<'EOF'
#ifndef SHIM_ABSL_LOG_INITIALIZE_H
#define SHIM_ABSL_LOG_INITIALIZE_H
namespace absl {
inline void InitializeLog() {}
}
#endif
EOF
LIBS=$(pkg-config --libs absl_flags_parse absl_flags absl_statusor absl_status absl_strings \
    absl_str_format absl_time absl_raw_hash_set absl_hash)
g++ -std=c++20 -O2 -DNDEBUG -I"$OUT/shim" -I"$OUT/src" -o "$OUT/minimalloc" \
    "$OUT"/src/converter.cc "$OUT"/src/minimalloc.cc "$OUT"/src/solver.cc \
    "$OUT"/src/sweeper.cc "$OUT"/src/validator.cc "$OUT"/src/main.cc $LIBS -lpthread
echo "$OUT/minimalloc"
