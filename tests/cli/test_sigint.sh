#!/usr/bin/env bash
# Interruption: SIGINT or SIGTERM during a long conversion stops it at once
# with exit 128+signal, the one-line message, no output and no temporary
# file; a solver running in a child process goes with it; and a signal at
# any moment of a short conversion leaves either the whole output or nothing.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; SRC=${OLLA_SOURCE_DIR:?}
PY=/usr/bin/python3
cli_tmp
cli_need_python onnx
MSG="olla-onnx: interrupted; no output written"
# the olla-onnx process started as PID: PID itself, or the process under a
# wrapper script (the sanitizer build wraps $OLLA, and a shell started in the
# background ignores SIGINT, so the signal must go to the binary)
olla_pid() {
  local p=$1 next
  for _ in $(seq 1 400); do
    [ "$(cat /proc/$p/comm 2>/dev/null)" = olla-onnx ] && { echo $p; return; }
    kill -0 $p 2>/dev/null || break
    next=$(pgrep -P $p | head -1)
    if [ -n "$next" ]; then p=$next; else sleep 0.01; fi
  done
  echo $1
}
$PY "$SRC/bench/huge_gen.py" 20000 "$tmp/long.onnx" >/dev/null
$PY "$SRC/bench/huge_gen.py" 150 "$tmp/ilp.onnx" >/dev/null

# stop SIGNAL CODE DELAY MODEL: a signal DELAY seconds into a 60 s conversion
stop() {
  local sig=$1 code=$2 delay=$3 model=$4
  mkdir -p "$tmp/o"; rm -f "$tmp/o"/*
  "$OLLA" -q --time-limit 60 "$model" "$tmp/o/out.onnx" 2>"$tmp/err" & local pid=$!
  sleep "$delay"
  kill -"$sig" "$(olla_pid $pid)"
  wait $pid; local rc=$?
  if [ $rc -eq $code ] && [ "$(cat "$tmp/err")" = "$MSG" ] && [ -z "$(ls "$tmp/o")" ]; then ok; else
    bad "SIG$sig after $delay s: exit $rc (wanted $code), stderr '$(cat "$tmp/err")', left: $(ls "$tmp/o")"; fi
}
stop INT 130 1 "$tmp/long.onnx"
stop TERM 143 1 "$tmp/long.onnx"

# SIGINT while CBC solves the ordering ILP in a child process (on this
# graph the exact searches give up on their work budgets and the ILP
# starts: after a few seconds in a release build, half a minute in a
# sanitizer build on a busy machine; the time limit leaves them all the
# time that takes)
mkdir -p "$tmp/o"; rm -f "$tmp/o"/*
"$OLLA" -q --time-limit 900 "$tmp/ilp.onnx" "$tmp/o/out.onnx" 2>"$tmp/err" & pid=$!
main=$(olla_pid $pid)
child=""
for _ in $(seq 1 3000); do
  child=$(pgrep -P $main | head -1)
  [ -n "$child" ] && break
  kill -0 $main 2>/dev/null || break
  sleep 0.1
done
if [ -z "$child" ]; then
  bad "no solver child process appeared while the conversion ran (up to 300 s)"
  kill -INT $main; wait $pid
else
  kill -INT $main
  wait $pid; rc=$?
  gone=0
  for _ in $(seq 1 50); do kill -0 "$child" 2>/dev/null || { gone=1; break; }; sleep 0.1; done
  if [ $rc -eq 130 ] && [ "$(cat "$tmp/err")" = "$MSG" ] && [ -z "$(ls "$tmp/o")" ] && [ $gone -eq 1 ]; then ok; else
    bad "SIGINT during the ILP: exit $rc, stderr '$(cat "$tmp/err")', left: $(ls "$tmp/o"), solver child gone: $gone"; fi
fi

# a signal at any moment of a short conversion: all of the output or none
for delay in 0 0.01 0.02 0.05 0.1 0.15 0.2 0.3 0.5 0.8; do
  rm -rf "$tmp/o"; mkdir -p "$tmp/o"
  "$OLLA" -q --time-limit 1 "$SRC/models/mlp_train.onnx" "$tmp/o/out.onnx" 2>"$tmp/err" & pid=$!
  sleep $delay
  kill -INT "$(olla_pid $pid)" 2>/dev/null
  wait $pid; rc=$?
  left=$(ls "$tmp/o")
  if [ $rc -eq 0 ] && [ "$left" = "out.onnx" ] && "$OLLA" check "$tmp/o/out.onnx" >/dev/null 2>&1; then ok
  elif [ $rc -eq 130 ] && [ -z "$left" ] && [ "$(cat "$tmp/err")" = "$MSG" ]; then ok
  else bad "SIGINT after $delay s: exit $rc, left: $left, stderr '$(cat "$tmp/err")'"; fi
done
# SIGINT while external data is copied to another file system: the partial
# copy goes too (only where /dev/shm is another file system with room)
if [ -d /dev/shm ] && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$tmp")" ] &&
   [ "$(df -k --output=avail /dev/shm | tail -1)" -gt 2097152 ]; then
  mkdir -p "$tmp/x"
  $PY - "$tmp/x/model.onnx" <<'PY'
import sys
from onnx import helper as h, TensorProto as T
K, M = 4096, 32768
t = T(name='W', data_type=T.FLOAT, dims=[K, M], data_location=T.EXTERNAL)
for k, v in (('location', 'weights.bin'), ('offset', '0'), ('length', str(K * M * 4))):
    e = t.external_data.add(); e.key = k; e.value = v
g = h.make_graph([h.make_node('MatMul', ['x', 'W'], ['y'], name='mm')], 'g', [h.make_tensor_value_info('x', T.FLOAT, [4, K])],
                 [h.make_tensor_value_info('y', T.FLOAT, [4, M])], initializer=[t])
m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)]); m.ir_version = 8
open(sys.argv[1], 'wb').write(m.SerializeToString())
PY
  truncate -s $((4096 * 32768 * 4)) "$tmp/x/weights.bin"
  shm=$(mktemp -d /dev/shm/olla-sigint.XXXXXX)
  "$OLLA" -q --time-limit 1 "$tmp/x/model.onnx" "$shm/out.onnx" 2>"$tmp/err" & pid=$!
  seen=0
  main=$(olla_pid $pid)
  for _ in $(seq 1 500); do [ -e "$shm/weights.bin.olla-tmp" ] && { seen=1; break; }; sleep 0.01; done
  kill -INT $main 2>/dev/null
  wait $pid; rc=$?
  left=$(ls "$shm")
  rm -rf "$shm"
  if [ $seen -eq 1 ] && [ $rc -eq 130 ] && [ -z "$left" ] && [ "$(cat "$tmp/err")" = "$MSG" ]; then ok
  elif [ $rc -eq 0 ] && [ "$(echo $left)" = "out.onnx weights.bin" ]; then
    # the copy ended between the test seeing its temporary file and the
    # signal (a busy machine): the whole output, which is also allowed
    echo "note: the copy finished before it could be interrupted"
  else bad "SIGINT during the copy of external data: exit $rc, left: $left, stderr '$(cat "$tmp/err")'"; fi
fi
cli_finish "sigint"
