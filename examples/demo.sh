#!/usr/bin/env bash
# examples/demo.sh - what 'make demo' runs: the whole main job on the bundled example logs
# (real training logs users posted, and a run recorded inside a PyTorch loop by the Python
# binding: examples/train_cpu_gpt.py; each file's .md says where it came from).
#   1. ingest each log of examples/runs.txt, with its run context (the flags on its line), into
#      the default store ($MFU_DB, else ./mfu-runs.db); a second run finds them unchanged;
#   2. print 'mfu report' for each, so that a new user sees real MFU figures and the framework's
#      own figures checked against mfu's recomputation;
#   3. serve the dashboard on loopback (port 8080, or a free one when 8080 is taken), printing
#      its URL, until Ctrl-C. Every run is served with its own stored context.
# usage: bash examples/demo.sh [--no-serve] [path/to/mfu]   (default: build/mfu)
#   --no-serve   stop after step 2 (what the tests run)
set -u
serve=1
if [ "${1:-}" = "--no-serve" ]; then
    serve=0
    shift
fi
bin=${1:-build/mfu}
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
[ -x "$bin" ] || { echo "demo: $bin is not built; run 'make build' first" >&2; exit 1; }
cd "$(dirname "$0")/.." || exit 1
store=${MFU_DB:-mfu-runs.db}
echo "mfu report on real training logs (run context: examples/runs.txt)"
rc=0
n=0
while read -r file args; do
    case "$file" in '' | '#'*) continue ;; esac
    # shellcheck disable=SC2086 # the flags are whitespace-separated words
    if ! out=$("$bin" ingest "examples/$file" $args 2>&1); then
        echo "$out" >&2
        rc=1
    fi
    n=$((n + 1))
    echo
    # shellcheck disable=SC2086
    "$bin" report "examples/$file" $args || rc=1
done <examples/runs.txt
echo
echo "(examples/*.md: where each run comes from; examples/train_cpu_gpt.py recorded the PyTorch one)"
echo "the $n runs and their context are in the store $store ('mfu runs' lists them)"
[ "$serve" = 1 ] && [ "$rc" = 0 ] || exit $rc
# 8080 when free; else a free port the kernel picks (mfu serve prints the URL either way)
port=8080
if (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; then
    port=0
fi
exec "$bin" serve --listen "127.0.0.1:$port"
