#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ (clang, ASan, UBSan) and runs each
# for a bounded time. Fails on any crash, leak, timeout or out-of-memory.
#
#   scripts/fuzz.sh [SECONDS_EACH] [HARNESS ...]    (default 60 s; load shapes place_csv)
#
# The corpus grows in build-fuzz/fuzz-work/<harness>/corpus across runs; a
# failing input is saved in build-fuzz/fuzz-work/<harness>/ and should be
# added to tests/regress/<harness>/ once fixed. Prints one line per harness
# with the number of executions.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(load shapes place_csv)
case $secs in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS_EACH] [load|shapes|place_csv ...]" >&2; exit 2 ;; esac
command -v clang >/dev/null || { echo "fuzz: clang is missing (scripts/setup.sh --test installs it)" >&2; exit 2; }
jobs=$(nproc 2>/dev/null || echo 2)
B=build-fuzz
CC=clang cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOLLA_FUZZ=ON -DOLLA_BUILD_TESTS=OFF >/dev/null || exit 2
cmake --build "$B" -j"$jobs" >/dev/null || { cmake --build "$B" 2>&1 | tail -20; exit 2; }

seed_models() { # dir: the bundled models, good and bad
  cp models/*.onnx models/bad/*.onnx "$1/"
}
seed_csv() { # dir: small minimalloc tables of several shapes
  printf 'id,lower,upper,size\n0,0,3,4\n1,1,4,8\n2,3,6,4\n3,0,6,2\n' >"$1/small.csv"
  printf 'lower,size,upper,id,offset,note\n0,64,2,a,0,x\n1,32,3,b,64,y\n2,16,4,c,0,z\n' >"$1/reordered.csv"
  printf 'id,lower,upper,size\n' >"$1/header_only.csv"
  awk 'BEGIN{print "id,lower,upper,size"; srand(7); for(i=0;i<60;i++){l=int(rand()*40); printf "%d,%d,%d,%d\n", i, l, l+1+int(rand()*10), 1+int(rand()*1000)}}' >"$1/random60.csv"
  awk 'BEGIN{print "id,lower,upper,size"; for(i=0;i<30;i++) printf "b%d,%d,%d,%d\n", i, i, i+3, 2^(i%12)}' >"$1/steps30.csv"
}

status=0
for h in "${harnesses[@]}"; do
  bin=$B/fuzz/fuzz_$h
  [ -x "$bin" ] || { echo "fuzz: no harness '$h'" >&2; status=1; continue; }
  work=$B/fuzz-work/$h
  mkdir -p "$work/corpus" "$work/seed"
  rm -f "$work/seed"/*
  case $h in
    place_csv) seed_csv "$work/seed" ;;
    *) seed_models "$work/seed" ;;
  esac
  [ -d tests/regress/$h ] && cp tests/regress/$h/* "$work/seed/" 2>/dev/null
  log=$work/log.txt
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 -detect_leaks=1 \
    -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$work/seed" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(ls "$work/corpus" | wc -l)
  # a report from any process of the run fails it, even one the harness survived
  if [ $rc -eq 0 ] && grep -qE "DEADLYSIGNAL|==[0-9]+==ERROR|runtime error:" "$log"; then rc=98; fi
  if [ $rc -eq 0 ]; then
    echo "fuzz_$h: ${execs:-?} executions in ${secs} s, corpus $corpus inputs: no crash, no leak, no timeout"
  else
    status=1
    echo "fuzz_$h: FAILED (exit $rc) after ${execs:-?} executions; see $log"
    grep -E "^(==[0-9]+==ERROR|SUMMARY|olla fuzz:|artifact_prefix)|Test unit written" "$log" | head -8
  fi
done
exit $status
