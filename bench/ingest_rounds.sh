#!/usr/bin/env bash
# bench/ingest_rounds.sh - the ingest goals of issue 11 on the median of alternating rounds:
# JSON-lines ingest >= 10x Python's json, Megatron text ingest >= 1 GB/s per core. Each round
# runs, one after the other, mfu-bench-ingest and the Python peer (bench/peers.py) on the
# JSON-lines log, then on the Megatron log (and, with OLD_BENCH, a second mfu-bench-ingest
# beside them: a previous build in the same rounds). Per round and tool the least CPU time of
# REPEAT reads counts (user + system: one core's work, which a loaded machine moves less than
# the wall time); the script prints each round and the medians: the CPU-time ratio Python / mfu
# and mfu's MB per CPU second.
#
# usage: bench/ingest_rounds.sh [--lines N] [--rounds R] [--repeat N] [--old OLD_BENCH] [BENCH]
#   BENCH defaults to build/mfu-bench-ingest; N to 200000, R to 5, REPEAT to 3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=build/mfu-bench-ingest
old=""
lines=200000
rounds=5
repeat=3
while [ $# -gt 0 ]; do
    case $1 in
    --lines) lines=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --old) old=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed -e 's/^# \{0,1\}//' -e '/^set -e/d'; exit 0 ;;
    *) bench=$1; shift ;;
    esac
done
py=/usr/bin/python3
[ -x "$bench" ] || { echo "bench: $bench not found; run 'make build' first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$here/peers.py" gen "$tmp" "$lines"
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
echo "ingest rounds: $lines lines, $rounds rounds, least CPU time of $repeat reads;" \
    "$(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in jsonl megatron; do
    if [ $kind = jsonl ]; then f=$tmp/run.jsonl; peer=json; else f=$tmp/megatron.log; peer=re; fi
    bytes=$(stat -c %s "$f")
    : >"$tmp/r.$kind"
    for r in $(seq "$rounds"); do
        m=$("$bench" --repeat "$repeat" "$f")
        p=$("$py" "$here/peers.py" $peer "$f" "$repeat")
        o=0
        [ -n "$old" ] && o=$(field best_cpu_s "$("$old" --repeat "$repeat" "$f")")
        [ "$(field loss_sum "$m")" = "$(field loss_sum "$p")" ] ||
            { echo "MISMATCH: mfu and python read other losses on $kind" >&2; exit 1; }
        echo "$(field best_cpu_s "$m") $(field best_cpu_s "$p") $o" >>"$tmp/r.$kind"
    done
    awk -v b="$bytes" -v k=$kind -v o="$old" '
        function med(a, n,   i, j, t) {
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        { n++; m[n] = $1; p[n] = $2; q[n] = $2 / $1; mb[n] = b / 1e6 / $1; if (o != "") { ol[n] = $3; on[n] = $3 / $1 }
          printf "  %s round %d: mfu %.4f s cpu (%.0f MB/s), python %.3f s: %.1fx%s\n", k, n, $1, b / 1e6 / $1, $2, $2 / $1,
              o != "" ? sprintf("; old build %.4f s (old / new %.3f)", $3, $3 / $1) : "" }
        END {
            printf "%s (%.1f MB): median ratio %.1fx python (cpu), median %.0f MB per cpu second", k, b / 1e6, med(q, n), med(mb, n)
            if (o != "") printf ", median old / new cpu %.3f", med(on, n)
            printf "\n"
        }' "$tmp/r.$kind"
done
