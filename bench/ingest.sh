#!/usr/bin/env bash
# bench/ingest.sh - ingest throughput of mfu against Python's json module (and re) and jq doing
# the same extraction, measured in the same run on the same files, printed as ratios.
#
# Two logs are generated: a JSON-lines metrics log and a Megatron-LM log (the two shapes the
# issue names). Every tool extracts per step: step, loss, step time and tokens, and writes one
# record per step to /dev/null. mfu does it with `mfu convert` (detect, parse, normalise, write
# canonical JSON-lines), so it does at least as much work as the peers.
#
# usage: bench/ingest.sh [PATH/TO/mfu] [LINES]      (default build/mfu, 400000 lines)
# Each timing is the best of 3 runs (the machines are shared and noisy; ratios matter).
set -euo pipefail
mfu=${1:-build/mfu}
lines=${2:-400000}
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$py" - "$tmp" "$lines" <<'PY'
import sys, random
d, n = sys.argv[1], int(sys.argv[2])
random.seed(1)
with open(f"{d}/run.jsonl", "w") as f:
    for i in range(1, n + 1):
        f.write('{"step": %d, "loss": %.6f, "lr": %.6e, "grad_norm": %.4f, "step_time_s": %.5f, '
                '"tokens": 1048576, "tokens_per_s": %.1f, "memory_bytes": 71202000000}\n'
                % (i, 2 + random.random(), 3e-4, 0.5 + random.random(), 0.9 + 0.1 * random.random(),
                   1048576 / 0.95))
with open(f"{d}/megatron.log", "w") as f:
    for i in range(1, n + 1):
        f.write(" [2024-05-01 10:%02d:%02d] iteration %8d/ 1000000 | consumed samples: %12d | "
                "elapsed time per iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | "
                "learning rate: %.6E | global batch size:   256 | lm loss: %.6E | loss scale: 1.0 | "
                "grad norm: %.3f | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
                % (i // 60 % 60, i % 60, i, i * 256, 900 + random.random() * 50, 400 + random.random() * 10,
                   3e-4, 2 + random.random(), 0.5 + random.random()))
PY

cat >"$tmp/py_jsonl.py" <<'PY'
import sys, json
out = sys.stdout
for line in open(sys.argv[1]):
    o = json.loads(line)
    out.write("%d,%r,%r,%r\n" % (o["step"], o.get("loss"), o.get("step_time_s"), o.get("tokens")))
PY
cat >"$tmp/py_megatron.py" <<'PY'
import sys, re
pat = re.compile(r"iteration\s+(\d+)/.*?elapsed time per iteration \(ms\): ([0-9.]+).*?"
                 r"global batch size:\s+(\d+).*?lm loss: ([0-9.E+-]+)")
out = sys.stdout
for line in open(sys.argv[1]):
    m = pat.search(line)
    if m:
        out.write("%s,%s,%g,%d\n" % (m.group(1), m.group(4), float(m.group(2)) / 1000,
                                      int(m.group(3)) * 4096))
PY
jq_jsonl='[.step, .loss, .step_time_s, .tokens] | @csv'
jq_meg='capture("iteration +(?<s>[0-9]+)/.*elapsed time per iteration \\(ms\\): (?<ms>[0-9.]+).*global batch size: +(?<b>[0-9]+).*lm loss: (?<l>[0-9.E+-]+)") | [(.s|tonumber), (.l|tonumber), ((.ms|tonumber)/1000), ((.b|tonumber)*4096)] | @csv'

best() { # best of 3 wall seconds of "$@"
    local b=""
    for _ in 1 2 3; do
        local s e t
        s=$(date +%s.%N)
        "$@" >/dev/null 2>&1 || { echo "bench: command failed: $*" >&2; exit 1; }
        e=$(date +%s.%N)
        t=$(awk -v s="$s" -v e="$e" 'BEGIN { print e - s }')
        if [ -z "$b" ] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then b=$t; fi
    done
    echo "$b"
}

row() { # name file seconds
    local mb
    mb=$(awk -v b="$(stat -c %s "$2")" 'BEGIN { print b / 1e6 }')
    awk -v n="$1" -v mb="$mb" -v t="$3" -v l="$lines" \
        'BEGIN { printf "  %-26s %8.2f s %9.1f MB/s %12.0f lines/s\n", n, t, mb / t, l / t }'
}

echo "ingest benchmark: $lines lines per log, best of 3 (mfu $("$mfu" --version | cut -d' ' -f2))"
for kind in jsonl megatron; do
    if [ $kind = jsonl ]; then f=$tmp/run.jsonl; fmt=jsonl; jqp=$jq_jsonl; jqflags=-r
    else f=$tmp/megatron.log; fmt=megatron; jqp=$jq_meg; jqflags=-rR; fi
    echo
    echo "$kind log: $(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f MB", b / 1e6 }')"
    t_mfu=$(best "$mfu" convert --quiet --format "$fmt" "$f")
    t_py=$(best "$py" "$tmp/py_$kind.py" "$f")
    t_jq=$(best jq $jqflags "$jqp" "$f")
    row "mfu convert" "$f" "$t_mfu"
    row "python3 ($([ $kind = jsonl ] && echo json || echo re))" "$f" "$t_py"
    row "jq" "$f" "$t_jq"
    awk -v m="$t_mfu" -v p="$t_py" -v j="$t_jq" \
        'BEGIN { printf "  ratio: mfu is %.1fx python, %.1fx jq (target: >= 10x python)\n", p / m, j / m }'
done
