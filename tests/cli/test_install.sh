#!/usr/bin/env bash
# cmake --install puts in place what a C user needs: the command, the example
# runtime olla-arena-exec, libolla.a, the four public headers, the man page,
# a pkg-config file and a CMake package config. A small program that plans a
# model through olla.h and reads the plan back through olla_plan.h builds
# against the installed tree both ways (pkg-config, find_package), and its
# planned model passes the installed command's check; the example runtime's
# source (examples/arena_exec.c) builds against the installed tree alone;
# only the public API is exported from a shared object made of the library,
# and only the public API is global in the installed libolla.a itself.
set -u
. "$(dirname "$0")/lib.sh"
BIN=${OLLA_BINARY_DIR:?} ; SRC=${OLLA_SOURCE_DIR:?}
cli_tmp
P=$tmp/p
cmake --install "$BIN" --prefix "$P" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
for f in bin/olla-onnx bin/olla-arena-exec share/man/man1/olla-onnx.1 \
         include/olla.h include/olla_plan.h include/olla_bindings.h include/olla_error.h; do
  [ -f "$P/$f" ] && ok || bad "$f not installed"
done
lib=$(find "$P" -name libolla.a | head -1)
pc=$(find "$P" -name olla-onnx.pc | head -1)
cfg=$(find "$P" -name olla-onnxConfig.cmake | head -1)
[ -n "$lib" ] && ok || bad "libolla.a not installed"
[ -n "$pc" ] && ok || bad "olla-onnx.pc not installed"
[ -n "$cfg" ] && ok || bad "olla-onnxConfig.cmake not installed"
grep -q '^\.TH OLLA-ONNX 1' "$P/share/man/man1/olla-onnx.1" && ok || bad "man page header"
"$P/bin/olla-onnx" --version >/dev/null && ok || bad "installed binary"
# a sanitized build's library needs the sanitizer runtime in whatever links it
san=""
grep -q '^OLLA_SANITIZE:BOOL=ON' "$BIN/CMakeCache.txt" 2>/dev/null && san="-fsanitize=address,undefined"

# the runtime header compiles on its own
printf '#include <olla_plan.h>\nint main(void){ olla_runtime_plan *p = 0; olla_error e = {0}; return olla_runtime_plan_parse("{}", &p, &e) == OLLA_OK; }\n' > "$tmp/plan_only.c"
cc -std=c11 -Wall -Werror -c -I"$P/include" "$tmp/plan_only.c" -o "$tmp/plan_only.o" && ok ||
  bad "olla_plan.h does not compile on its own"

# the consumer: plan a model with olla.h, read the plan back with olla_plan.h
cat > "$tmp/use.c" <<'EOF'
#include <olla.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
    olla_error err = {0};
    olla_model *m = NULL;
    olla_plan *plan = NULL;
    olla_report rep;
    memset(&rep, 0, sizeof rep);
    olla_options opt;
    olla_options_init(&opt);
    opt.verbosity = 0;
    opt.time_limit = 10;
    olla_runtime_plan *rp = NULL;
    if (argc != 3 || olla_model_load(argv[1], &m, &err) != OLLA_OK || olla_optimize(m, &opt, &plan, &rep, &err) != OLLA_OK ||
        olla_write_model(m, plan, argv[2], &err) != OLLA_OK || olla_runtime_plan_load(argv[2], &rp, &err) != OLLA_OK) {
        fprintf(stderr, "use: %s\n", err.message);
        return 1;
    }
    printf("%lld %lld\n", (long long)rep.arena_bytes, (long long)olla_runtime_plan_arena_bytes(rp));
    olla_runtime_plan_free(rp);
    olla_report_clear(&rep);
    olla_plan_free(plan);
    olla_model_free(m);
    return 0;
}
EOF
consumer_ok() { # consumer_ok BINARY HOW
  "$1" "$SRC/models/mlp_train.onnx" "$tmp/$2.onnx" >"$tmp/$2.out" 2>&1 || { bad "$2 consumer run: $(cat "$tmp/$2.out")"; return; }
  read -r a b <"$tmp/$2.out"
  [ -n "$a" ] && [ "$a" -gt 0 ] && [ "$a" = "$b" ] && ok || bad "$2 consumer: arena $a, read back $b"
  "$P/bin/olla-onnx" check "$tmp/$2.onnx" >/dev/null && ok || bad "$2 consumer's model fails the installed check"
}

# 1. pkg-config
if command -v pkg-config >/dev/null; then
  flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs olla-onnx) && ok || bad "pkg-config olla-onnx"
  if cc -std=c11 -Wall -Werror $san "$tmp/use.c" -o "$tmp/use_pc" $flags 2>"$tmp/cc.err"; then ok; consumer_ok "$tmp/use_pc" pkgconfig
  else bad "build with pkg-config ($flags): $(head -5 "$tmp/cc.err")"; fi
else
  bad "pkg-config missing"
fi

# 2. CMake's find_package
mkdir -p "$tmp/proj"
cp "$tmp/use.c" "$tmp/proj/"
cat > "$tmp/proj/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.18)
project(use C)
find_package(olla-onnx 0.1 REQUIRED)
add_executable(use use.c)
target_compile_options(use PRIVATE $san)
target_link_options(use PRIVATE $san)
target_link_libraries(use PRIVATE olla-onnx::olla)
EOF
if cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_PREFIX_PATH="$P" >"$tmp/cm.log" 2>&1 &&
   cmake --build "$tmp/proj/build" >>"$tmp/cm.log" 2>&1; then
  ok; consumer_ok "$tmp/proj/build/use" cmake
else
  bad "build with find_package(olla-onnx): $(tail -8 "$tmp/cm.log")"
fi
# 3. the example runtime's source builds against the installed tree alone
# (no header of the source tree), runs a planned model, and still catches a
# corrupted plan
if cc -std=c11 -Wall -Werror $san "$SRC/examples/arena_exec.c" -o "$tmp/arena_exec" $flags 2>"$tmp/ex.err"; then
  ok
  "$P/bin/olla-onnx" -q "$SRC/models/cnn_train.onnx" "$tmp/cnn.onnx" && ok || bad "planning cnn_train"
  "$tmp/arena_exec" "$tmp/cnn.onnx" >"$tmp/ex.out" 2>&1 && grep -q "no tensor overwritten" "$tmp/ex.out" && ok ||
    bad "the example built from the installed tree: $(cat "$tmp/ex.out")"
  "$tmp/arena_exec" --corrupt "$tmp/cnn.onnx" >"$tmp/ex.out" 2>&1 && bad "the example missed a corrupted plan" ||
    { grep -q "was overwritten" "$tmp/ex.out" && ok || bad "corrupted plan: $(cat "$tmp/ex.out")"; }
else
  bad "examples/arena_exec.c does not build against the installed headers: $(head -5 "$tmp/ex.err")"
fi
# 4. a shared object made of the whole installed library exports the public
# API only: every olla_ symbol it exports is declared in an installed
# header, and none of protobuf-c's onnx__ symbols (a build with the Python
# module compiles the library position-independent, as a shared object needs)
if grep -q '^OLLA_PYTHON:BOOL=ON' "$BIN/CMakeCache.txt" 2>/dev/null; then
  if cc -shared $san -o "$tmp/libwhole.so" -Wl,--whole-archive "$lib" -Wl,--no-whole-archive 2>"$tmp/so.err"; then
    nm -D --defined-only "$tmp/libwhole.so" | awk '{print $3}' >"$tmp/exports"
    n_api=$(grep -c '^olla_' "$tmp/exports")
    [ "$n_api" -gt 20 ] && ok || bad "the shared object exports $n_api olla_ symbols"
    grep -q '^onnx__' "$tmp/exports" && bad "onnx__ symbols exported: $(grep -c '^onnx__' "$tmp/exports")" || ok
    leaked=$(grep '^olla_' "$tmp/exports" | while read -r s; do grep -qw "$s" "$P"/include/*.h || echo "$s"; done)
    [ -z "$leaked" ] && ok || bad "internal symbols exported: $(echo $leaked | head -c 300)"
  else
    bad "a shared object from libolla.a: $(head -3 "$tmp/so.err")"
  fi
else
  cli_missing "the library is not position-independent without OLLA_PYTHON; exports not checked"
fi
# 5. the installed libolla.a itself holds the public API only: the library
# is partially linked into one object whose internal olla_* functions and
# protobuf-c's onnx__* code are local symbols. Every global symbol it
# defines is declared in an installed header; and a host that defines any
# of the internal names itself (its own protobuf-c code for onnx.proto, say:
# onnx__model_proto__unpack) links against it with no duplicate definition,
# each side calling its own copy.
if grep -q '^OLLA_PARTIAL_LINK:INTERNAL=ON' "$BIN/CMakeCache.txt" 2>/dev/null; then
  # (a sanitized build adds ASan's ODR indicator of the public variable)
  nm -g --defined-only "$lib" | awk 'NF == 3 {print $3}' | grep -v '^__odr_asan' | sort -u >"$tmp/globals"
  n_global=$(grep -c . "$tmp/globals")
  [ "$n_global" -gt 20 ] && [ "$(grep -c '^olla_' "$tmp/globals")" -eq "$n_global" ] && ok ||
    bad "libolla.a defines $n_global global symbols, not all olla_: $(grep -v '^olla_' "$tmp/globals" | head -5 | tr '\n' ' ')"
  leaked=$(while read -r s; do grep -qw "$s" "$P"/include/*.h || echo "$s"; done <"$tmp/globals")
  [ -z "$leaked" ] && ok || bad "internal symbols global in libolla.a: $(echo $leaked | head -c 300)"
  # the library's own symbols made local: its internal functions, protobuf-c's
  nm --defined-only "$lib" | awk 'NF == 3 && $2 ~ /^[a-z]$/ {print $3}' |
    grep -E '^(olla_|onnx__)[A-Za-z0-9_]*$' | sort -u | comm -23 - "$tmp/globals" >"$tmp/locals"
  n_olla=$(grep -c '^olla_' "$tmp/locals"); n_onnx=$(grep -c '^onnx__' "$tmp/locals")
  [ "$n_olla" -gt 100 ] && [ "$n_onnx" -gt 100 ] && grep -qx onnx__model_proto__unpack "$tmp/locals" &&
    ok "libolla.a: $n_global global symbols (the public API); $n_olla internal olla_ and $n_onnx onnx__ local" ||
    bad "libolla.a's local symbols: $n_olla olla_, $n_onnx onnx__ (onnx__model_proto__unpack among them?)"
  # the host: every one of those names defined again, and its own
  # onnx__model_proto__unpack, which the library must never call
  {
    printf '#include <olla.h>\n#include <stdio.h>\n#include <string.h>\nstatic int host_calls;\n'
    grep -vx onnx__model_proto__unpack "$tmp/locals" | sed 's/.*/int &(void);\nint &(void) { return ++host_calls; }/'
    cat <<'EOF'
void *onnx__model_proto__unpack(void *allocator, size_t len, const unsigned char *data);
void *onnx__model_proto__unpack(void *allocator, size_t len, const unsigned char *data)
{
    (void)allocator;
    (void)data;
    host_calls += 1000;
    return len == 7 ? (void *)&host_calls : NULL;
}
int main(int argc, char **argv)
{
    olla_error err = {0};
    olla_model *m = NULL;
    olla_plan *plan = NULL;
    olla_report rep;
    memset(&rep, 0, sizeof rep);
    olla_options opt;
    olla_options_init(&opt);
    opt.verbosity = 0;
    if (argc != 2 || olla_model_load(argv[1], &m, &err) != OLLA_OK || olla_optimize(m, &opt, &plan, &rep, &err) != OLLA_OK) {
        fprintf(stderr, "host: %s\n", err.message);
        return 1;
    }
    if (host_calls != 0) {
        fprintf(stderr, "host: the library called the host's own functions (%d)\n", host_calls);
        return 1;
    }
    if (onnx__model_proto__unpack(NULL, 7, NULL) != &host_calls || host_calls != 1000) {
        fprintf(stderr, "host: its own onnx__model_proto__unpack was not called\n");
        return 1;
    }
    printf("%lld\n", (long long)rep.arena_bytes);
    olla_report_clear(&rep);
    olla_plan_free(plan);
    olla_model_free(m);
    return 0;
}
EOF
  } >"$tmp/host.c"
  if cc -std=c11 -Wall -Werror $san "$tmp/host.c" -o "$tmp/host" $flags 2>"$tmp/host.err"; then
    ok "a host defining $(grep -c . "$tmp/locals") of the library's internal names links against libolla.a"
    "$tmp/host" "$SRC/models/mlp_train.onnx" >"$tmp/host.out" 2>&1 && [ "$(cat "$tmp/host.out")" -gt 0 ] && ok ||
      bad "the host beside the library: $(head -3 "$tmp/host.out")"
  else
    bad "a host defining the library's internal names does not link: $(grep -m3 'multiple definition\|error' "$tmp/host.err")"
  fi
else
  cli_missing "libolla.a is installed as the plain archive (no ld -r or objcopy --localize-hidden when configured)"
fi
cli_finish "install"
