#!/usr/bin/env bash
# bench/report_same.sh - two builds of mfu give byte-identical reports on every fixture: the check
# that a change meant to be faster (the change-point search, the columns the analysis reads)
# changed no output. Every log under tests/data/logs, examples/ and (when present)
# /work/shared/fixtures/logs, plus the logs bench/report_scale.sh generates at 20000 steps
# (clean and a level shift every 2000 steps) and a log of numbers at the edges of the JSON
# writer's real format, is reported by both binaries as text, --json,
# --no-series, and with a model and device (--model llama3-8b --device h100-sxm --devices 8
# --global-batch 64 --seq 4096: MFU and the FLOPs findings), and in pairs (--json: an array),
# and the outputs (stdout, stderr, exit status) are compared.
#
# usage: bench/report_same.sh OLD_MFU NEW_MFU
#   OLD_MFU: e.g. a build of main (git worktree add /tmp/old main; cmake ... ; build/mfu)
# Prints one line per difference and a summary; exit status 1 when anything differs.
set -u
old=${1:?usage: report_same.sh OLD_MFU NEW_MFU}
new=${2:?usage: report_same.sh OLD_MFU NEW_MFU}
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
gen=$(dirname "$new")/mfu-bench-gen_steps
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

logs=()
while IFS= read -r f; do logs+=("$f"); done < <(
    find "$src/tests/data/logs" "$src/examples" /work/shared/fixtures/logs -type f \
        \( -name '*.log' -o -name '*.jsonl' -o -name '*.txt' -o -name '*.gz' -o -name '*.csv' \
        -o -name '*.json' \) 2>/dev/null | grep -v 'config.json$' | sort)
if [ -x "$gen" ]; then
    "$gen" 20000 clean "$tmp/clean.jsonl" && logs+=("$tmp/clean.jsonl")
    "$gen" 20000 shift "$tmp/shift.jsonl" && logs+=("$tmp/shift.jsonl")
fi
# numbers at the edges of the --json writer's real format (%.10g: exponents both ways, integral
# values, negative zero, ten significant digits), in every per-step column
awk 'BEGIN {
    split("1e-7 3.5e-5 0.000123 1 12 1e5 123456789012 1.234567890123e15 2.5e21 7e-300", t, " ")
    split("0 -0 1e-30 -2.5 3.14159265358979 1e10 6.02214076e23 -1e-5 42 0.1", l, " ")
    for (i = 1; i <= 400; i++) {
        a = t[(i % 10) + 1]; b = l[(int(i / 10) % 10) + 1]
        printf "{\"step\": %d, \"loss\": %s, \"step_time_s\": %s, \"tokens\": %s, \"tokens_per_s\": %s, \"mfu\": %s, \"tflops\": %s}\n", i, b, a, (i % 3 ? 4096 : 1.5e13), (i % 7 ? 123456.789 : 9.87654321e-3), (i % 5 ? 0.4321 : 1e-6), (i % 4 ? 123.4 : 1e-4)
    }
}' >"$tmp/edges.jsonl" && logs+=("$tmp/edges.jsonl")

ctx=(--model llama3-8b --device h100-sxm --devices 8 --global-batch 64 --seq 4096)
n=0 diffs=0 failed=0
one() { # one LOG ARGS...: both binaries, compare stdout, stderr and status
    local log=$1
    shift
    "$old" report "$log" "$@" >"$tmp/a.out" 2>"$tmp/a.err"
    local ra=$?
    "$new" report "$log" "$@" >"$tmp/b.out" 2>"$tmp/b.err"
    local rb=$?
    n=$((n + 1))
    [ $rb = 0 ] || failed=$((failed + 1))
    if [ $ra != $rb ] || ! cmp -s "$tmp/a.out" "$tmp/b.out" || ! cmp -s "$tmp/a.err" "$tmp/b.err"; then
        diffs=$((diffs + 1))
        echo "DIFFERS: report ${log#"$src"/} $* (exit $ra vs $rb)"
        diff "$tmp/a.out" "$tmp/b.out" | head -5
    fi
}
prev=""
for log in "${logs[@]}"; do
    one "$log"
    one "$log" --json
    one "$log" --no-series --json
    one "$log" "${ctx[@]}"
    one "$log" "${ctx[@]}" --json
    [ -z "$prev" ] || one "$log" "$prev" --json # several runs: an array
    prev=$log
done
one "${logs[0]}" /nonexistent.log "${logs[1]}" --json # a failing run between two
echo "report_same: ${#logs[@]} logs, $n reports compared ($failed exit non-zero in both), $diffs differ"
[ $diffs = 0 ]
