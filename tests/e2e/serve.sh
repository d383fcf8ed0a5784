#!/usr/bin/env bash
# e2e: mfu serve with real clients (curl) on an ephemeral loopback port: the API, POST with and
# without the token, server-sent events from a followed log within a second, truncation and
# rotation of that log, path traversal and other hostile requests, HTML in run names, and a
# clean shutdown on SIGTERM. Every wait is bounded; everything started is killed on exit.
E2E_CMD=serve
source "$(dirname "$0")/lib/e2e.bash"
command -v curl >/dev/null || { echo "serve.sh: curl is missing (bash scripts/deps.sh)"; exit 1; }

# pids, wait_until and has: lib/e2e.bash

TOKEN=e2e-token-0123456789abcdef
srv_out=$tmp/srv.out
srv_err=$tmp/srv.err
start_server() {
    "$bin" serve "$@" >"$srv_out" 2>"$srv_err" &
    SRV=$!
    pids+=("$SRV")
    if ! wait_until 20000 has "$srv_out" 'http://'; then
        fail "server did not start: $(cat "$srv_err")"
        return 1
    fi
    URL=$(grep -o 'http://[^ ]*' "$srv_out" | head -1)
    URL=${URL%/}
}
alive() { kill -0 "$SRV" 2>/dev/null; }
dead() { ! kill -0 "$SRV" 2>/dev/null; }
stop_server() {
    kill -TERM "$SRV" 2>/dev/null
    if ! wait_until 10000 dead; then
        fail "server did not stop within 10 s of SIGTERM"
        kill -KILL "$SRV"
    fi
    wait "$SRV"
    stop_rc=$?
}
# get PATH [curl args]: body in $tmp/body, status in $code
get() {
    local p=$1
    shift
    code=$(curl -s --path-as-is --max-time 10 -o "$tmp/body" -w '%{http_code}' "$@" "$URL$p")
}
post() {
    local p=$1
    shift
    code=$(curl -s --max-time 10 -o "$tmp/body" -w '%{http_code}' -X POST "$@" "$URL$p")
}
want() { [ "$code" = "$1" ] || fail "$2: HTTP $code, want $1 ($(head -c 300 "$tmp/body"))"; }
bjq() { jq -r "$1" "$tmp/body" 2>/dev/null; }

# A followed log (canonical JSON-lines: 300 steady steps of 8 x 4096 tokens on 8 devices).
log=$tmp/train.jsonl
/usr/bin/python3 - "$log" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"mfu_run": 1, "format": "torchtitan", "seq_len": 4096, "world_size": 8,
                        "model": "<script>alert('meta')</script>"}) + "\n")
    for s in range(1, 301):
        f.write(json.dumps({"step": s, "step_time_s": 1.25 if s % 50 else 2.5,
                            "tokens": 32768, "loss": 4.0 - s / 1000}) + "\n")
EOF

start_server "$log" --db "$tmp/runs.db" --listen 127.0.0.1:0 --token "$TOKEN" \
    --model llama3-8b --device h100-sxm || { e2e_finish; exit 1; }
grep -q '^serving http://127.0.0.1:[0-9]*/ (store ' "$srv_out" || fail "first line: $(cat "$srv_out")"

# --- the page and the API -------------------------------------------------------------------
get /
want 200 "GET /"
grep -qi '<!doctype html>' "$tmp/body" || fail "GET / is not the page"
hdr=$(curl -s -D - -o /dev/null "$URL/")
grep -qi '^content-security-policy:' <<<"$hdr" || fail "the page has no CSP header"
grep -qi '^x-content-type-options: nosniff' <<<"$hdr" || fail "the page has no nosniff header"
get /assets/app.js
want 200 "an asset"
get /assets/nope.js
want 404 "an unknown asset"

wait_until 15000 bash -c "curl -s '$URL/api/runs' | jq -e '.runs[] | select(.name==\"train\") | .steps == 300' >/dev/null" ||
    fail "the followed run did not reach 300 steps: $(curl -s "$URL/api/runs")"
get /api/runs
want 200 "GET /api/runs"
[ "$(bjq '.runs[0].live')" = true ] || fail "the followed run is not live"
[ "$(bjq '.runs[0].device.id')" = h100-sxm ] || fail "device id: $(bjq '.runs[0].device')"
[ "$(bjq '.runs[0].device.count')" = 8 ] || fail "devices from the log's world size"
# tokens/s of the steady steps: 32768 / 1.25 = 26214.4 (the median ignores the slow steps)
[ "$(bjq '.runs[0].summary.tokens_per_second')" = 26214.4 ] || fail "summary tokens/s: $(bjq .runs[0].summary)"
[ "$(bjq '.runs[0].summary.step_time_s')" = 1.25 ] || fail "summary step time"

get /api/runs/train
want 200 "GET /api/runs/train"
# The model name from the log's header holds a script: it comes back as \u escapes only.
grep -q '<script>' "$tmp/body" && fail "a raw <script> in the run's JSON"
grep -q '\\u003cscript\\u003e' "$tmp/body" || fail "the model name is not escaped: $(head -c 400 "$tmp/body")"
[ "$(bjq '.meta.model')" = "<script>alert('meta')</script>" ] || fail "the escaped name does not decode back"
[ "$(bjq '.context.seq')" = 4096 ] || fail "context seq from the log"
mfpt=$(bjq '.context.model_flops_per_token')
peak=$(bjq '.context.peak_flops')

get "/api/runs/train/series?fields=tokens_per_second,mfu&max_points=20000"
want 200 "series (all points)"
[ "$(bjq '.total')" = 300 ] || fail "series total $(bjq .total)"
[ "$(bjq '.downsampled')" = false ] || fail "300 points are not downsampled"
[ "$(bjq '.columns.tokens_per_second[49]')" = 13107.2 ] || fail "step 50 tokens/s (slow step)"
# mfu = tokens/s x model FLOPs per token / (8 x peak), for step 1
got=$(bjq '.columns.mfu[0]')
awk -v g="$got" -v f="$mfpt" -v p="$peak" 'BEGIN { w = 26214.4 * f / (8 * p); d = g - w; if (d < 0) d = -d; exit !(d < 1e-12) }' ||
    fail "mfu of step 1 = $got, want 26214.4 x $mfpt / (8 x $peak)"
get "/api/runs/train/series?fields=step_time_s&max_points=50"
want 200 "series (downsampled)"
[ "$(bjq '.downsampled')" = true ] && [ "$(bjq '.method')" = lttb ] || fail "not downsampled by LTTB"
[ "$(bjq '.step | length')" = 50 ] || fail "50 points asked, $(bjq '.step | length') sent"
[ "$(bjq '[.columns.step_time_s[] | select(. == 2.5)] | length')" -ge 5 ] ||
    fail "the slow steps (peaks) were lost by downsampling"
get "/api/runs/train/series?from=100&to=109"
want 200 "series range"
[ "$(bjq '.step | join(",")')" = "100,101,102,103,104,105,106,107,108,109" ] || fail "range 100-109: $(bjq .step)"
get "/api/runs/train/series?fields=nope"
want 400 "an unknown field"
get "/api/runs/train/series?max_points=1000000"
want 400 "max_points over the limit"
get "/api/runs/train/series?from=9&to=1"
want 400 "from after to"
get "/api/runs/nosuch/series"
want 404 "an unknown run"
# segments, findings and compare come from the analysis module: a slow step every 50 steps is
# a periodic stall; the summary is mfu report's median over the steady steps.
get /api/runs/train/segments
want 200 "segments"
[ "$(bjq '.segments | length')" -ge 1 ] && [ "$(bjq '.warmup.steps')" = 0 ] || fail "segments: $(head -c 300 "$tmp/body")"
get /api/runs/train/findings
want 200 "findings"
[ "$(bjq '[.findings[] | select(.kind == "stall")][0].evidence.period_steps')" = 50 ] ||
    fail "no stall every 50 steps: $(head -c 400 "$tmp/body")"
[ -n "$(bjq '.findings[0].message')" ] || fail "a finding without a message"
get "/api/compare?a=train:1-100&b=train:101-300"
want 200 "compare"
[ "$(bjq '.a.devices')" = 8 ] && [ "$(bjq '.verdict | has("direction_certain")')" = true ] ||
    fail "compare: $(head -c 300 "$tmp/body")"
get "/api/compare?a=train&b=nosuch"
want 404 "compare with an unknown run"
get "/api/compare?a=train"
want 400 "compare without b"
"$bin" report "$log" --model llama3-8b --device h100-sxm --json >"$tmp/report.json" 2>/dev/null
get /api/runs
[ "$(bjq '.runs[0].summary.mfu')" = "$(jq -r '.summary.mfu.median' "$tmp/report.json")" ] ||
    awk -v a="$(bjq '.runs[0].summary.mfu')" -v b="$(jq -r '.summary.mfu.median' "$tmp/report.json")" \
        'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-9) }' ||
    fail "summary MFU $(bjq '.runs[0].summary.mfu') is not mfu report's median"

get /metrics
want 200 "GET /metrics"
grep -q '^# TYPE mfu_ratio gauge$' "$tmp/body" || fail "no mfu_ratio family"
grep -q '^mfu_peak_flops_per_second{run="train",hostname="[^"]*",model_name="NVIDIA H100 80GB HBM3"} ' "$tmp/body" ||
    fail "peak sample labels: $(grep peak_flops_per_second "$tmp/body")"

# --- server-sent events: a step appended to the log reaches an open stream within a second ---
curl -sN --max-time 20 "$URL/api/events" >"$tmp/sse" &
pids+=($!)
wait_until 15000 has "$tmp/sse" ': connected' || fail "no event stream"
t0=$(ms)
echo '{"step":301,"step_time_s":1.25,"tokens":32768,"loss":3.7}' >>"$log"
if wait_until 3000 has "$tmp/sse" '"step":301'; then
    dt=$(($(ms) - t0))
    [ "$dt" -le 1000 ] || fail "the new step took $dt ms to reach the stream (limit 1000)"
    echo "serve.sh: appended step reached the event stream in $dt ms"
else
    fail "the appended step never reached the event stream"
fi
grep -q '^event: steps$' "$tmp/sse" || fail "no 'event: steps' line"

# truncation: the run restarts from what the file holds now (and the page is told to reset)
/usr/bin/python3 - "$log" <<'EOF'
import json, sys
with open(sys.argv[1], "r+") as f:
    f.truncate(0)
    f.write(json.dumps({"mfu_run": 1, "seq_len": 4096, "world_size": 8}) + "\n")
    for s in range(1, 11):
        f.write(json.dumps({"step": s, "step_time_s": 2.0, "tokens": 32768}) + "\n")
EOF
wait_until 15000 bash -c "curl -s '$URL/api/runs/train' | jq -e '.steps == 10' >/dev/null" ||
    fail "after truncation the run does not hold the 10 new steps: $(curl -s "$URL/api/runs/train" | jq .steps)"
wait_until 3000 has "$tmp/sse" '"reset":true' || fail "no reset event after truncation"
# rotation: the log moves away and a new one takes its name
mv "$log" "$log.1"
printf '%s\n' '{"mfu_run":1,"world_size":8}' '{"step":1000,"step_time_s":1.0,"tokens":32768}' \
    '{"step":1001,"step_time_s":1.0,"tokens":32768}' >"$tmp/new.jsonl"
mv "$tmp/new.jsonl" "$log"
wait_until 15000 bash -c "curl -s '$URL/api/runs/train' | jq -e '.steps == 2 and .first_step == 1000' >/dev/null" ||
    fail "after rotation the run is not the new file: $(curl -s "$URL/api/runs/train" | jq -c '[.steps,.first_step]')"

# --- POST ------------------------------------------------------------------------------------
steps=$'{"step":1,"step_time_s":1.0,"tokens":4096,"rank":0}\n{"step":1,"step_time_s":1.0,"tokens":4096,"rank":1}\n{"step":2,"step_time_s":1.0,"tokens":4096,"rank":0}'
post /api/runs/posted/steps --data-binary "$steps"
want 401 "POST without a token"
post /api/runs/posted/steps -H "Authorization: Bearer wrong-token-0123456789" --data-binary "$steps"
want 401 "POST with a wrong token"
post /api/runs/posted/steps -H "Authorization: Bearer ${TOKEN}x" --data-binary "$steps"
want 401 "POST with a longer token"
post /api/runs/posted/steps -H "Authorization: Basic $TOKEN" --data-binary "$steps"
want 401 "POST with another scheme"
post /api/runs/posted/steps -H "Authorization: Bearer $TOKEN" --data-binary "$steps"
want 201 "POST with the token"
[ "$(bjq .accepted)" = 3 ] || fail "accepted: $(cat "$tmp/body")"
get /api/runs/posted
[ "$(bjq .steps)" = 2 ] || fail "posted rows (two ranks of step 1 merge): $(bjq .steps)"
get /api/runs/posted/steps
want 405 "GET on the POST endpoint"
post /api/runs/posted/steps -H "Authorization: Bearer $TOKEN" --data-binary $'{"step":3}\n{"step":4,'
want 400 "malformed JSON"
grep -q 'line 2' "$tmp/body" || fail "the malformed line is not named: $(cat "$tmp/body")"
post /api/runs/posted/steps -H "Authorization: Bearer $TOKEN" --data-binary '[{"step":5},{"loss":1}]'
want 400 "an object without a step"
grep -q 'element 2' "$tmp/body" || fail "the bad element is not named: $(cat "$tmp/body")"
post /api/runs/posted/steps -H "Authorization: Bearer $TOKEN" --data-binary '{"step":6,"loss":"high"}'
want 400 "a value of the wrong type"
head -c $((9 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$tmp/big"
post /api/runs/posted/steps -H "Authorization: Bearer $TOKEN" --data-binary @"$tmp/big"
want 413 "an oversized body"
post /api/runs/posted/steps -H "Authorization: Bearer $TOKEN" -H 'Transfer-Encoding: chunked' \
    --data-binary @"$tmp/big"
want 413 "an oversized chunked body"
post /api/runs/train/steps -H "Authorization: Bearer $TOKEN" --data-binary '{"step":7}'
want 409 "POST to a followed run"

# A long run is downsampled over min/max block candidates: its one slow step is still there.
/usr/bin/python3 - "$tmp/long.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for s in range(1, 5001):
        f.write(json.dumps({"step": s, "step_time_s": 9.0 if s == 1234 else 1.0 + (s % 7) / 100,
                            "tokens": 1000}) + "\n")
EOF
post /api/runs/long/steps -H "Authorization: Bearer $TOKEN" --data-binary @"$tmp/long.jsonl"
want 201 "POST of 5000 steps"
get "/api/runs/long/series?fields=step_time_s,tokens_per_second&max_points=12"
want 200 "series of the long run"
[ "$(bjq '.preselection')" = minmax ] || fail "5000 rows at 12 points are not preselected: $(bjq .preselection)"
[ "$(bjq '.step | length')" = 12 ] && [ "$(bjq '.step[0]')" = 1 ] && [ "$(bjq '.step[-1]')" = 5000 ] ||
    fail "preselected answer: $(bjq -c .step)"
[ "$(bjq '.step | index(1234) != null')" = true ] || fail "the slow step 1234 was lost: $(bjq -c .step)"
[ "$(bjq '.columns.tokens_per_second[.step | index(1234)]')" = 111.11111111111111 ] ||
    fail "tokens/s of the slow step: $(bjq -c .columns.tokens_per_second)"

# A run name with HTML and script: escaped in JSON, quoted in /metrics, never raw.
evil='<img src=x onerror=alert(1)>"'
enc=$(jq -rn --arg s "$evil" '$s|@uri')
post "/api/runs/$enc/steps" -H "Authorization: Bearer $TOKEN" --data-binary '{"step":1,"step_time_s":1,"tokens":10}'
want 201 "POST to a run named with HTML"
get /api/runs
grep -q '<img' "$tmp/body" && fail "a raw <img in /api/runs"
[ "$(bjq '[.runs[].name] | index("<img src=x onerror=alert(1)>\"") != null')" = true ] ||
    fail "the HTML run name does not decode back: $(bjq '[.runs[].name]')"
get "/api/runs/$enc/series"
want 200 "the series of the HTML-named run"
get /metrics
grep -q 'run="<img src=x onerror=alert(1)>\\""' "$tmp/body" || fail "the name's quote is not escaped in /metrics"
ctype=$(curl -s -D - -o /dev/null "$URL/metrics" | tr -d '\r' | grep -i '^content-type:')
[ "$ctype" = "Content-Type: text/plain; version=0.0.4; charset=utf-8" ] || fail "/metrics type: $ctype"

# --- hostile requests -------------------------------------------------------------------------
for p in '/assets/../../etc/passwd' '/assets/%2e%2e/%2e%2e/etc/passwd' '/assets/%2E%2E%2Fetc%2Fpasswd' \
    '/assets/..%2f..%2fetc%2fpasswd' '/assets/%252e%252e/etc/passwd' '/assets/..\\..\\etc\\passwd' \
    '/assets/%c0%ae%c0%ae/etc/passwd' '/api/runs/..' '/api/runs/a%00b' '/api/runs/%zz' '//etc/passwd' \
    '/assets/' '/../etc/passwd'; do
    get "$p"
    case $code in 400 | 404) ;; *) fail "$p: HTTP $code" ;; esac
    grep -q 'root:' "$tmp/body" && fail "$p leaked a file"
done
get "/api/runs/$(head -c 3000 /dev/zero | tr '\0' a)"
case $code in 400 | 414) ;; *) fail "a 3000-byte run name: HTTP $code" ;; esac
get "/?q=$(head -c 100000 /dev/zero | tr '\0' a)"
case $code in 414 | 431 | 400) ;; *) fail "a 100 kB URL: HTTP $code" ;; esac
get /api/runs -H "X-Big: $(head -c 100000 /dev/zero | tr '\0' a)"
case $code in 431 | 400 | 413) ;; *) fail "a 100 kB header: HTTP $code" ;; esac
get /api/runs -H 'Host: attacker.example'
want 403 "a foreign Host header (DNS rebinding)"
get /api/runs -X DELETE
want 405 "DELETE"
# raw garbage on the socket
port=${URL##*:}
/usr/bin/python3 - "$port" <<'EOF'
import socket, sys
for junk in [b"\x00\x01\x02garbage\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n"]:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    try:
        s.sendall(junk)
        s.recv(4096)
    except OSError:
        pass
    s.close()
EOF
get /api/runs
want 200 "the server still answers after hostile requests"
alive || fail "the server died"

# --- shutdown ---------------------------------------------------------------------------------
stop_server
[ "$stop_rc" = 0 ] || fail "exit status $stop_rc after SIGTERM: $(cat "$srv_err")"
"$bin" runs --db "$tmp/runs.db" >"$tmp/runs" 2>&1 || fail "mfu runs after serve: $(cat "$tmp/runs")"
grep -q '^train ' "$tmp/runs" || fail "the followed run is not in the store: $(cat "$tmp/runs")"
grep -q '^posted ' "$tmp/runs" || fail "the posted run is not in the store"

# --- refusals at start --------------------------------------------------------------------------
bad 2 "$log" --db "$tmp/r2.db" --listen 0.0.0.0:0
grep -q -- '--token' "$tmp/err" || fail "no token hint beyond loopback: $(cat "$tmp/err")"
bad 2 --db "$tmp/r2.db" --listen 127.0.0.1:0 --token short
bad 2 --db "$tmp/r2.db" --listen nonsense
bad 2 "$tmp/a/x.log" "$tmp/b/x.log" --db "$tmp/r2.db" --listen 127.0.0.1:0
ok --help
grep -q 'Examples:' "$tmp/out" || fail "--help has no examples"

e2e_finish
