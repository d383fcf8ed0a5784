#!/usr/bin/env bash
# e2e: per-run context. `mfu ingest LOG <context flags>` stores the flags with the run (shown by
# `mfu runs`, replaced by a later ingest with other flags, kept by one without); `mfu serve`
# serves every run with its own stored context and applies its own flags only to runs without
# one: runs of different models and devices in one store, served at once, each show the MFU
# `mfu report LOG <its flags>` gives (within 0.01 point) in /api/runs, and the followed ones in
# /metrics. Every wait is bounded; the servers started are killed on exit.
E2E_CMD=ingest
source "$(dirname "$0")/lib/e2e.bash"
command -v curl >/dev/null || { echo "context.sh: curl is missing (bash scripts/deps.sh)"; exit 1; }
ex=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR is the source tree}/examples

# pids, wait_until and has: lib/e2e.bash
start_server() {
    : >"$tmp/srv.out"
    "$bin" serve "$@" >"$tmp/srv.out" 2>"$tmp/srv.err" &
    SRV=$!
    pids+=("$SRV")
    wait_until 20000 has "$tmp/srv.out" 'http://' || { fail "server did not start: $(cat "$tmp/srv.err")"; return 1; }
    URL=$(grep -o 'http://[^ ]*' "$tmp/srv.out" | head -1)
    URL=${URL%/}
}
stop_server() {
    kill -TERM "$SRV" 2>/dev/null
    wait "$SRV" 2>/dev/null
}
db=$tmp/runs.db
# close A B: |A - B| <= 1e-4 (0.01 point of MFU)
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && a != "null" && d <= 1e-4) }'; }
# report_mfu LOG FLAGS...: mfu report's steady median MFU
report_mfu() { "$bin" report "$@" --json 2>/dev/null | jq -r '.summary.mfu.median'; }

# Two followed logs of different models, devices and jobs (canonical JSON-lines, steady steps,
# so that the /metrics window and the report's median are the same figure).
/usr/bin/python3 - "$tmp/a.jsonl" "$tmp/b.jsonl" <<'PY'
import json, sys
def write(path, seq, world, tokens, step_time):
    with open(path, "w") as f:
        f.write(json.dumps({"mfu_run": 1, "seq_len": seq, "world_size": world}) + "\n")
        for s in range(1, 121):
            f.write(json.dumps({"step": s, "step_time_s": step_time, "tokens": tokens,
                                "loss": 4.0 - s / 1000}) + "\n")
write(sys.argv[1], 4096, 8, 8 * 4 * 4096, 1.6)
write(sys.argv[2], 2048, 16, 16 * 8 * 2048, 0.9)
PY
fa=(--model llama3-8b --device h100-sxm)
fb=(--model gpt2-xl --device a100-sxm4-80gb --dtype bf16)
tt=("$ex/torchtitan-pr1287-llama3-8b-h100-gc-profiler.log")
ftt=(--model llama3-8b --seq 8192 --device h100-sxm)
ng=("$ex/nanogpt-issue215-v100-fp16-nan.log")
fng=(--model gpt2 --seq 1024 --global-batch 60 --devices 1 --device v100-sxm2 --dtype fp16)
mx=("$ex/megatron-issue756-mixtral-8x7b-16xh100-a.log")
fmx=(--model mixtral-8x7b --seq 2048 --devices 16 --device h100-sxm)

# --- ingest stores the context; bad flags fail before anything is written -------------------
bad 2 "$tmp/a.jsonl" --db "$db" --model no-such-model
bad 2 "$tmp/a.jsonl" --db "$db" --device h900
bad 2 "$tmp/a.jsonl" --db "$db" --global-batch 8
[ -e "$db" ] && fail "a refused ingest created the store"
ok "$tmp/a.jsonl" --db "$db" --model gpt2 --device a100-sxm4-80gb # replaced below
ok "$tmp/a.jsonl" --db "$db" "${fa[@]}"
ok "$tmp/b.jsonl" --db "$db" "${fb[@]}"
ok "${tt[@]}" --db "$db" "${ftt[@]}"
ok "${ng[@]}" --db "$db" "${fng[@]}"
ok "${mx[@]}" --db "$db" # no context: the server's flags apply
"$bin" runs --db "$db" --json >"$tmp/out"
jq_is '.runs[] | select(.name == "a") | .context | join(" ")' "--model=llama3-8b --device=h100-sxm"
jq_is '.runs[] | select(.name == "nanogpt-issue215-v100-fp16-nan") | .context | join(" ")' \
    "--model=gpt2 --seq=1024 --global-batch=60 --devices=1 --device=v100-sxm2 --dtype=fp16"
jq_is '.runs[] | select(.name == "megatron-issue756-mixtral-8x7b-16xh100-a") | .context' "null"
# the table's short form
"$bin" runs --db "$db" >"$tmp/out"
grep -q '^a  .*model=llama3-8b device=h100-sxm ' "$tmp/out" || fail "mfu runs table: $(cat "$tmp/out")"
# a re-ingest without flags keeps the context (the file is unchanged: nothing else happens)
ok "$tmp/b.jsonl" --db "$db"
"$bin" runs --db "$db" --json >"$tmp/out"
jq_is '.runs[] | select(.name == "b") | .context | join(" ")' "--model=gpt2-xl --device=a100-sxm4-80gb --dtype=bf16"

# --- serve: each run with its own context; the flags only for the run without one ----------
start_server "$tmp/a.jsonl" "$tmp/b.jsonl" --db "$db" --listen 127.0.0.1:0 --max-points 100 ||
    { e2e_finish; exit 1; }
curl -s --max-time 10 "$URL/api/runs" >"$tmp/runs.json"
curl -s --max-time 10 "$URL/metrics" >"$tmp/metrics"
api_mfu() { jq -r --arg n "$1" '.runs[] | select(.name == $n) | .summary.mfu' "$tmp/runs.json"; }
check() { # NAME WANT WHAT
    close "$(api_mfu "$1")" "$2" || fail "$3: /api/runs MFU $(api_mfu "$1"), mfu report $2"
}
want_a=$(report_mfu "$tmp/a.jsonl" "${fa[@]}")
want_b=$(report_mfu "$tmp/b.jsonl" "${fb[@]}")
want_tt=$(report_mfu "${tt[@]}" "${ftt[@]}")
want_ng=$(report_mfu "${ng[@]}" "${fng[@]}")
check a "$want_a" "followed llama3-8b on H100"
check b "$want_b" "followed gpt2-xl on A100"
check torchtitan-pr1287-llama3-8b-h100-gc-profiler "$want_tt" "stored torchtitan run"
check nanogpt-issue215-v100-fp16-nan "$want_ng" "stored nanoGPT run"
# the two models differ enough that one context for all would show
close "$want_a" "$want_b" && fail "the two followed runs have the same MFU ($want_a): the test proves nothing"
# /metrics: the followed (live) runs, each with its own figure
metric() { grep "^mfu_ratio{run=\"$1\"" "$tmp/metrics" | awk '{print $NF}'; }
close "$(metric a)" "$want_a" || fail "/metrics mfu_ratio of a: $(metric a), mfu report $want_a"
close "$(metric b)" "$want_b" || fail "/metrics mfu_ratio of b: $(metric b), mfu report $want_b"
grep -q '^mfu_peak_flops_per_second{run="b",[^}]*model_name="NVIDIA A100-SXM4-80GB"} ' "$tmp/metrics" ||
    fail "b's device label: $(grep '^mfu_peak_flops_per_second' "$tmp/metrics")"
# where each context came from; a run without one has no MFU and says why
curl -s --max-time 10 "$URL/api/runs/a" >"$tmp/out"
jq_is '.context.source' stored
jq_is '.context.model' llama3-8b
curl -s --max-time 10 "$URL/api/runs/megatron-issue756-mixtral-8x7b-16xh100-a" >"$tmp/out"
jq_is '.context.source' none
jq_is '.context.mfu_known' false
stop_server

# --- serve with flags: they reach the run without a context, not the others ---------------
# and a re-ingest with other flags replaces a stored context
ok "${ng[@]}" --db "$db" --model gpt2-xl --seq 1024 --global-batch 60 --devices 1 --device v100-sxm2 --dtype fp16
start_server --db "$db" --listen 127.0.0.1:0 "${fmx[@]}" || { e2e_finish; exit 1; }
curl -s --max-time 10 "$URL/api/runs" >"$tmp/runs.json"
check megatron-issue756-mixtral-8x7b-16xh100-a "$(report_mfu "${mx[@]}" "${fmx[@]}")" "run without a context, served with flags"
check torchtitan-pr1287-llama3-8b-h100-gc-profiler "$want_tt" "stored context beside the flags"
check a "$want_a" "stored context of a (not followed now) beside the flags"
want_ng2=$(report_mfu "${ng[@]}" --model gpt2-xl --seq 1024 --global-batch 60 --devices 1 --device v100-sxm2 --dtype fp16)
check nanogpt-issue215-v100-fp16-nan "$want_ng2" "nanoGPT run after a re-ingest with gpt2-xl"
close "$want_ng" "$want_ng2" && fail "gpt2 and gpt2-xl gave the same MFU: the re-ingest check proves nothing"
curl -s --max-time 10 "$URL/api/runs/megatron-issue756-mixtral-8x7b-16xh100-a" >"$tmp/out"
jq_is '.context.source' flags
stop_server

# --- a stored context that no longer parses: MFU unknown with the reason, not a crash -------
/usr/bin/python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("""UPDATE runs SET context_json='["--model=no-such-model"]' WHERE name='a'""")
c.commit()
PY
start_server --db "$db" --listen 127.0.0.1:0 || { e2e_finish; exit 1; }
curl -s --max-time 10 "$URL/api/runs/a" >"$tmp/out"
jq_is '.context.source' stored
jq_is '.context.mfu_known' false
jq_true '.context.why | test("ingest the log again")'
stop_server
e2e_finish
