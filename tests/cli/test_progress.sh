#!/usr/bin/env bash
# The live progress line of one conversion, on a terminal (a pseudo-terminal
# made by script(1)): every redraw fits 79 columns even for a long model
# name, names the phase, keeps counting the seconds inside a long phase,
# shows the best peak, the lower bound once known, and the arena once
# placed; and the line is gone before the summary. In a log, -v gives one
# plain line per phase, and -q nothing.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; SRC=${OLLA_SOURCE_DIR:?}
PY=/usr/bin/python3
cli_tmp
command -v script >/dev/null || cli_skip "script(1) is missing (package bsdutils)"
cli_need_python onnx
m=$tmp/a_model_with_a_rather_long_name_that_would_not_fit_on_one_terminal_line_at_all.onnx
# 150 layers: the exact searches take a few seconds, so the ordering phase lasts
$PY "$SRC/bench/huge_gen.py" 150 "$m" >/dev/null
script -qfec "'$OLLA' --time-limit 3 --report '$tmp/r.json' '$m' '$tmp/o.onnx'" /dev/null >"$tmp/tty" 2>&1
[ -s "$tmp/o.onnx" ] && ok || bad "no output written on a terminal: $(cat -v "$tmp/tty" | head -5)"
# the redraws: what lies between a carriage return and the next one
tr '\r' '\n' <"$tmp/tty" | sed 's/\x1b\[K//g' | grep -v '^ *$' >"$tmp/lines"
grep -E ': (shapes|graph|ordering|placement|checking) [0-9.]+ s' "$tmp/lines" >"$tmp/redraws"
[ "$(wc -l <"$tmp/redraws")" -ge 4 ] && ok || bad "fewer than 4 redraws: $(cat "$tmp/lines")"
wide=$(awk 'length($0) > 79' "$tmp/redraws")
[ -z "$wide" ] && ok || bad "redraws wider than 79 columns: $wide"
grep -q '^\.\.\..*at_all\.onnx: ' "$tmp/redraws" && ok || bad "the model name is not shortened from the left"
for phase in ordering placement checking; do
  grep -q ": $phase " "$tmp/redraws" && ok || bad "no $phase redraw"
done
# the seconds go on within the ordering phase (redrawn by the ticker)
n=$(grep ': ordering ' "$tmp/redraws" | sed 's/.*ordering \([0-9.]*\) s.*/\1/' | sort -u | wc -l)
[ "$n" -ge 3 ] && ok || bad "the ordering line shows $n distinct times; it goes stale"
bound=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["lower_bound_bytes"] or "")' "$tmp/r.json")
if [ -n "$bound" ]; then
  grep -q ': placement .*, bound ' "$tmp/redraws" && ok || bad "the bound ($bound) is not shown in placement"
fi
grep -qE ': checking .*, arena [0-9.]+ (B|KiB|MiB|GiB)' "$tmp/redraws" && ok || bad "the arena is not shown once placed"
# the summary starts on a clean line
grep -q '^.*a_model.*: 144 nodes, ' "$tmp/lines" && ok || bad "no summary: $(tail -4 "$tmp/lines")"
# a log: one line per phase with -v, no progress without it, nothing with -q
"$OLLA" -v --time-limit 2 "$m" "$tmp/o2.onnx" 2>"$tmp/log"
[ "$(grep -c ': ordering ' "$tmp/log")" -eq 1 ] && ! grep -q $'\r' "$tmp/log" && ok || bad "-v log: $(cat "$tmp/log")"
"$OLLA" --time-limit 2 "$m" "$tmp/o3.onnx" 2>"$tmp/log"
! grep -q ': ordering ' "$tmp/log" && ok || bad "progress lines in a log without -v"
"$OLLA" -q --time-limit 2 "$m" "$tmp/o4.onnx" 2>"$tmp/log"
[ ! -s "$tmp/log" ] && ok || bad "-q printed: $(cat "$tmp/log")"
cli_finish "progress"
