#!/usr/bin/env bash
# examples/demo.sh - what 'make demo' runs: 'mfu report' on the bundled example logs, each with
# its run context from examples/runs.txt, so that a new user sees real MFU figures and the
# framework's own figures checked against mfu's recomputation at once.
# usage: bash examples/demo.sh [path/to/mfu]   (default: build/mfu)
set -u
bin=${1:-build/mfu}
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
[ -x "$bin" ] || { echo "demo: $bin is not built; run 'make build' first" >&2; exit 1; }
cd "$(dirname "$0")/.." || exit 1
echo "mfu report on real training logs (run context: examples/runs.txt)"
rc=0
while read -r file args; do
    case "$file" in '' | '#'*) continue ;; esac
    echo
    # shellcheck disable=SC2086 # the flags are whitespace-separated words
    "$bin" report "examples/$file" $args || rc=1
done <examples/runs.txt
exit $rc
