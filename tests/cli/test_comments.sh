#!/usr/bin/env bash
# Comments a newcomer can follow:
# - every source file opens with a comment saying what it holds (C files
#   from their first line; scripts right after the #! line);
# - section banners have one style, /* ---- name ---- */ (a banner opening
#   a longer comment: /* ---- name ----);
# - every repository path a source file or a document names exists, so that
#   a comment never sends a reader to a file that moved. A path is a word that
# starts with one of the repository's top folders (passes/shapes/shapes.c,
# tests/cli/lib.sh, scripts/setup.sh); it counts as found when it exists
# from the top of the repository or from the naming file's folder, with or
# without an extension (bench/sched_bench is built from bench/sched_bench.c,
# models/mlp_train names models/mlp_train.onnx), when a glob in it matches
# (a word followed by <, as in fuzz/fuzz_<target>.c, is a prefix),
# or when git ignores it (tests/ort/node_modules, made by scripts/setup_ort.sh).
# bench/RESULTS.md is a log of past measurements, each with its commit, and
# keeps the paths of its day. Runs from the checkout in OLLA_SOURCE_DIR (or
# the one holding this script); needs git (skipped, 77, without it).
set -u
. "$(dirname "$0")/lib.sh"
SRC=${OLLA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$SRC" || { echo "FAIL: no source tree at $SRC"; exit 1; }
command -v git >/dev/null || cli_skip "git not found"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || cli_skip "$SRC is not a git checkout"

# ---- opening lines
for f in $(git ls-files -- '*.c' '*.h'); do
    head -n 1 "$f" | grep -qE '^(/\*|//)' && ok || bad "$f: the first line is not a comment"
done
for f in $(git ls-files -- '*.sh' '*.py' '*.mjs'); do
    awk 'NR == 1 && /^#!/ { next } { print; exit }' "$f" | grep -qE '^(#|"""|r"""|//|/\*)' && ok ||
        bad "$f: no comment opens it"
done

# ---- one banner style
while IFS= read -r hit; do
    line=${hit#*:*:}
    [[ "$line" =~ ^[[:space:]]*/\*\ ----\ .+\ ----(\ \*/)?$ ]] && ok || bad "${hit%%:*}: banner not in the /* ---- name ---- */ style: $line"
done < <(git grep -nE '^\s*/\* ?(-{3,}|={3,})' -- '*.c' '*.h')

# ---- paths that exist
tops='\.ci|bench|cli|cmake|docs|examples|fuzz|include|models|onnx|passes|pipeline|plan|python|scripts|solver|tests|util'
# Words that look like paths but name something else: ONNX's own source tree
# and a pair of Python packages.
not_paths='^(onnx/defs|onnx/numpy)$'

found() { # path, folder of the file naming it
    local p=$1 d=$2 base
    case "$p" in *'<') p="${p%<}*" ;; esac  # passes/shapes/shape_<family>.c: a pattern
    for base in "" "$d/"; do
        case "$p" in
            *'*'*) compgen -G "$base$p" >/dev/null && return 0 ;;
            *) [ -e "$base$p" ] && return 0
               compgen -G "$base$p.*" >/dev/null && return 0 ;;
        esac
    done
    git check-ignore -q "$p" 2>/dev/null
}

files=$(git ls-files -- '*.c' '*.h' '*.sh' '*.py' '*.mjs' '*.js' '*.cmake' '*CMakeLists.txt' '*.md' \
          '*.toml' '*.cfg' '.ci/*' | grep -v '^bench/RESULTS\.md$')
names=0
for f in $files; do
    [ -f "$f" ] || continue
    d=$(dirname "$f")
    while IFS=: read -r line p; do
        [ -n "$p" ] || continue
        names=$((names + 1))
        if [[ "$p" =~ $not_paths ]] || found "$p" "$d"; then ok; else bad "$f:$line names $p, which does not exist"; fi
    done < <(grep -noE "(^|[^A-Za-z0-9_./-])($tops)/[A-Za-z0-9_.*/-]*[A-Za-z0-9_*]<?" "$f" |
             sed -E "s/^([0-9]+):[^a-z.]?/\1:/")
done
echo "$names path names in $(echo "$files" | wc -l) files"
# A floor: the sources name far more paths than this; fewer means the
# pattern above stopped matching.
[ "$names" -ge 300 ] && ok || bad "only $names path names found"
cli_finish "comments"
