#!/usr/bin/env bash
# e2e: `mfu compare A B` on log files this test writes (tests/e2e/lib/genlog.py):
#   - two runs whose MFU differs by less than the noise (no difference at all, 20 steady steps
#     a side): the size is never "known", over 8 seed pairs;
#   - a real 3 % MFU shift with 600 steps a side: direction certain (up), size known, the
#     change within 0.5 point of 3 %;
#   - two step ranges of one run across a sequence-length drop: the terms of the truth;
#   - --size-threshold, JSON keys, and bad input (exit 1 or 2, one line, no crash).
E2E_CMD=compare
source "$(dirname "$0")/lib/e2e.bash"
gen() { /usr/bin/python3 "$(dirname "$0")/lib/genlog.py" "$@" || fail "genlog $*"; }
F4=$("$bin" flops --json --model gpt2 --seq 4096 | jq -r .flops_per_token.model)
F1=$("$bin" flops --json --model gpt2 --seq 1024 | jq -r .flops_per_token.model)
CTX=(--model gpt2 --device h100-sxm)

# ---- within the noise: short windows never claim a known size ---------------------------------
for s in 1 2 3 4 5 6 7 8; do
    gen steady "$tmp/a.jsonl" --seed $((200 + s)) --steps 40 --flops "$F4" --mfu 0.45
    gen steady "$tmp/b.jsonl" --seed $((300 + s)) --steps 40 --flops "$F4" --mfu 0.45
    ok "$tmp/a.jsonl:1-23" "$tmp/b.jsonl:1-23" "${CTX[@]}" --json
    jq_is .verdict.figure mfu
    jq_is .verdict.size_known false
    jq_is .a.level.steps 20 # 3 warm-up steps left out
done
ok "$tmp/a.jsonl:1-23" "$tmp/b.jsonl:1-23" "${CTX[@]}"
grep -q '^size: not known well enough' "$tmp/out" || fail "noise: the text verdict on size"

# ---- a real 3 % MFU shift, 600 steps a side ------------------------------------------------
gen steady "$tmp/before.jsonl" --seed 401 --flops "$F4" --mfu 0.45
gen steady "$tmp/after.jsonl" --seed 402 --flops "$F4" --mfu 0.4635
ok "$tmp/before.jsonl" "$tmp/after.jsonl" "${CTX[@]}" --json
jq_is .verdict.direction_certain true
jq_is .verdict.direction up
jq_is .verdict.size_known true
near .verdict.change_pct 0.03 0.005
near .decomposition.terms.mfu.pct 0.03 0.005
near .decomposition.terms.flops_per_token.pct 0 1e-12
near .mfu_points 0.0135 0.0025
jq_true '.verdict.lo_pct > 0 and .verdict.hi_pct > .verdict.lo_pct'
ok "$tmp/before.jsonl" "$tmp/after.jsonl" "${CTX[@]}"
grep -q '^direction: certain, MFU went up' "$tmp/out" || fail "3 %: the text verdict on direction"
grep -q '^size: known' "$tmp/out" || fail "3 %: the text verdict on size"
# a threshold below the interval's half-width: the size is no longer known
ok "$tmp/before.jsonl" "$tmp/after.jsonl" "${CTX[@]}" --json --size-threshold 0.001
jq_is .verdict.size_known false
jq_is .verdict.size_threshold 0.001
jq_is .verdict.direction_certain true

# ---- two ranges of one run, across a sequence-length drop ---------------------------------------
gen seqdrop "$tmp/seq.log" --seed 11 --flops "$F4,$F1" --mfu 0.45,0.414
ok "$tmp/seq.log:1-300" "$tmp/seq.log:301-" "${CTX[@]}" --json
jq_is .a.window.first_step 1
jq_is .b.window.last_step null
jq_is .b.level.first_step 301
T=.decomposition.terms
near "$T.flops_per_token.pct" "$(awk "BEGIN { printf \"%.10g\", $F4 / $F1 - 1 }")" 1e-9
near "$T.mfu.pct" -0.08 0.01
jq_is .verdict.direction down
jq_true '.decomposition | has("sentence") and has("config_change") and has("terms") and (has("from") | not)'
jq_true '.a | has("file") and has("window") and has("level")'
jq_true '.verdict | keys == ["change_pct","direction","direction_certain","figure","half_width_pct","hi_pct","lo_pct","size_known","size_threshold"]'
ok "$tmp/seq.log:-300" "$tmp/seq.log:301-600" "${CTX[@]}"
grep -q '^B vs A: tokens/s +12 %: workload 21 % easier (sequence 4096 → 1024' "$tmp/out" ||
    fail "seqdrop: the sentence: $(grep '^B vs A' "$tmp/out")"
grep -q '^  workload (FLOPs/token) ' "$tmp/out" || fail "seqdrop: the terms table"
# without a model: tokens/s is the headline
ok "$tmp/before.jsonl" "$tmp/after.jsonl" --json
jq_is .verdict.figure tokens_per_second

# ---- units: a whole-job run against one without a device count, steps/s against tokens/s -------
# torchtitan prints tokens/s per device and no device count; llm.c's header says 8 processes:
# B is converted to per device (its 381.4k tokens/s / 8 = 47.67k), and the note says so
tt=$data/logs/torchtitan/torchtitan-pr1287-llama3-8b-h100-gc-profiler.log
lc=$data/logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log
ok "$tt" "$lc" --json
jq_is .unit "tokens per device"
jq_true '.unit_note | test("has no device count.*divided by its 8 devices")'
near .b.level.tokens_per_second.value 47673 5
near .a.level.tokens_per_second.value 5863 1
ok "$tt" "$lc"
grep -q '^throughput in tokens/s per device' "$tmp/out" || fail "compare units: $(head -1 "$tmp/out")"
grep -q '^B vs A: tokens/s per device ' "$tmp/out" || fail "compare units: the sentence names the rate: $(grep '^B vs A' "$tmp/out")"
# llm.c's FLOPs per token are known only as ratios (its MFU, no device): its capacity and
# FLOPs/token are in units of its own unknown peak, so the MFU term is the two MFUs' ratio
# (47.30 / 34.34 - 1 = +38 %) and capacity and workload stay one unsplit rest (before:
# 'workload 583610808904471040 % easier, capacity −100 %')
grep -q '^B vs A: tokens/s per device +713 %: utilization +38 %, capacity and workload together +490 % (not apart: B.s FLOPs per token are known only as ratios; give --device)$' "$tmp/out" ||
    fail "relative FLOPs: the sentence: $(grep '^B vs A' "$tmp/out")"
grep -qE '^  (capacity|workload) ' "$tmp/out" && fail "relative FLOPs: a capacity or workload row: $(cat "$tmp/out")"
ok "$tt" "$lc" --json
jq_is .decomposition.flops_units_differ true
jq_is .b.level.flops_relative true
jq_true '.decomposition.terms.capacity.pct == null and .decomposition.terms.flops_per_token.pct == null and .decomposition.terms.mfu.pct > 0.37'
# a whole-job run with no device count either (canonical, the job's tokens per step): nothing
# converts one side to the other's unit, so compare refuses instead of labelling the job's
# tokens/s "per device"; with --devices both are whole-job figures
{ echo '{"mfu_run":1,"format":"generic"}'
  for i in $(seq 1 40); do echo "{\"step\":$i,\"tokens\":1048576,\"step_time_s\":1.0}"; done; } >"$tmp/job.jsonl"
bad 1 "$tmp/job.jsonl" "$tt"
grep -q "counts tokens/s per device and .*job.jsonl tokens/s of the whole job, with no device count for either: they cannot be compared; give --devices N" "$tmp/err" ||
    fail "whole job vs per device, no devices: $(cat "$tmp/err")"
ok "$tmp/job.jsonl" "$tt" --devices 8 --json
jq_is .unit "tokens"
near .b.level.tokens_per_second.value 46904 5
# nanoGPT's old log prints no tokens per step: steps/s, which no tokens/s compares with
ng=$data/logs/nanogpt/nanogpt-issue110-gpt2-124m-8xa100-preMFU.log
bad 1 "$ng" "$lc"
grep -q 'counts steps/s only (no tokens per step) while .* counts tokens: they cannot be compared; give its tokens with --tokens-per-step N' "$tmp/err" ||
    fail "steps vs tokens: $(cat "$tmp/err")"

# ---- bad input --------------------------------------------------------------------------------
bad 2 "$tmp/before.jsonl"
bad 2 "$tmp/before.jsonl:30-20" "$tmp/after.jsonl"
bad 2 "$tmp/before.jsonl:1-2-3" "$tmp/after.jsonl"
bad 2 - - "${CTX[@]}"
bad 1 "$tmp/nonexistent.log" "$tmp/after.jsonl"
bad 1 "$tmp/before.jsonl:5000-6000" "$tmp/after.jsonl" "${CTX[@]}"
grep -q 'no steady step in steps 5000-6000' "$tmp/err" || fail "empty window: $(cat "$tmp/err")"
bad 2 "$tmp/before.jsonl" "$tmp/after.jsonl" --size-threshold 1.5
run --help
[ "$rc" = 0 ] && grep -q 'LOG:FIRST-LAST' "$tmp/out" || fail "compare --help"
e2e_finish
