#!/usr/bin/env bash
# bench/ingest.sh - ingest throughput of mfu against Python's json module (and re) and jq doing
# the same extraction, measured in the same run on the same files, printed as ratios.
#
# Two logs are generated (bench/peers.py gen): a JSON-lines metrics log and a Megatron-LM log
# with timestamp prefixes. Per log, four rows:
#   mfu ingest    bench/ingest.c: the public ingest API reads the file into a run
#                 (detect, clean, parse, normalise every field, append to the columns), timed
#                 in-process; no output
#   mfu convert   the CLI end to end: the same ingest, then canonical JSON-lines to /dev/null,
#                 timed as a process
#   python3       json.loads per line (one precompiled re.search for Megatron), the fields mfu
#                 stores converted and appended to lists (all 8 JSON fields; 10 Megatron
#                 fields, the timestamp as seconds since 1970), timed in-process (interpreter
#                 start not counted)
#   jq            the same fields with -c to /dev/null, timed as a process
# Every timing is the best of REPEAT runs (the machines are shared and noisy: compare the
# ratios, which are measured in the same run, not the seconds). The ratio line is followed by
# the same ratio in CPU time (the least user + system time of one read, mfu and Python), which
# a loaded machine moves less. The script checks that mfu and Python read the same number of
# steps and the same losses before it prints a ratio.
#
# usage: bench/ingest.sh [--lines N] [--repeat N] [--no-jq] [MFU_BIN [LINES]]
#   MFU_BIN defaults to build/mfu (mfu-bench-ingest is looked up beside it); LINES to 400000
#   (at least 200000 for figures worth quoting; fewer for a quick check).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mfu=build/mfu
lines=400000
repeat=3
jq=1
pos=0
while [ $# -gt 0 ]; do
    case $1 in
    --lines) lines=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --no-jq) jq=0; shift ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed -e 's/^# \{0,1\}//' -e '/^set -e/d'; exit 0 ;;
    *)
        if [ $pos -eq 0 ]; then mfu=$1; else lines=$1; fi
        pos=$((pos + 1)); shift ;;
    esac
done
bench=$(dirname "$mfu")/mfu-bench-ingest
py=/usr/bin/python3
[ -x "$mfu" ] || { echo "bench: $mfu not found; run 'make build' first" >&2; exit 2; }
[ -x "$bench" ] || { echo "bench: $bench not found; run 'make build' first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$py" "$here/peers.py" gen "$tmp" "$lines"

jq_jsonl='[.step, .loss, .lr, .grad_norm, .step_time_s, .tokens, .tokens_per_s, .memory_bytes]'
jq_meg='capture("\\[(?<ts>[0-9-]+ [0-9:]+)\\] iteration +(?<s>[0-9]+)/.*elapsed time per iteration \\(ms\\): (?<ms>[0-9.]+) \\| throughput per GPU \\(TFLOP/s/GPU\\): (?<tf>[0-9.]+) \\| learning rate: (?<lr>[0-9.E+-]+) \\| global batch size: +(?<b>[0-9]+) \\| lm loss: (?<l>[0-9.E+-]+) \\|.*?grad norm: (?<g>[0-9.]+) \\| number of skipped iterations: +(?<sk>[0-9]+) \\| number of nan iterations: +(?<nn>[0-9]+)") | [(.ts + "Z" | strptime("%Y-%m-%d %H:%M:%SZ") | mktime), (.s|tonumber), ((.ms|tonumber)/1000), ((.tf|tonumber)*1e12), (.lr|tonumber), (.b|tonumber), (.l|tonumber), (.g|tonumber), (.sk|tonumber), (.nn|tonumber)]'

best() { # best wall seconds of REPEAT runs of "$@" (output discarded)
    local b=""
    for _ in $(seq "$repeat"); do
        local s e t
        s=$(date +%s.%N)
        "$@" >/dev/null 2>&1 || { echo "bench: command failed: $*" >&2; exit 1; }
        e=$(date +%s.%N)
        t=$(awk -v s="$s" -v e="$e" 'BEGIN { print e - s }')
        if [ -z "$b" ] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then b=$t; fi
    done
    echo "$b"
}

field() { # field KEY LINE: the value of KEY=... in a key=value line
    echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

row() { # row NAME FILE SECONDS PYTHON_SECONDS
    awk -v n="$1" -v b="$(stat -c %s "$2")" -v t="$3" -v p="$4" -v l="$lines" \
        'BEGIN { printf "  %-28s %8.3f %9.1f %12.0f %9.1fx\n", n, t, b / 1e6 / t, l / t, p / t }'
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
echo "ingest benchmark: $lines lines per log, best of $repeat; mfu $("$mfu" --version | cut -d' ' -f2)," \
    "$(date -u +%Y-%m-%d), ${cpu:-unknown CPU}, $(nproc) CPUs"
status=0
for kind in jsonl megatron; do
    if [ $kind = jsonl ]; then
        f=$tmp/run.jsonl; peer=json; jqp=$jq_jsonl; jqflags=-c
    else
        f=$tmp/megatron.log; peer=re; jqp=$jq_meg; jqflags=-cR
    fi
    m=$("$bench" --repeat "$repeat" "$f")
    p=$("$py" "$here/peers.py" $peer "$f" "$repeat")
    t_ing=$(field best_s "$m")
    t_py=$(field best_s "$p")
    t_conv=$(best "$mfu" convert --quiet "$f")
    echo
    echo "$kind log: $(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f MB", b / 1e6 }'), format" \
        "$(field format "$m") detected"
    printf "  %-28s %8s %9s %12s %10s\n" tool seconds MB/s lines/s "vs python"
    row "mfu ingest (library)" "$f" "$t_ing" "$t_py"
    row "mfu convert (CLI, output)" "$f" "$t_conv" "$t_py"
    row "python3 ($peer)" "$f" "$t_py" "$t_py"
    if [ $jq = 1 ]; then
        t_jq=$(best jq $jqflags "$jqp" "$f")
        row "jq $jqflags" "$f" "$t_jq" "$t_py"
    fi
    if [ "$(field steps "$m")" != "$(field records "$p")" ] ||
        [ "$(field loss_sum "$m")" != "$(field loss_sum "$p")" ]; then
        echo "  MISMATCH: mfu read $(field steps "$m") steps (loss sum $(field loss_sum "$m")), python" \
            "$(field records "$p") ($(field loss_sum "$p"))"
        status=1
    fi
    awk -v i="$t_ing" -v c="$t_conv" -v p="$t_py" -v j="${t_jq:-0}" -v q=$jq 'BEGIN {
        printf "  ratio: mfu ingest %.1fx python", p / i
        if (q) printf ", %.1fx jq", j / i
        printf "; mfu convert %.1fx python (target: ingest >= 10x python)\n", p / c }'
    awk -v i="$(field best_cpu_s "$m")" -v p="$(field best_cpu_s "$p")" 'BEGIN {
        printf "  cpu time: mfu ingest %.3f s, python3 %.3f s: %.1fx\n", i, p, p / i }'
done
exit $status
