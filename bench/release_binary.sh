# Sourced by the benchmarks that take an olla-onnx binary as an optional
# argument. release_binary SRC prints the path of a Release build of
# olla-onnx in SRC/build-bench (no tests), configuring and building it first;
# it fails, printing nothing, when the build fails.
release_binary() {
    cmake -S "$1" -B "$1/build-bench" -DCMAKE_BUILD_TYPE=Release -DOLLA_BUILD_TESTS=OFF >/dev/null &&
        cmake --build "$1/build-bench" -j2 >/dev/null &&
        echo "$1/build-bench/olla-onnx"
}
