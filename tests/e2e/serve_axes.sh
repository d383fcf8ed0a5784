#!/usr/bin/env bash
# e2e: the x axes of the dashboard in the series API: GET /api/runs/RUN/series?axes=1 adds
# elapsed_s (the sum of the step times up to each point) and tokens_cum (the tokens of the rows
# so far), aligned with "step", on the whole run and on a downsampled or ranged one; without
# axes=1 the answer is unchanged; axes=2 is refused.
E2E_CMD=serve
source "$(dirname "$0")/lib/e2e.bash"
command -v curl >/dev/null || { echo "serve_axes.sh: curl is missing (bash scripts/deps.sh)"; exit 1; }
pid=
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# a canonical log: 500 steps of 65536 tokens, step s takes 0.5 s (0.25 s from step 251 on)
log="$tmp/run.jsonl"
{
    echo '{"mfu_run":1,"format":"mfu","seq_len":2048,"world_size":8,"tokens_per_step":65536}'
    for s in $(seq 1 500); do
        t=0.5
        [ "$s" -gt 250 ] && t=0.25
        echo "{\"step\":$s,\"step_time_s\":$t,\"tokens\":65536}"
    done
} >"$log"
"$bin" serve "$log" --run r --db "$tmp/runs.db" --listen 127.0.0.1:0 >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 1 200); do grep -q 'http://' "$tmp/out" 2>/dev/null && break; sleep 0.05; done
url=$(grep -o 'http://[^ ]*' "$tmp/out" | head -1)
url=${url%/}
[ -n "$url" ] || { fail "serve did not start: $(cat "$tmp/err")"; e2e_finish; }
for _ in $(seq 1 200); do
    [ "$(curl -s "$url/api/runs/r" | jq -r .steps 2>/dev/null)" = 500 ] && break
    sleep 0.05
done
q() { curl -s -o "$tmp/out" -w '%{http_code}' "$url/api/runs/r/series?$1"; }

[ "$(q 'fields=tokens_per_second&axes=1')" = 200 ] || fail "axes=1: $(cat "$tmp/out")"
jq_true '(.elapsed_s | length) == 500 and (.tokens_cum | length) == 500'
jq_true '.elapsed_s[0] == 0.5 and .elapsed_s[249] == 125 and .elapsed_s[499] == 187.5'
jq_true '.tokens_cum[0] == 65536 and .tokens_cum[499] == 32768000'
jq_true '[range(1; 500) as $i | .elapsed_s[$i] > .elapsed_s[$i - 1]] | all'
cp "$tmp/out" "$tmp/full.json"

# downsampled: each kept point carries the sums of the whole run up to it
[ "$(q 'fields=tokens_per_second&axes=1&max_points=50')" = 200 ] || fail "downsampled: $(cat "$tmp/out")"
jq_true '.downsampled == true and (.step | length) == (.elapsed_s | length)'
jq -e --slurpfile full "$tmp/full.json" '[.step, .elapsed_s, .tokens_cum] | transpose |
    all(.[0] as $s | .[1] == $full[0].elapsed_s[$s - 1] and .[2] == $full[0].tokens_cum[$s - 1])' \
    "$tmp/out" >/dev/null || fail "downsampled sums differ from the whole run's"
# a range: sums still count from the run's first row
[ "$(q 'fields=step_time_s&axes=1&from=300&to=310')" = 200 ] || fail "range: $(cat "$tmp/out")"
jq_true '.step[0] == 300 and .elapsed_s[0] == 137.5'

# without axes=1 the answer has neither key; a bad value is a 400
[ "$(q 'fields=mfu')" = 200 ] || fail "plain series"
jq_true 'has("elapsed_s") | not'
[ "$(q 'fields=mfu&axes=0')" = 200 ] || fail "axes=0"
jq_true 'has("tokens_cum") | not'
[ "$(q 'fields=mfu&axes=2')" = 400 ] || fail "axes=2 accepted"
jq_true '.error | test("axes")'

e2e_finish
