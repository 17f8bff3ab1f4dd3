#!/usr/bin/env bash
# Flags and documentation agree. Every sub-command prints its help with
# --help and -h and exits 0; every flag its help names is accepted by it,
# and every flag it accepts (of all the flag literals of cli/*.c) its help
# names; and the flags of all the help texts, the flag literals of cli/*.c, the
# README's Usage section and the man page are one and the same set.
set -u
. "$(dirname "$0")/lib.sh"
OLLA=${OLLA:?} ; SRC=${OLLA_SOURCE_DIR:?}
PY=/usr/bin/python3
T=$SRC/tests/tools/doc_flags.py
cli_tmp

# accepted SUB FLAG: the sub-command does not call FLAG unknown
accepted() {
  local sub=$1 flag=$2
  # shellcheck disable=SC2086
  "$OLLA" $sub "$flag" x=1 2>&1 </dev/null | grep -qi "unknown option" && return 1
  return 0
}

$PY "$T" source "$SRC/cli" >"$tmp/source.flags"
: >"$tmp/all_help"
for sub in convert check shapes place batch tradeoff; do
  s=$sub; [ $sub = convert ] && s=""
  for h in --help -h; do
    # shellcheck disable=SC2086
    "$OLLA" $s $h >"$tmp/$sub.help" 2>"$tmp/err"; rc=$?
    [ $rc -eq 0 ] && grep -q "^usage: olla-onnx" "$tmp/$sub.help" && [ ! -s "$tmp/err" ] && ok ||
      bad "olla-onnx $s $h: exit $rc, stdout $(head -1 "$tmp/$sub.help"), stderr $(cat "$tmp/err")"
  done
  cat "$tmp/$sub.help" >>"$tmp/all_help"
  kind=help; [ $sub = convert ] && kind=options # the main help's usage lines name the others' flags
  for f in $($PY "$T" $kind "$tmp/$sub.help"); do
    case "$f" in --help|-h|--version) continue ;; esac
    accepted "$s" "$f" && ok || bad "olla-onnx $s --help names $f, which it rejects"
  done
  # the check above has teeth: an unknown flag is called so
  accepted "$s" --frobnicate && bad "olla-onnx $s accepts --frobnicate" || ok
  # the other way: every flag the sub-command's parser accepts, its help names
  $PY "$T" help "$tmp/$sub.help" >"$tmp/$sub.named"
  for f in $(cat "$tmp/source.flags"); do
    case "$f" in --help|-h|--version) continue ;; esac
    if accepted "$s" "$f"; then
      grep -qx -- "$f" "$tmp/$sub.named" && ok || bad "olla-onnx $s accepts $f, which its --help does not name"
    fi
  done
done
[ "$("$OLLA" --version)" != "" ] && ok || bad "--version prints nothing"

$PY "$T" help "$tmp/all_help" >"$tmp/help.flags"
$PY "$T" readme "$SRC/README.md" >"$tmp/readme.flags"
$PY "$T" man "$SRC/docs/olla-onnx.1" >"$tmp/man.flags"
[ "$(wc -l <"$tmp/help.flags")" -ge 15 ] && ok || bad "only $(wc -l <"$tmp/help.flags") flags found in the help texts"
same() { # same A B: two flag lists are equal, else the differences
  local d; d=$(diff "$tmp/$1.flags" "$tmp/$2.flags" | grep '^[<>]' | tr '\n' ' ')
  [ -z "$d" ] && ok || bad "flags of $1 (<) and $2 (>) differ: $d"
}
same source help   # accepted by the code = named in --help
same help readme   # named in --help = documented in the README's Usage section
same help man      # = documented in the man page
cli_finish "flags"
