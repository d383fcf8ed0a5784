#!/usr/bin/env bash
# e2e: a trace attached to a stored run (mfu trace FILE... --attach RUN) and served by mfu serve
# (GET /api/runs/RUN/trace, what the dashboard's trace panel reads): the waterfall's MFU is the
# stored run's report MFU under its stored context, the JSON is mfu trace --json's, kernel names
# reach the client escaped, and the errors: no such run, no trace attached, a bad trace (the
# store keeps what it had). Every wait is bounded; the server is killed on exit.
E2E_CMD=trace
source "$(dirname "$0")/lib/e2e.bash"
command -v curl >/dev/null || { echo "trace_serve.sh: curl is missing (bash scripts/deps.sh)"; exit 1; }
S0=$data/traces/hta-sampled-2ranks/rank-0.json.gz
S1=$data/traces/hta-sampled-2ranks/rank-1.json.gz
db=$tmp/runs.db
SRV=
cleanup() {
    [ -n "$SRV" ] && { kill -TERM "$SRV" 2>/dev/null; sleep 0.2; kill -KILL "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; }
    rm -rf "$tmp"
}
trap cleanup EXIT

# a log of the run (its step times the traces' step intervals), stored with its context
CTX=(--model gpt2 --seq 1024 --tokens-per-step 8192 --device a100-sxm --devices 2)
ok --json "$S0" "$S1"
jq -c '.ranks | map(.steps[]) | group_by(.step)[] |
       {step: .[0].step, tokens: 8192, step_time_s: (map(.interval_s) | add / length)}' \
    "$tmp/out" >"$tmp/rows"
{ echo '{"mfu_run":1,"format":"generic","seq_len":1024,"world_size":2}'; cat "$tmp/rows"; } \
    >"$tmp/run.jsonl"
"$bin" ingest "$tmp/run.jsonl" --run sampled "${CTX[@]}" --db "$db" >/dev/null 2>"$tmp/err" ||
    fail "ingest: $(cat "$tmp/err")"
"$bin" ingest "$tmp/run.jsonl" --run bare --db "$db" >/dev/null 2>"$tmp/err" ||
    fail "ingest: $(cat "$tmp/err")"
"$bin" report --run sampled --db "$db" --json >"$tmp/rep" 2>"$tmp/err" || fail "report: $(cat "$tmp/err")"
want=$(jq -r .summary.mfu.median "$tmp/rep")

ok "$S0" "$S1" --attach sampled --db "$db"
grep -q '^attached 2 traces to run sampled in ' "$tmp/out" || fail "attach: $(cat "$tmp/out")"
ok "$S0" --attach bare --db "$db"
bad 1 "$S0" --attach nosuch --db "$db"
grep -q "no run of that name" "$tmp/err" || fail "attach to no run: $(cat "$tmp/err")"
zcat "$S0" | head -c 100000 >"$tmp/cut.json"
bad 1 "$tmp/cut.json" --attach bare --db "$db"
bad 2 "$S0" --attach sampled --compare "$S1"

"$bin" serve --db "$db" --listen 127.0.0.1:0 >"$tmp/srv.out" 2>"$tmp/srv.err" &
SRV=$!
for _ in $(seq 1 500); do grep -q 'http://' "$tmp/srv.out" 2>/dev/null && break; sleep 0.02; done
URL=$(grep -o 'http://[^ ]*' "$tmp/srv.out" | head -1)
URL=${URL%/}
[ -n "$URL" ] || fail "server did not start: $(cat "$tmp/srv.err")"
get() { code=$(curl -s --max-time 10 -o "$tmp/out" -w '%{http_code}' "$URL$1"); }

get /api/runs/sampled/trace
[ "$code" = 200 ] || fail "GET trace: $code $(cat "$tmp/out")"
jq_is '[.ranks[].rank] | join(",")' 0,1
jq_is '.straggler.rank' 1
jq_true "((.waterfall.mfu - $want) | fabs) <= 1e-9 * $want"
jq_true '.waterfall.mfu_source == "mfu report of run sampled"'
jq_true '((.waterfall.lost_points | add) - (100 - 100 * .waterfall.mfu) | fabs) < 1e-6'
# kernel names hold < and >: escaped on the wire (\u003c), the same text once parsed
grep -q '<' "$tmp/out" && fail "a raw '<' in the API answer"
jq_true '[.ranks[0].kernels[].name] | any(contains("<"))'
get /api/runs/bare/trace
[ "$code" = 200 ] || fail "GET bare trace: $code"
jq_is '.waterfall' null
jq_true '.waterfall_missing | length > 0'
jq_is '.ranks[0].counts.activities' 1204 # the failed attach of a cut trace left it as it was
"$bin" ingest "$tmp/run.jsonl" --run other --db "$db" >/dev/null 2>&1
get /api/runs/other/trace
[ "$code" = 200 ] && [ "$(jq -r .trace "$tmp/out")" = null ] && grep -q 'no trace attached' "$tmp/out" ||
    fail "no trace: $code $(cat "$tmp/out")"
get /api/runs/nosuch/trace
[ "$code" = 404 ] && grep -q 'no run named' "$tmp/out" || fail "no run: $code $(cat "$tmp/out")"
# the dashboard ships the panel
get /assets/trace.js
[ "$code" = 200 ] && grep -q 'api/runs/' "$tmp/out" || fail "trace.js: $code"
get /
grep -q 'assets/trace.js' "$tmp/out" || fail "the page does not load trace.js"
e2e_finish
