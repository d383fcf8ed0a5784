#!/usr/bin/env bash
# e2e: one truth per step. A log where precedence matters (the framework's tokens/s disagreeing
# with tokens / step time; devices, dtype, padding and sequence length changing mid-run) goes
# through every view: mfu report (text, JSON, HTML), mfu watch, and mfu serve (the series, the
# run list's summary, /metrics). Each shows the report's MFU for every step and its headline
# (the steady median); the disagreement is said once. (The in-process monitor is held to the
# report's figures bit for bit in tests/unit/test_monitor.c.) Every wait is bounded.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
command -v curl >/dev/null || { echo "one_truth.sh: curl is missing (bash scripts/deps.sh)"; exit 1; }
py=/usr/bin/python3
lib=$(dirname "$0")/lib/one_truth.py
srv=""
cleanup() {
    [ -n "$srv" ] && kill -TERM "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

log=$tmp/run.jsonl
$py "$lib" log "$log" || fail "could not write the log"
CTX=(--model gpt2 --device h100-sxm)

ok "$log" "${CTX[@]}" --json
cp "$tmp/out" "$tmp/report.json"
jq_is '.steps' 300
# the disagreement between the log's own figures, said once, with both values and the choice
jq_is '[.notes[] | select(test("disagree"))] | length' 1
jq_true '[.notes[] | select(test("disagree"))][0] | test("uses tokens / step time")'
# every per-step change is counted with the step's own figures
jq_true '(.series[] | select(.step == 150) | .mfu) as $a | (.series[] | select(.step == 100) | .mfu) as $b | ($a > 0 and $b > 0)'
# the headline is the steady median: the segments' levels agree with it where there is one
ok "$log" "${CTX[@]}"
grep -q '^note: the log.s own tokens/s' "$tmp/out" || fail "the text report does not say the tokens/s disagree"

# HTML: the card's MFU is the median
ok "$log" "${CTX[@]}" --html "$tmp/page.html"
$py "$lib" check html "$tmp/report.json" "$tmp/page.html" || fail "html"

# watch: the newest step and the medians
"$bin" watch "$log" "${CTX[@]}" --once --width 120 >"$tmp/frame" 2>"$tmp/werr" || fail "watch: $(cat "$tmp/werr")"
$py "$lib" check watch "$tmp/report.json" "$tmp/frame" || fail "watch"

# serve: the series, the summary, /metrics (the log is followed: a live run)
"$bin" serve "$log" "${CTX[@]}" --db "$tmp/runs.db" --listen 127.0.0.1:0 >"$tmp/srv.out" 2>"$tmp/srv.err" &
srv=$!
for _ in $(seq 1 200); do grep -q 'http://' "$tmp/srv.out" 2>/dev/null && break; sleep 0.05; done
url=$(grep -o 'http://[^ ]*' "$tmp/srv.out" | head -1)
url=${url%/}
[ -n "$url" ] || fail "server did not start: $(cat "$tmp/srv.err")"
got=0
for _ in $(seq 1 200); do
    curl -s "$url/api/runs" >"$tmp/runs.json" 2>/dev/null
    [ "$(jq -r '.runs[0].steps // 0' "$tmp/runs.json" 2>/dev/null)" = 300 ] && got=1 && break
    sleep 0.05
done
[ "$got" = 1 ] || fail "the server did not read the 300 steps: $(cat "$tmp/runs.json")"
curl -s "$url/api/runs/run/series?fields=mfu,tokens_per_second&max_points=1000" >"$tmp/series.json"
curl -s "$url/metrics" >"$tmp/metrics.txt"
$py "$lib" check series "$tmp/report.json" "$tmp/series.json" || fail "series"
$py "$lib" check summary "$tmp/report.json" "$tmp/runs.json" || fail "summary"
$py "$lib" check metrics "$tmp/report.json" "$tmp/metrics.txt" || fail "metrics"
e2e_finish
