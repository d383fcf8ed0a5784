#!/usr/bin/env bash
# e2e: `mfu serve` finds what `mfu report` finds. Runs with a straggler rank and with per-step
# recomputation (tests/e2e/lib/genlog.py, known truth) are served from the store and as
# followed logs; /api/runs/RUN/findings lists the finding kinds of `mfu report LOG --json`, in
# its order, and /segments has the report's boundaries. A followed log whose lagging rank's
# lines arrive after the rows they belong to (observations only, no row changes) is analysed
# again: the straggler appears, and the store gets the observations. Every rank POSTing every
# step in one body keeps the straggler too, served and after a restart.
E2E_CMD=serve
source "$(dirname "$0")/lib/e2e.bash"
command -v curl >/dev/null || { echo "serve_insight.sh: curl is missing (bash scripts/deps.sh)"; exit 1; }

# pids, wait_until and has: lib/e2e.bash
gen() { /usr/bin/python3 "$(dirname "$0")/lib/genlog.py" "$@" || fail "genlog $*"; }
kinds() { jq -c '[.findings[].kind]' "$1" 2>/dev/null; }
starts() { jq -c '[.segments[].start_step]' "$1" 2>/dev/null; }
# served RUN WHAT: GET /api/runs/RUN/WHAT into $tmp/RUN.WHAT
served() { curl -s --max-time 30 -o "$tmp/$1.$2" "$URL/api/runs/$1/$2"; }
# same_kinds RUN REPORT: the served findings of RUN have the kinds of REPORT (fetched again)
same_kinds() { served "$1" findings && [ "$(kinds "$tmp/$1.findings")" = "$(kinds "$2")" ]; }
steps_are() { curl -s --max-time 30 "$URL/api/runs/$1" | jq -e ".steps == $2" >/dev/null 2>&1; }

F4=$("$bin" flops --json --model gpt2 --seq 4096 | jq -r .flops_per_token.model)
H4=$("$bin" flops --json --model gpt2 --seq 4096 --recompute full | jq -r .flops_per_token.hardware)
ctx=(--model gpt2 --device h100-sxm)
gen rankrecompute "$tmp/rr.jsonl" --seed 21 --steps 200 --flops "$F4" --hw "$H4" --mfu 0.5
gen straggler "$tmp/titan.log" --seed 18 --steps 200 --flops "$F4"
gen recompute "$tmp/rc.jsonl" --seed 16 --steps 200 --flops "$F4" --hw "$H4" --mfu 0.5
# the same run with rank 3's lines late: absent at first, then its last 50 steps at the end
grep -v '"rank":3,' "$tmp/rr.jsonl" >"$tmp/early.jsonl"
grep '"rank":3,' "$tmp/rr.jsonl" | jq -c 'select(.step > 150)' >"$tmp/lagging.jsonl"
cat "$tmp/early.jsonl" "$tmp/lagging.jsonl" >"$tmp/late-whole.jsonl"

report() { # report NAME LOG [context...]: mfu report's JSON in $tmp/NAME.report
    local name=$1 log=$2
    shift 2
    "$bin" report "$log" "$@" --json --no-series >"$tmp/$name.report" 2>"$tmp/err" ||
        fail "mfu report $log: $(cat "$tmp/err")"
}
report rr "$tmp/rr.jsonl" "${ctx[@]}"
report titan "$tmp/titan.log" "${ctx[@]}" --seq 4096 --devices 8
report rc "$tmp/rc.jsonl" "${ctx[@]}"
report early "$tmp/early.jsonl" "${ctx[@]}"
report late "$tmp/late-whole.jsonl" "${ctx[@]}"
# what the report finds on these logs (so that the comparisons below compare something)
[ "$(kinds "$tmp/rr.report")" = '["recompute","straggler"]' ] ||
    fail "report rr: kinds $(kinds "$tmp/rr.report")"
[ "$(starts "$tmp/rr.report")" = '[4,101]' ] || fail "report rr: segments $(starts "$tmp/rr.report")"
[ "$(kinds "$tmp/titan.report")" = '["straggler","reported_mismatch"]' ] ||
    fail "report titan: kinds $(kinds "$tmp/titan.report")"
[ "$(kinds "$tmp/rc.report")" = '["recompute"]' ] || fail "report rc: kinds $(kinds "$tmp/rc.report")"
[ "$(kinds "$tmp/early.report")" = '["recompute"]' ] ||
    fail "report early: kinds $(kinds "$tmp/early.report")"
[ "$(kinds "$tmp/late.report")" = '["recompute","straggler"]' ] ||
    fail "report late: kinds $(kinds "$tmp/late.report")"

# the store: each run with the context it was ingested with
db=$tmp/runs.db
"$bin" ingest "$tmp/rr.jsonl" --run stored-rr --db "$db" "${ctx[@]}" 2>/dev/null || fail "ingest rr"
"$bin" ingest "$tmp/titan.log" --run stored-titan --db "$db" "${ctx[@]}" --seq 4096 --devices 8 \
    2>/dev/null || fail "ingest titan"
"$bin" ingest "$tmp/rc.jsonl" --run stored-rc --db "$db" "${ctx[@]}" 2>/dev/null || fail "ingest rc"
# the followed logs: a copy of rr.jsonl whole, and the late one without rank 3's lines yet
mkdir -p "$tmp/f"
cp "$tmp/rr.jsonl" "$tmp/f/followed.jsonl"
cp "$tmp/early.jsonl" "$tmp/f/late.jsonl"

# the server's flags: the logs' own context (posted steps have no header to give it)
flags=("${ctx[@]}" --seq 4096 --devices 8)
TOKEN=e2e-token-0123456789abcdef
start() { # start ARGS...: mfu serve ARGS on a free port; $SRV, $URL
    "$bin" serve "$@" --db "$db" --listen 127.0.0.1:0 --token "$TOKEN" "${flags[@]}" \
        >"$tmp/srv.out" 2>"$tmp/srv.err" &
    SRV=$!
    pids+=("$SRV")
    wait_until 20000 has "$tmp/srv.out" 'http://' || fail "server did not start: $(cat "$tmp/srv.err")"
    URL=$(grep -o 'http://[^ ]*' "$tmp/srv.out" | head -1)
    URL=${URL%/}
}
stop() {
    kill -TERM "$SRV"
    wait_until 15000 eval '! kill -0 "$SRV" 2>/dev/null' || fail "server did not stop"
    wait "$SRV" 2>/dev/null
    : >"$tmp/srv.out"
}
start "$tmp/f/followed.jsonl" "$tmp/f/late.jsonl"

# stored runs: the report's findings and boundaries
for pair in stored-rr:rr stored-titan:titan stored-rc:rc; do
    run=${pair%%:*} ref=$tmp/${pair#*:}.report
    served "$run" findings
    [ "$(kinds "$tmp/$run.findings")" = "$(kinds "$ref")" ] ||
        fail "$run: served kinds $(kinds "$tmp/$run.findings"), mfu report $(kinds "$ref")"
    served "$run" segments
    [ "$(starts "$tmp/$run.segments")" = "$(starts "$ref")" ] ||
        fail "$run: served segments $(starts "$tmp/$run.segments"), mfu report $(starts "$ref")"
done
jq -e '.unit == "tokens"' "$tmp/stored-rr.segments" >/dev/null || fail "stored-rr: unit is not tokens"
# the boundary is the recomputation, as the report says
[ "$(jq -r '.decomposition[0].config_change' "$tmp/stored-rr.segments")" = \
    "$(jq -r '.decomposition[0].config_change' "$tmp/rr.report")" ] ||
    fail "stored-rr: config change $(jq -r '.decomposition[0].config_change' "$tmp/stored-rr.segments")"
jq -e '.decomposition[0].config_change | test("recompute")' "$tmp/rr.report" >/dev/null ||
    fail "rr: the boundary is not the recomputation"
# the straggler's evidence is the report's (rank 3, about 12 % slower)
ev() { jq -c '.findings[] | select(.kind == "straggler") | [.evidence.rank, .evidence.ranks,
    (.evidence.slowdown * 1000 | round)]' "$1"; }
[ "$(ev "$tmp/stored-rr.findings")" = "$(ev "$tmp/rr.report")" ] ||
    fail "stored-rr: straggler evidence $(ev "$tmp/stored-rr.findings") vs $(ev "$tmp/rr.report")"
jq -e '.findings[] | select(.kind == "straggler") | .evidence.rank == 3 and
    (.evidence.slowdown > 0.10 and .evidence.slowdown < 0.14)' "$tmp/rr.report" >/dev/null ||
    fail "rr: the straggler is not rank 3 at 12 %"
# compare uses the same analyses: recomputation off makes the tokens/s change certain
curl -s --max-time 30 -o "$tmp/cmp" "$URL/api/compare?a=stored-rr:1-100&b=stored-rr:101-200"
jq -e '.verdict.direction_certain and .decomposition.terms.tokens_per_second.pct > 0.2' "$tmp/cmp" \
    >/dev/null || fail "compare: $(head -c 300 "$tmp/cmp")"

# the followed copy, once read whole (a live run's analysis may be up to 5 s old)
wait_until 20000 steps_are followed 200 || fail "followed: not 200 steps"
wait_until 20000 same_kinds followed "$tmp/rr.report" ||
    fail "followed: served kinds $(kinds "$tmp/followed.findings"), mfu report $(kinds "$tmp/rr.report")"
served followed segments
[ "$(starts "$tmp/followed.segments")" = "$(starts "$tmp/rr.report")" ] ||
    fail "followed: segments $(starts "$tmp/followed.segments")"

# the late log: no straggler while rank 3 is silent ...
wait_until 20000 steps_are late 200 || fail "late: not 200 steps"
wait_until 20000 same_kinds late "$tmp/early.report" ||
    fail "late (early part): served kinds $(kinds "$tmp/late.findings")"
# ... then its lines for steps 151-200 arrive: they only add observations to rows already read
cat "$tmp/lagging.jsonl" >>"$tmp/f/late.jsonl"
wait_until 20000 same_kinds late "$tmp/late.report" ||
    fail "late: served kinds $(kinds "$tmp/late.findings") after rank 3's lines, mfu report $(kinds "$tmp/late.report")"
steps_are late 200 || fail "late: the lagging lines made rows"
ev2() { jq -c '.findings[] | select(.kind == "straggler") | [.evidence.rank, .evidence.steps]' "$1"; }
[ "$(ev2 "$tmp/late.findings")" = "[3,50]" ] || fail "late: straggler evidence $(ev2 "$tmp/late.findings")"

# every rank posts every step in one body: its rows merge, the straggler stays
tail -n +2 "$tmp/rr.jsonl" >"$tmp/body.jsonl"
code=$(curl -s --max-time 30 -o "$tmp/post" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    --data-binary @"$tmp/body.jsonl" "$URL/api/runs/posted/steps")
[ "$code" = 201 ] && jq -e '.accepted == 1600' "$tmp/post" >/dev/null || fail "POST: $code $(cat "$tmp/post")"
steps_are posted 200 || fail "posted: not 200 steps"
served posted findings
[ "$(kinds "$tmp/posted.findings")" = '["recompute","straggler"]' ] ||
    fail "posted: served kinds $(kinds "$tmp/posted.findings")"
cp "$tmp/posted.findings" "$tmp/posted.live"

# SIGTERM: the followed runs reach the store with their observations
stop
"$bin" report --run late --db "$db" "${ctx[@]}" --json --no-series >"$tmp/late.stored" 2>"$tmp/err" ||
    fail "report --run late: $(cat "$tmp/err")"
[ "$(kinds "$tmp/late.stored")" = "$(kinds "$tmp/late.report")" ] ||
    fail "stored late run: kinds $(kinds "$tmp/late.stored"), log $(kinds "$tmp/late.report")"

# the posted run, stored: mfu report and a restarted server find the straggler too
"$bin" report --run posted --db "$db" "${flags[@]}" --json --no-series >"$tmp/posted.stored" \
    2>"$tmp/err" || fail "report --run posted: $(cat "$tmp/err")"
[ "$(kinds "$tmp/posted.stored")" = "$(kinds "$tmp/posted.live")" ] ||
    fail "stored posted run: kinds $(kinds "$tmp/posted.stored"), live $(kinds "$tmp/posted.live")"
start
served posted findings
[ "$(kinds "$tmp/posted.findings")" = "$(kinds "$tmp/posted.live")" ] ||
    fail "posted, after a restart: kinds $(kinds "$tmp/posted.findings")"
steps_are posted 200 || fail "posted, after a restart: not 200 steps"
stop

e2e_finish
