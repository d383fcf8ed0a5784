#!/usr/bin/env bash
# bench/serve_series.sh - the series API of `mfu serve` on a run of 10 million steps: requests
# per second and latency percentiles under wrk on loopback, and the time to ingest the run.
#
# The run is generated as canonical JSON-lines (a steady 1.5 s step with noise, a slow step
# every 1000, 262144 tokens a step) and ingested with `mfu ingest`. Then, against one server:
#   series?max_points=2000     LTTB over all 10M rows, the dashboard's default request
#   series?max_points=20000    the largest request the API allows by default
#   a window of 20000 rows     (from/to), sent whole: no downsampling
#   every row                  (max_points=10000000, allowed by --max-points for this peer):
#                              one request timed, the cost a client pays without downsampling
# Each wrk run: 2 threads, 8 connections, 10 s, on the same machine as the server (on 2 cores
# they share the CPUs); before them, 20 requests from one client give the cost of one request.
# The first request loads the run from the store into memory and is timed apart. Long ranges
# are downsampled over the min/max candidates of 64-row blocks (docs/internals/server.md).
#
# usage: bench/serve_series.sh [PATH/TO/mfu] [STEPS]      (default build/mfu, 10000000)
set -euo pipefail
mfu=${1:-build/mfu}
steps=${2:-10000000}
command -v wrk >/dev/null || { echo "serve_series.sh: wrk is missing (bash scripts/deps.sh)"; exit 1; }
tmp=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

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

echo "== mfu ingest (the run into a new store)"
t0=$(now)
"$mfu" ingest "$tmp/big.jsonl" --run big --db "$tmp/bench.db" 2>"$tmp/ingest.err"
ingest_s=$(since "$t0")
echo "   $ingest_s s ($(awk -v n="$steps" -v s="$ingest_s" 'BEGIN { printf "%.0f", n / s }') steps/s)"
rm -f "$tmp/big.jsonl"

"$mfu" serve --db "$tmp/bench.db" --listen 127.0.0.1:0 --model llama3-8b --device h100-sxm \
    --max-points "$steps" >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
for _ in $(seq 100); do grep -q http:// "$tmp/serve.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$tmp/serve.out")
url=${url%/}

echo "== first request (loads the run from the store)"
t0=$(now)
curl -sf -o /dev/null "$url/api/runs/big/series?max_points=2000"
echo "   $(since "$t0") s"
echo "   server RSS after loading: $(awk '/VmRSS/ { printf "%.0f MB", $2 / 1024 }' /proc/$pid/status)"

bench() { # LABEL PATH
    local out
    out=$(wrk -t2 -c8 -d10s --latency "$url$2")
    local rps p50 p99
    rps=$(awk '/^Requests\/sec/ { print $2 }' <<<"$out")
    p50=$(awk '$1 == "50%" { print $2 }' <<<"$out")
    p99=$(awk '$1 == "99%" { print $2 }' <<<"$out")
    printf "   %-28s %10s req/s   p50 %8s   p99 %8s\n" "$1" "$rps" "$p50" "$p99"
}
one_client() { # LABEL PATH: 20 requests one after another, median and slowest
    local t
    t=$(for _ in $(seq 20); do curl -sf -o /dev/null -w '%{time_total}\n' "$url$2"; done | sort -n)
    printf "   %-28s median %6.1f ms   slowest %6.1f ms\n" "$1" \
        "$(awk 'NR == 10 { print $1 * 1000 }' <<<"$t")" "$(tail -1 <<<"$t" | awk '{ print $1 * 1000 }')"
}
echo "== one client, 20 requests in a row ($steps rows)"
one_client "max_points=2000 (LTTB)" "/api/runs/big/series?fields=mfu&max_points=2000"
one_client "max_points=20000 (LTTB)" "/api/runs/big/series?fields=mfu&max_points=20000"
echo "== wrk -t2 -c8 -d10s on loopback ($steps rows)"
bench "max_points=2000 (LTTB)" "/api/runs/big/series?fields=mfu&max_points=2000"
bench "max_points=20000 (LTTB)" "/api/runs/big/series?fields=mfu&max_points=20000"
mid=$((steps / 2))
bench "20000-row window, whole" "/api/runs/big/series?fields=mfu&max_points=20000&from=$mid&to=$((mid + 19999))"
bench "GET /metrics" "/metrics"

echo "== every row in one answer (the peer without downsampling)"
t0=$(now)
curl -sf -o "$tmp/all.json" "$url/api/runs/big/series?fields=mfu&max_points=$steps"
echo "   $(since "$t0") s, $(du -m "$tmp/all.json" | cut -f1) MB"
t0=$(now)
curl -sf -o "$tmp/lttb.json" "$url/api/runs/big/series?fields=mfu&max_points=2000"
echo "   against $(since "$t0") s and $(du -k "$tmp/lttb.json" | cut -f1) kB with max_points=2000"
