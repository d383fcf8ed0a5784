#!/usr/bin/env bash
# bench/serve_series.sh - the series API of `mfu serve` on a run of 10 million steps, this mfu
# against a peer mfu (the main branch's binary) in the same run: the time to ingest the run,
# the first series request (it loads the run from the store), and latency percentiles of 8
# concurrent clients under wrk on loopback. The two servers take turns, round by round (the
# order alternates), so a machine that gets busier slows both; the ratios peer / this are
# printed per round and as medians.
#
# The run is generated as canonical JSON-lines (a steady 1.5 s step with noise, a slow step
# every 1000, 262144 tokens a step) and ingested by each mfu into its own store (a store of a
# newer schema is refused by an older mfu). Per round and per mfu, one fresh server:
#   load                      the first request, max_points=2000 over the whole run: its
#                             wall time and the server's CPU time for it (/proc/PID/stat)
#   same query                wrk -t2 -c8: the dashboard's default request again and again
#                             (answered from the series cache where there is one)
#   random ranges             wrk -t2 -c8 with a script: each request a random range of half
#                             the run at 2000 points (no two alike: no cache helps)
#   axes, random ranges       the same with axes=1 (the dashboard's x axes by time and tokens)
#   random, 20000 points      random ranges of half the run at max_points=20000
#
# usage: bench/serve_series.sh [--peer PATH/TO/mfu] [--rounds N] [--steps N] [--secs S]
#                              [PATH/TO/mfu]
#        defaults: no peer, 5 rounds, 10000000 steps, 5 s per wrk run, build/mfu
set -euo pipefail
peer=
rounds=5
steps=10000000
secs=5
while [ $# -gt 0 ]; do
    case $1 in
    --peer) peer=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --secs) secs=$2; shift 2 ;;
    -*) echo "serve_series.sh: unknown option $1"; exit 2 ;;
    *) break ;;
    esac
done
mfu=${1:-build/mfu}
command -v wrk >/dev/null || { echo "serve_series.sh: wrk is missing (bash scripts/deps.sh)"; exit 1; }
tmp=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "== $(uptime)"
echo "== generating $steps steps of canonical JSON-lines"
awk -v n="$steps" 'BEGIN {
    srand(1);
    print "{\"mfu_run\":1,\"format\":\"torchtitan\",\"seq_len\":4096,\"world_size\":64}";
    for (i = 1; i <= n; i++) {
        t = 1.5 + 0.02 * rand(); if (i % 1000 == 0) t = 4.5;
        printf "{\"step\":%d,\"step_time_s\":%.5f,\"tokens\":262144,\"loss\":%.5f}\n", i, t, 2 + 1 / (1 + i / 1e5);
    }
}' >"$tmp/big.jsonl"
echo "   $(du -m "$tmp/big.jsonl" | cut -f1) MB"

names=(this)
bins=("$mfu")
if [ -n "$peer" ]; then
    names+=(peer)
    bins+=("$peer")
fi
for k in "${!bins[@]}"; do
    echo "== ${names[$k]}: mfu ingest ($(${bins[$k]} --version 2>/dev/null | head -1 || echo "${bins[$k]}"))"
    t0=$(now)
    "${bins[$k]}" ingest "$tmp/big.jsonl" --run big --db "$tmp/${names[$k]}.db" 2>"$tmp/ingest.err"
    s=$(since "$t0")
    echo "   $s s ($(awk -v n="$steps" -v s="$s" 'BEGIN { printf "%.0f", n / s }') steps/s), store $(du -m "$tmp/${names[$k]}.db" | cut -f1) MB"
done
rm -f "$tmp/big.jsonl"

half=$((steps / 2))
lua() { # FILE QUERY: random ranges of half the run
    cat >"$1" <<EOF
math.randomseed(7)
request = function()
    local a = math.random(1, $half)
    return wrk.format("GET", "/api/runs/big/series?fields=mfu&$2&from=" .. a .. "&to=" .. (a + $half))
end
EOF
}
lua "$tmp/rand.lua" "max_points=2000"
lua "$tmp/axes.lua" "max_points=2000&axes=1"
lua "$tmp/rand20k.lua" "max_points=20000"

cpu_ticks() { # PID: its user + system CPU so far, in clock ticks (/proc/PID/stat fields 14, 15)
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}
ms() { # wrk latency (us, ms, s, m) -> ms
    awk -v v="$1" 'BEGIN { u = v; sub(/[0-9.]+/, "", u); x = v + 0;
        if (u == "us") x /= 1000; else if (u == "s") x *= 1000; else if (u == "m") x *= 60000;
        printf "%.2f", x }'
}
wrk_run() { # NAME LABEL SCRIPT|- PATH: one line, and the numbers kept for the medians
    local out rps p50 p99
    if [ "$3" = - ]; then
        out=$(wrk -t2 -c8 -d"${secs}s" --latency "$url$4")
    else
        out=$(wrk -t2 -c8 -d"${secs}s" --latency -s "$3" "$url$4")
    fi
    rps=$(awk '/^Requests\/sec/ { print $2 }' <<<"$out")
    p50=$(ms "$(awk '$1 == "50%" { print $2 }' <<<"$out")")
    p99=$(ms "$(awk '$1 == "99%" { print $2 }' <<<"$out")")
    printf "   %-5s %-26s %9s req/s   p50 %8s ms   p99 %8s ms\n" "$1" "$2" "$rps" "$p50" "$p99"
    echo "$1|$2|$p50|$p99|$rps" >>"$tmp/results"
}
: >"$tmp/results"
one_server() { # K ROUND
    local name=${names[$1]}
    "${bins[$1]}" serve --db "$tmp/$name.db" --listen 127.0.0.1:0 --model llama3-8b \
        --device h100-sxm >"$tmp/serve.out" 2>"$tmp/serve.err" &
    pid=$!
    for _ in $(seq 100); do grep -q http:// "$tmp/serve.out" 2>/dev/null && break; sleep 0.1; done
    url=$(grep -o 'http://[^ ]*' "$tmp/serve.out")
    url=${url%/}
    local t0 load c0 cpu
    c0=$(cpu_ticks "$pid")
    t0=$(now)
    curl -sf -o /dev/null "$url/api/runs/big/series?fields=mfu&max_points=2000"
    load=$(since "$t0")
    cpu=$(awk -v a="$c0" -v b="$(cpu_ticks "$pid")" -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / t }')
    printf "   %-5s %-26s %6s s   server CPU %s s   server RSS %s\n" "$name" "load (first request)" \
        "$load" "$cpu" "$(awk '/VmRSS/ { printf "%.0f MB", $2 / 1024 }' /proc/$pid/status)"
    echo "$name|load|$load|$load|0" >>"$tmp/results"
    echo "$name|load CPU|$cpu|$cpu|0" >>"$tmp/results"
    wrk_run "$name" "same query" - "/api/runs/big/series?fields=mfu&max_points=2000"
    wrk_run "$name" "random ranges" "$tmp/rand.lua" "/"
    wrk_run "$name" "axes, random ranges" "$tmp/axes.lua" "/"
    wrk_run "$name" "random, 20000 points" "$tmp/rand20k.lua" "/"
    kill -TERM "$pid"
    wait "$pid" 2>/dev/null || true
    pid=
}
for r in $(seq "$rounds"); do
    echo "== round $r of $rounds ($(uptime | sed 's/.*load average: //'))"
    if [ ${#bins[@]} -eq 1 ] || [ $((r % 2)) -eq 1 ]; then
        for k in "${!bins[@]}"; do one_server "$k" "$r"; done
    else
        for ((k = ${#bins[@]} - 1; k >= 0; k--)); do one_server "$k" "$r"; done
    fi
done

echo "== medians over $rounds rounds (p50 / p99 in ms; load: the first request's wall and the server's CPU for it, s)"
for label in "load" "load CPU" "same query" "random ranges" "axes, random ranges" "random, 20000 points"; do
    for name in "${names[@]}"; do
        p50=$(awk -F'|' -v n="$name" -v l="$label" '$1 == n && $2 == l { print $3 }' "$tmp/results" | median)
        p99=$(awk -F'|' -v n="$name" -v l="$label" '$1 == n && $2 == l { print $4 }' "$tmp/results" | median)
        printf "   %-5s %-26s p50 %9s   p99 %9s\n" "$name" "$label" "$p50" "$p99"
        echo "$name|$label|$p50|$p99" >>"$tmp/medians"
    done
    if [ -n "$peer" ]; then
        awk -F'|' -v l="$label" '$2 == l { if ($1 == "this") { a = $3; b = $4 } else { c = $3; d = $4 } }
            END { if (a > 0 && b > 0) printf "   ratio peer/this %-17s p50 %8.1fx   p99 %8.1fx\n", l, c / a, d / b }' "$tmp/medians"
    fi
done
echo "== $(uptime)"
