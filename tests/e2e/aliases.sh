#!/usr/bin/env bash
# e2e: one quantity, one meaning, either spelling. estimate's --batch-size/--batch-tokens and the
# run context's --global-batch/--tokens-per-step (report, compare, ingest, serve) are aliases
# (docs/cli.md, "Aliases"): each command takes both and means the same. Unknown commands and
# options get a did-you-mean.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
log="$data/logs/megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log"

# report: --batch-tokens is --tokens-per-step, --batch-size is --global-batch
ctx=(--model llama3-8b --seq 4096 --device h100-sxm --devices 16)
ok "$log" "${ctx[@]}" --tokens-per-step 4194304 --json
cp "$tmp/out" "$tmp/a.json"
ok "$log" "${ctx[@]}" --batch-tokens 4194304 --json
cmp -s "$tmp/out" "$tmp/a.json" || fail "report --batch-tokens differs from --tokens-per-step"
ok "$log" "${ctx[@]}" --global-batch 1024 --json
cp "$tmp/out" "$tmp/g.json"
jq_is '.context.tokens_per_step' 4194304
ok "$log" "${ctx[@]}" --batch-size 1024 --json
cmp -s "$tmp/out" "$tmp/g.json" || fail "report --batch-size differs from --global-batch"

# compare reads the same options
E2E_CMD=compare
ok "$log:10-50" "$log:60-100" "${ctx[@]}" --batch-tokens 4194304 --json
cp "$tmp/out" "$tmp/c1.json"
ok "$log:10-50" "$log:60-100" "${ctx[@]}" --tokens-per-step 4194304 --json
cmp -s "$tmp/out" "$tmp/c1.json" || fail "compare --batch-tokens differs from --tokens-per-step"

# ingest stores the option under its one name: a stored context reads back the same
E2E_CMD=ingest
db="$tmp/runs.db"
ok "$log" --db "$db" --run alias "${ctx[@]}" --batch-size 1024
"$bin" runs --db "$db" --json >"$tmp/out" 2>"$tmp/err" || fail "runs: $(cat "$tmp/err")"
jq_true '[.. | strings | select(test("global-batch=1024"))] | length > 0'

# estimate takes the run context's spellings too (tests/e2e/estimate.sh checks the figures)
E2E_CMD=estimate
ok --model llama3-8b --device h100-sxm --step-time 2 --tokens-per-step 65536 --json
jq_true '.tokens_per_second == 32768'

# did you mean: a command, an option of the command given
"$bin" reprot >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] || fail "unknown command: exit status"
grep -qF "mfu: unknown command 'reprot' (did you mean report?" "$tmp/err" || fail "command did-you-mean: $(cat "$tmp/err")"
E2E_CMD=report
bad 2 "$log" --tokens-per-stp 9
grep -qF "(did you mean --tokens-per-step?" "$tmp/err" || fail "report option did-you-mean"
E2E_CMD=devices
bad 2 --jsn
grep -qF "(did you mean --json?" "$tmp/err" || fail "devices option did-you-mean"

e2e_finish
