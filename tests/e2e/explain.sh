#!/usr/bin/env bash
# e2e: `mfu report` explains every change, on log FILES this test writes with a known truth
# (tests/e2e/lib/genlog.py; real formats: Megatron-DeepSpeed and Megatron-LM lines, torchtitan
# lines with rank prefixes, mfu's canonical JSON-lines). Each case goes through ingest, the
# report's per-step context and the analysis, and is checked against the truth it was made
# with:
#   - a sequence-length drop 4096 -> 1024 (tokens/s up, MFU down): both found, one config
#     boundary at the exact step, every term within 1 point of the truth;
#   - a device-count change 8 -> 16: capacity +100 %, utilization within 1 point;
#   - a stall every 50 steps: period 50, lost time within 10 % of the truth;
#   - a throttled stretch with clock data: the finding, its tokens/s drop, both boundaries;
#   - padding: its share exactly; recomputation on then off: the overhead and the boundary;
#   - a NaN loss with steady throughput: the only finding; a straggler rank: rank and size;
#   - Megatron timers: the data-loading share; the roofline finding with --micro-batch;
#   - --expect: exit 3 and the failed invariant on stderr, 0 when it holds, 2 when malformed;
#   - the JSON keys docs/cli.md promises.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
gen() { /usr/bin/python3 "$(dirname "$0")/lib/genlog.py" "$@" || fail "genlog $*"; }
fpt() { "$bin" flops --json "$@" | jq -r .flops_per_token.model; }
hwpt() { "$bin" flops --json "$@" | jq -r .flops_per_token.hardware; }
calc() { awk "BEGIN { printf \"%.10g\", $1 }"; }
CTX=(--model gpt2 --device h100-sxm)
F4=$(fpt --model gpt2 --seq 4096)
F1=$(fpt --model gpt2 --seq 1024)
H4=$(hwpt --model gpt2 --seq 4096 --recompute full)
kind() { echo ".findings | map(select(.kind == \"$1\"))"; }

# ---- sequence length 4096 -> 1024 (Megatron-DeepSpeed lines), MFU 0.45 -> 0.414 -------------
gen seqdrop "$tmp/seq.log" --seed 11 --flops "$F4,$F1" --mfu 0.45,0.414
ok "$tmp/seq.log" "${CTX[@]}" --json --no-series
jq_is .format megatron
jq_is '.segments | length' 2
jq_is '.segments[1].start_step' 301
jq_is '.segments[1].cause' config
jq_is '.segments[1].levels.config.seq_len' 1024
D='.decomposition[0].terms'
near "$D.flops_per_token.pct" "$(calc "$F4 / $F1 - 1")" 1e-9
near "$D.mfu.pct" "$(calc "0.414 / 0.45 - 1")" 0.01
near "$D.capacity.pct" 0 1e-12
near "$D.tokens_per_second.pct" "$(calc "0.414 / 0.45 * $F4 / $F1 - 1")" 0.01
jq_true "$D.tokens_per_second.pct > 0 and $D.mfu.pct < 0"
jq_true "$D.mfu.direction_certain and $D.tokens_per_second.direction_certain"
jq_true "$D.flops_per_token.share + $D.mfu.share + $D.capacity.share + $D.padding.share | . > 0.999999 and . < 1.000001"
jq_is "$(kind throughput_up_mfu_down) | length" 1
jq_is '.findings | length' 1
jq_true '.decomposition[0].sentence | test("^tokens/s \\+12 %: workload 21 % easier \\(sequence 4096 → 1024")'
ok "$tmp/seq.log" "${CTX[@]}"
grep -q '^at step 301 (sequence 4096 → 1024, global batch 256 → 1024): tokens/s +12 %' "$tmp/out" ||
    fail "seqdrop: the boundary's sentence is not in the text: $(grep '^at step' "$tmp/out")"
grep -q '^  utilization (MFU) .* certain .*known' "$tmp/out" || fail "seqdrop: no utilization row"
grep -q '^  \[warning\] throughput_up_mfu_down, steps 300-301' "$tmp/out" || fail "seqdrop: finding"
grep -q '^      next: Judge this change by MFU' "$tmp/out" || fail "seqdrop: next step"

# ---- devices 8 -> 16 (canonical), MFU 0.45 -> 0.42 ----------------------------------------
gen devices "$tmp/dev.jsonl" --seed 12 --flops "$F4" --mfu 0.45,0.42
ok "$tmp/dev.jsonl" "${CTX[@]}" --json --no-series
jq_is '.segments | length' 2
jq_is '.segments[1].start_step' 301
jq_is '.segments[1].levels.config.devices' 16
near "$D.capacity.pct" 1 1e-9
near "$D.mfu.pct" "$(calc "0.42 / 0.45 - 1")" 0.01
near "$D.tokens_per_second.pct" "$(calc "0.42 / 0.45 * 2 - 1")" 0.01
jq_true '.decomposition[0].sentence | test("capacity \\+100 %")'

# ---- a stall every 50 steps (canonical) ---------------------------------------------------
gen stall "$tmp/stall.jsonl" --seed 13 --flops "$F4"
ok "$tmp/stall.jsonl" "${CTX[@]}" --json --no-series
jq_is '.segments | length' 1
S=$(kind stall)
jq_is "$S | length" 1
jq_is "$S[0].evidence.period_steps" 50
jq_is "$S[0].evidence.slow_steps" 12
# truth: the 0.5 s added to 12 steps, over the time of the steady steps (4..600)
truth=$(jq -rs '[.[1:][] | select(.step >= 4) | .step_time_s] | 6 / add' "$tmp/stall.jsonl")
got=$(jq -r "$S[0].evidence.lost_share" "$tmp/out")
awk -v g="$got" -v t="$truth" 'BEGIN { exit !(g / t - 1 < 0.1 && t / g - 1 < 0.1) }' ||
    fail "stall: lost share $got, truth $truth (want within 10 %)"
jq_true "$S[0].next_step | test(\"checkpoint\")"

# ---- a throttled stretch, steps 301-400 at 1400 of 1980 MHz (canonical) ---------------------
gen throttle "$tmp/thr.jsonl" --seed 14 --flops "$F4"
ok "$tmp/thr.jsonl" "${CTX[@]}" --json --no-series
T=$(kind throttling)
jq_is "$T | length" 1
jq_is "$T[0].severity" warning
near "$T[0].evidence.tokens_per_s_drop" "$(calc "1 - 1400 / 1980")" 0.01
near "$T[0].evidence.reference_clock_mhz" 1980 10
near "$T[0].evidence.affected_steps" 100 2
jq_is '.segments | length' 3
near '.segments[1].start_step' 301 3
near '.segments[2].start_step' 401 3
jq_is '[.findings[].kind] | join(",")' throttling # the slow stretch is no stall

# ---- padding: 30 % of the counted tokens (canonical) ---------------------------------------
gen padding "$tmp/pad.jsonl" --seed 15 --flops "$F4"
ok "$tmp/pad.jsonl" "${CTX[@]}" --json --no-series
P=$(kind padding)
jq_is "$P | length" 1
near "$P[0].evidence.padding_share" 0.3 1e-9
near '.analysis.steady.mfu.value / .analysis.steady.hfu.value' 0.7 1e-9
near '.summary.mfu.median / .summary.hfu.median' 0.7 1e-9

# ---- recomputation full, then none; HFU 0.5 throughout (canonical) --------------------------
gen recompute "$tmp/rec.jsonl" --seed 16 --flops "$F4" --hw "$H4" --mfu 0.5
ok "$tmp/rec.jsonl" "${CTX[@]}" --json --no-series
jq_is '.segments | length' 2
jq_is '.segments[1].start_step' 301
jq_is '.segments[0].levels.config.recompute' full
jq_is '.segments[1].levels.config.recompute' none
R=$(kind recompute)
jq_is "$R | length" 1
jq_is "$R[0].steps | tojson" '[4,300]'
near "$R[0].evidence.recompute_overhead" "$(calc "$H4 / $F4 - 1")" 0.001
near "$R[0].evidence.hfu_minus_mfu" "$(calc "0.5 - 0.5 * $F4 / $H4")" 0.01
near "$D.mfu.pct" "$(calc "$H4 / $F4 - 1")" 0.01
near "$D.flops_per_token.pct" 0 1e-12 # model FLOPs do not change with recomputation

# ---- a NaN loss from step 401 while throughput stays (canonical) ----------------------------
gen nanloss "$tmp/nan.jsonl" --seed 17 --flops "$F4"
ok "$tmp/nan.jsonl" "${CTX[@]}" --json --no-series
jq_is '[.findings[].kind] | join(",")' loss_nan
jq_is '.findings[0].severity' error
jq_is '.findings[0].evidence.first_nan_step' 401
jq_is '.findings[0].evidence.nan_steps' 200
near '.findings[0].evidence.tokens_per_s_ratio' 1 0.03
jq_is '.segments | length' 1

# ---- a straggler: rank 3 of 8 is 12 % slower (torchtitan lines with rank prefixes) ----------
gen straggler "$tmp/strag.log" --seed 18 --steps 200 --flops "$F4"
ok "$tmp/strag.log" "${CTX[@]}" --seq 4096 --devices 8 --json --no-series
jq_is .format torchtitan
jq_is .steps 200
jq_is .lines.merged 1400
G=$(kind straggler)
jq_is "$G | length" 1
jq_is "$G[0].evidence.rank" 3
jq_is "$G[0].evidence.ranks" 8
near "$G[0].evidence.slowdown" 0.12 0.02
jq_true "$G[0].next_step | test(\"rank 3\")"

# ---- Megatron-LM timers: data loading 10 % of the step ------------------------------------
gen timers "$tmp/timers.log" --seed 19 --steps 200 --flops "$F4"
ok "$tmp/timers.log" "${CTX[@]}" --json --no-series
L=$(kind data_loading)
jq_is "$L | length" 1
near "$L[0].evidence.share" 0.10 0.003
jq_is "$(kind optimizer) | length" 0 # 3 %: under the 5 % threshold

# ---- the roofline finding (mfu/roofline.h) when the micro-batch is known -------------------
ok "$tmp/seq.log" "${CTX[@]}" --micro-batch 1 --json --no-series
RL=$(kind roofline)
jq_is "$RL | length" 1
jq_is "$RL[0].evidence.micro_batch" 1
jq_is "$RL[0].evidence.seq_tokens" 4096
want=$("$bin" roofline --model gpt2 --seq 4096 --micro-batch 1 --device h100-sxm --json | jq -r .ceiling_mfu)
near "$RL[0].evidence.ceiling_fraction" "$want" 1e-9
bad 2 "$tmp/seq.log" "${CTX[@]}" --micro-batch 0

# ---- --expect -----------------------------------------------------------------------------
run "$tmp/seq.log" "${CTX[@]}" --expect 'mfu>=0.40' --expect 'findings==0' --expect 'flops_per_token=const'
[ "$rc" = 3 ] || fail "expect: exit $rc, want 3"
[ "$(wc -l <"$tmp/err")" = 2 ] || fail "expect: want 2 failures on stderr: $(cat "$tmp/err")"
grep -q "^mfu report: $tmp/seq.log: expectation failed: findings==0: findings = 1" "$tmp/err" ||
    fail "expect: stderr lacks the failed findings==0: $(cat "$tmp/err")"
grep -q "expectation failed: flops_per_token=const: flops_per_token varies" "$tmp/err" ||
    fail "expect: stderr lacks the failed const: $(cat "$tmp/err")"
grep -q '^  ok   mfu>=0.40: mfu = 0.429' "$tmp/out" || fail "expect: the passing line is not in the text"
grep -q '^  FAIL findings==0' "$tmp/out" || fail "expect: the failing line is not in the text"
run "$tmp/dev.jsonl" "${CTX[@]}" --expect 'tokens_per_second>=1e6' --expect 'mfu>40%' --json --no-series
[ "$rc" = 0 ] || fail "expect (holds): exit $rc: $(cat "$tmp/err")"
jq_is '.invariants | map(.passed) | all' true
jq_is '.invariants | length' 2
bad 2 "$tmp/dev.jsonl" --expect 'mfu>>0.4'
grep -q "column" "$tmp/err" || fail "a malformed --expect names the column: $(cat "$tmp/err")"
bad 2 "$tmp/dev.jsonl" --expect 'mfu>=0.4' --no-analysis
bad 2 "$tmp/dev.jsonl" --size-threshold 2
bad 2 "$tmp/dev.jsonl" --resamples 100 # the bootstrap is gone: intervals are order statistics
# several logs: every one is reported, the status says a check failed
run "$tmp/dev.jsonl" "$tmp/nan.jsonl" "${CTX[@]}" --expect 'findings==0'
[ "$rc" = 3 ] || fail "expect on two logs: exit $rc"
[ "$(grep -c '^== ' "$tmp/out")" = 2 ] || fail "expect on two logs: both reported"
grep -q "nan.jsonl: expectation failed: findings==0" "$tmp/err" || fail "expect: the failing log is named"

# ---- JSON keys docs/cli.md promises ---------------------------------------------------------
ok "$tmp/seq.log" "${CTX[@]}" --json --no-series --size-threshold 0.001
jq_true 'has("segments") and has("decomposition") and has("findings") and has("invariants") and has("analysis")'
jq_true '.segments[0] | has("start_step") and has("end_step") and has("cause") and has("settle_steps") and has("levels")'
jq_true '.segments[0].levels | has("tokens_per_second") and has("mfu") and has("hfu") and has("step_time_s") and has("config")'
jq_true '.decomposition[0] | has("at_step") and has("sentence") and has("config_change") and has("terms") and has("from") and has("to")'
jq_true '.decomposition[0].terms | keys == ["capacity","flops_per_token","mfu","padding","tokens_per_second"]'
jq_true '.decomposition[0].terms.mfu | keys == ["direction_certain","dln","hi_pct","lo_pct","pct","share","size_known"]'
jq_true '.findings[0] | keys == ["evidence","kind","next_step","severity","steps","summary"]'
jq_is '.analysis.unit' tokens
jq_is '.analysis.method.size_threshold' 0.001
jq_is '.analysis.method.intervals' true
# a tighter threshold: the utilization change is no longer known to within +-0.1 point
jq_is '.decomposition[0].terms.mfu.size_known' false
# same input: the same bytes
"$bin" report "$tmp/seq.log" "${CTX[@]}" --json --no-series >"$tmp/j1"
"$bin" report "$tmp/seq.log" "${CTX[@]}" --json --no-series >"$tmp/j2"
cmp -s "$tmp/j1" "$tmp/j2" || fail "the JSON differs between two identical runs"
# without intervals: medians, no intervals and no verdicts
ok "$tmp/seq.log" "${CTX[@]}" --json --no-series --no-intervals
jq_is '.analysis.method.intervals' false
jq_is '.segments[0].levels.mfu.lo' null
jq_is '.decomposition[0].terms.mfu.direction_certain' false
# without the analysis: empty arrays, null analysis
ok "$tmp/seq.log" "${CTX[@]}" --json --no-series --no-analysis
jq_is '[.segments, .findings, .decomposition, .invariants] | map(length) | add' 0
jq_is .analysis null

e2e_finish
