#!/usr/bin/env bash
# e2e: `mfu report` on every fixture of the formats this build reads (megatron, nemo, nanogpt,
# llmc, torchtitan): step counts, fields, the framework's printed figures against mfu's
# recomputation under that framework's convention and peak (torchtitan TFLOP/s from tps and
# Megatron TFLOP/s/GPU within 0.5 %, llm.c's MFU with its own table, nanoGPT's EMA of its
# 312-TFLOP/s MFU), disagreement causes on logs written here, a run without a model, the JSON
# keys docs/cli.md promises, the demo, and bad input (exit 1 or 2, one line, no crash).
# The runs' context (model, device, batch) comes from each fixture's .md (and examples/runs.txt).
set -u
bin=${MFU_BIN:?MFU_BIN is the built mfu}
data=${MFU_TEST_DATA:?MFU_TEST_DATA is tests/data}
src=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR is the source tree}
logs=$data/logs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { "$bin" report "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
ok() {
    run "$@"
    [ "$rc" = 0 ] || fail "report $*: exit $rc: $(cat "$tmp/err")"
}
# near FILTER WANT TOL: jq filter on the last stdout is within TOL of WANT
near() {
    local got
    got=$(jq -r "$1" "$tmp/out" 2>&1) || { fail "jq '$1': $got"; return; }
    awk -v g="$got" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }' ||
        fail "${name:-}: jq '$1' = $got, want $2 +- $3"
}
# rel FILTER WANT TOL: |value / WANT - 1| <= TOL (the JSON holds 10 significant digits)
rel() {
    local got
    got=$(jq -r "$1" "$tmp/out" 2>&1) || { fail "jq '$1': $got"; return; }
    awk -v g="$got" -v w="$2" -v t="$3" 'BEGIN { d = g / w - 1; if (d < 0) d = -d; exit !(d <= t) }' ||
        fail "${name:-}: jq '$1' = $got, want $2 within $3 relative"
}
# is FILTER WANT: jq filter on the last stdout prints exactly WANT
is() {
    local got
    got=$(jq -r "$1" "$tmp/out" 2>&1)
    [ "$got" = "$2" ] || fail "${name:-}: jq '$1' = '$got', want '$2'"
}
# calc EXPR: awk arithmetic printed to 17 significant digits
calc() { awk "BEGIN { printf \"%.17g\", $1 }"; }
# FLOPs per token from `mfu flops` (the model module, not the report)
fpt() { "$bin" flops --json "$@" | jq -r .flops_per_token.model; }
bad() {
    local want=$1
    shift
    run "$@"
    [ "$rc" = "$want" ] || fail "report $*: exit $rc, want $want ($(cat "$tmp/err"))"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "report $*: stderr is not one line: $(cat "$tmp/err")"
    grep -q '^mfu report: ' "$tmp/err" || fail "report $*: stderr lacks the prefix"
    [ -s "$tmp/out" ] && fail "report $*: printed to stdout on failure"
    return 0
}
cmp_of() { echo ".comparisons | map(select(.figure == \"$1\"))[$2]"; }
FLOPS=$(cmp_of flops_per_second_per_device 0)
MFU0=$(cmp_of mfu 0)
MFU1=$(cmp_of mfu 1)
TOK=$(cmp_of tokens_per_second 0)

# ---- torchtitan ---------------------------------------------------------------------------
# PR #1287: Llama 3 8B, seq 8192, H100 SXM (the .md infers them from tflops/tps and tflops/mfu).
name=torchtitan-pr1287
f=$logs/torchtitan/torchtitan-pr1287-llama3-8b-h100-gc-profiler.log
ok "$f" --model llama3-8b --seq 8192 --device h100-sxm --json
is .format torchtitan
is .lines.used 6
is .lines.skipped 0
is .steps 6
is '.series[0].step' 200
is '.series[0].tokens_per_second_per_device' 5856
is '.series[0].reported_tflops_per_device' 339.16
is '.series[0].reported_mfu' 0.3429
# torchtitan's tflops from its tps, every step within 0.5 %; its MFU on its 989 TFLOP/s
near '[.series[] | (.recomputed_tflops_per_device / .reported_tflops_per_device - 1) | fabs] | max' 0 0.005
near '[.series[] | (.recomputed_mfu / .reported_mfu - 1) | fabs] | max' 0 0.005
is "$FLOPS.agrees" true
near "$FLOPS.ratio" 1 0.005
near "$FLOPS.reported / 1e12" 339.535 0.001
is "$MFU0.agrees" true
is "$MFU0.peak_flops" 989000000000000
is "$MFU1" null # 989 vs mfu's 989.5: no second MFU row
is .context.stack.convention torchtitan
is .context.stack.attention full
# mfu's own MFU: exact FLOPs per token x the median tokens/s per device / 989.5 TFLOP/s
fe=$(fpt --model llama3-8b --seq 8192)
near .summary.tokens_per_second_per_device.median 5863 0
rel .summary.mfu.median "$(calc "$fe * 5863 / 989.5e12")" 1e-9
is .summary.hfu.median "$(jq -r .summary.mfu.median "$tmp/out")"
is '.missing | length' 0
# without context: throughput and the log's own figures (its MFU is the headline, under
# torchtitan's convention, said so), and which flags add mfu's own count
ok "$f" --json
is '[.missing[].what] | join(",")' model,device
is '.missing[0].option | test("--model")' true
is '.missing[1].option | test("--device")' true
is .context.mfu_from_log true
rel .summary.mfu.median "$(jq -r .summary.reported_mfu.median "$tmp/out")" 1e-12
is '.comparisons | length' 0
near '.context.implied_peak_flops / 1e12' 989 1
near .summary.reported_mfu.median 0.34335 1e-9
ok "$f"
grep -q '^missing: model: --model NAME' "$tmp/out" || fail "text without a model names --model"
grep -q '^missing: device: --device NAME' "$tmp/out" || fail "text without a device names --device"
grep -q '^tokens/s per device  *5863' "$tmp/out" || fail "text without a model shows tokens/s"

# PR #2389: 8 ranks print each step; the MoE model is not known, the B200 is implied.
name=torchtitan-pr2389
ok "$logs/torchtitan/torchtitan-pr2389-moe-b200-8rank-noprefix.log" --json
is .steps 2
is .lines.used 8
is .lines.merged 6
near '.context.implied_peak_flops / 1e12' 2250 2.5
near '.context.implied_flops_per_token / 1e9' 31.31 0.05
is '[.notes[] | select(test("b200, b300"))] | length' 1

# ---- llm.c -------------------------------------------------------------------------------
# discussion #677: GPT-2 1558M on 8 x H100 SXM; batch, seq, devices and N in the header.
name=llmc-677
f=$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log
ok "$f" --model gpt2-xl --device h100-sxm --json
is .format llmc
is .steps 10
is .lines.used 14
is .warmup.steps 1
is .warmup.first_step 1
is .steady_steps 9
is .context.devices 8
is .context.tokens_per_step 1048576
is .context.seq_source log
is "$MFU0.agrees" true
near "$MFU0.ratio" 1 0.005
is "$MFU0.peak_flops" 988800000000000
near "$MFU0.reported" 0.473 1e-9
# llm.c's own MFU, every step including the warm-up one (42.6 %), within 0.5 %
near '[.series[] | (.recomputed_mfu / .reported_mfu - 1) | fabs] | max' 0 0.005
near '.series[0].recomputed_mfu' 0.426 0.002
is "$TOK.agrees" true
# mfu's MFU equals `mfu estimate` at the median step time
st=$(jq -r .summary.step_time_s.median "$tmp/out")
want=$("$bin" estimate --model gpt2-xl --seq 1024 --device h100-sxm --devices 8 \
    --step-time "$st" --batch-tokens 1048576 --json | jq -r .mfu)
rel .summary.mfu.median "$want" 1e-9
ok "$f" --model gpt2-xl --device h100-sxm
grep -q 'warm-up excluded: step 1 (1.11× the steady step time)' "$tmp/out" || fail "llm.c warm-up not said as a step-time ratio"

# issue #796: an unknown Blackwell GPU, -100 % MFU; GPT-2 124M, 4 x 1024 tokens a step.
name=llmc-796
ok "$logs/llm.c/llmc-issue796-blackwell-unknown-mfu.log" --model gpt2 --seq 1024 \
    --tokens-per-step 4096 --devices 1 --json
is .steps 11
is '[.missing[].what] | join(",")' device
is '[.notes[] | select(test("-100%"))] | length' 1
is "$TOK.agrees" true
# 11 steady step times from 44.55 to 44.60 ms: the 6th is 44.58 ms
rel .summary.tokens_per_second.median "$(calc "4096 / 0.04458")" 1e-9
rel .summary.model_flops_per_second_per_device.median \
    "$(calc "$(fpt --model gpt2 --seq 1024) * 4096 / 0.04458")" 1e-9

# ---- nanoGPT -----------------------------------------------------------------------------
# issue #215: GPT-2 124M on 1 V100 (fp16), 60 x 1024 tokens per iteration; nanoGPT divides by
# 312 TFLOP/s whatever the GPU and prints an EMA.
name=nanogpt-215
f=$logs/nanogpt/nanogpt-issue215-v100-fp16-nan.log
ctx="--model gpt2 --seq 1024 --global-batch 60 --devices 1"
# shellcheck disable=SC2086
ok "$f" $ctx --device v100-sxm2 --dtype fp16 --json
is .steps 15
is .warmup.mid_run true
is "$MFU0.agrees" true
near "$MFU0.ratio" 1 0.005
is "$MFU0.peak_flops" 312000000000000
# the EMA replayed through the eval stall: 13.85 % at iter 3000, 14.12 % at 3010
near '.series[] | select(.step == 3000) | .recomputed_mfu' 0.1385 0.0005
near '.series[] | select(.step == 3010) | .recomputed_mfu' 0.1412 0.0005
is "$MFU1.agrees" false
is "$MFU1.cause" a100_hardcoded
near "$MFU1.ratio" "$(calc "125 / 312")" 0.002
is '[.notes[] | select(test("nan on 6 steps"))] | length' 1
# shellcheck disable=SC2086
ok "$f" $ctx --json # no device: nanoGPT's own MFU still checks, and the note says why
is "$MFU0.agrees" true
is '[.notes[] | select(test("only on an A100"))] | length' 1

# issue #110: before MFU was printed; 8 x A100, 12 x 5 x 8 = 480 sequences per iteration.
name=nanogpt-110
f=$logs/nanogpt/nanogpt-issue110-gpt2-124m-8xa100-preMFU.log
ok "$f" --model gpt2 --seq 1024 --global-batch 480 --devices 8 --device a100 --json
is .steps 11
is '.comparisons | length' 0
is '.series[0].reported_mfu' null
st=$(jq -r .summary.step_time_s.median "$tmp/out")
rel .summary.tokens_per_second.median "$(calc "491520 / $st")" 1e-9
want=$("$bin" estimate --model gpt2 --seq 1024 --device a100 --devices 8 --step-time "$st" \
    --batch-tokens 491520 --json | jq -r .mfu)
rel .summary.mfu.median "$want" 1e-9
# what nanoGPT would have printed (its formula, 312 TFLOP/s) is in the series
want=$("$bin" estimate --model gpt2 --seq 1024 --convention nanogpt --peak-tflops 312 \
    --devices 8 --step-time 0.56194 --batch-tokens 491520 --json | jq -r .mfu)
near '.series[0].recomputed_mfu' "$want" 1e-9

# ---- Megatron-LM -------------------------------------------------------------------------
# Fixstars MDK: GPT 7B (30 layers, 4096 wide, 32 heads, 4h MLP, GPT-2 vocab padded to 50304),
# seq 4096, 16 GPUs; dated 2024-09: Megatron's formula counted the full attention matrix.
name=megatron-fixstars
f=$logs/megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log
ok "$f" --layers 30 --hidden 4096 --heads 32 --vocab 50304 --seq 4096 --devices 16 --json
is .steps 10
is .warmup.steps 1
is .warmup.first_step 10
is .context.stack.attention full
is '.context.stack.rule | test("2024-09-03")' true
is "$FLOPS.agrees" true
near "$FLOPS.ratio" 1 0.005
near '[.series[] | select(.state == "steady") |
       (.recomputed_tflops_per_device / .reported_tflops_per_device - 1) | fabs] | max' 0 0.005
is '[.notes[] | select(test("skipped optimizer steps"))] | length' 1
is '[.missing[].what] | join(",")' device
ok "$f" --json
is '[.missing[].what] | join(",")' "model,device,sequence length"
near .summary.reported_flops_per_second_per_device.median 801.7e12 1e9

# issue #756: Mixtral 8x7B on 16 H100; seq 2048 fits Megatron's formula of April 2024 to
# 0.03 %, 4096 does not.
name=megatron-mixtral
f=$logs/megatron-lm/megatron-issue756-mixtral-8x7b-16xh100-a.log
ok "$f" --model mixtral-8x7b --seq 2048 --devices 16 --device h100-sxm --json
is .steps 2
is "$FLOPS.agrees" true
near "$FLOPS.ratio" 1 0.001
near '.series[0].recomputed_tflops_per_device' 231.9 0.2
ok "$f" --model mixtral-8x7b --seq 4096 --devices 16 --json
is "$FLOPS.agrees" false

name=megatron-epfllm
ok "$logs/megatron-lm/epfllm-megatron-llm-issue11-a.log" --json
is .steps 4
near .summary.step_time_s.median 18.54375 1e-9
is '.missing | map(.what) | index("sequence length") != null' true
ok "$logs/megatron-lm/epfllm-megatron-llm-issue11-a.log" --seq 4096 --json
# the median of 4 tokens/s: the mean of the middle two (19.6159 s and 17.4716 s)
rel .summary.tokens_per_second.median "$(calc "(4194304 / 19.6159 + 4194304 / 17.4716) / 2")" 1e-9

name=megatron-bert
ok "$logs/megatron-lm/nccl-issue743-megatron-bert-2022-timers.log" --json
is .steps 1
is .warmup.checked false
near .summary.step_time_s.median 0.3562 1e-12

# ---- NeMo --------------------------------------------------------------------------------
name=nemo-automodel
ok "$logs/nemo/nemo-automodel-pr3473-tps.log" --json
is .steps 7
is .context.devices 8
near .summary.tokens_per_second.median 10558.09 1e-6
near .summary.tokens_per_second_per_device.median "$(calc "10558.09 / 8")" 1e-9
name=nemo-bionemo
ok "$logs/nemo/nemo2-bionemo-pr740-progress-printer.log" --json
is .steps 6
near .summary.step_time_s.median 0.0316 1e-9

# ---- disagreement causes on logs written here ----------------------------------------------
# torchtitan on an L40S: its table misses the device ("l40s" lower-case) -> A100 fallback.
name=cause-fallback
ftt=$(fpt --model llama3-8b --seq 8192 --convention torchtitan)
titan() { # tps peak -> one torchtitan line per step
    local i
    for i in 1 2 3 4 5 6; do
        awk -v i="$i" -v t="$1" -v f="$ftt" -v p="$2" 'BEGIN {
            tf = f * t / 1e12
            printf "[rank0]:[titan] 2025-06-16 22:30:%02d,000 - root - INFO - step: %d  loss:  6.1000  memory: 40.00GiB(50.00%%)  tps: %d  tflops: %.2f  mfu: %.2f%%\n", i, i, t, tf, 100 * tf * 1e12 / p }'
    done
}
titan 2000 312e12 >"$tmp/l40s.log"
ok "$tmp/l40s.log" --model llama3-8b --seq 8192 --device l40s --json
is "$MFU0.agrees" true
is "$MFU1.cause" a100_fallback
titan 5000 1979e12 >"$tmp/sparse.log"
name=cause-sparse
ok "$tmp/sparse.log" --model llama3-8b --seq 8192 --device h100-sxm --json
is "$MFU0.cause" sparse_peak
ok "$tmp/sparse.log" --model llama3-8b --seq 8192 --device h100-sxm
grep -q '^  ! mfu: the peak used is 1.979 PFLOP/s, the 2:4 sparse figure: twice h100-sxm's dense 989.5 TFLOP/s' "$tmp/out" ||
    fail "sparse peak not explained in text: $(grep '!' "$tmp/out")"
# Megatron TFLOP/s from a formula that treats Llama 3's GQA as multi-head attention.
name=cause-gqa
fg=$(fpt --model llama3-8b --kv-heads 32 --seq 8192 --convention megatron-2025 --attention full)
for i in 1 2 3 4 5 6; do
    awk -v i="$i" -v f="$fg" 'BEGIN {
        t = 20.0; printf " [2024-09-03 16:%02d:00] iteration %8d/  500000 | consumed samples: %12d | elapsed time per iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: 1.000000E-05 | global batch size:  1024 | lm loss: 5.000000E+00 | loss scale: 1.0 | grad norm: 1.000 | number of skipped iterations:   0 | number of nan iterations:   0 |\n", i, 10 * i, 10240 * i, 1000 * t, f * 1024 * 8192 / (t * 64) / 1e12 }'
done >"$tmp/gqa.log"
ok "$tmp/gqa.log" --model llama3-8b --seq 8192 --devices 64 --json
is "$FLOPS.cause" no_gqa
is "$FLOPS.agrees" false
# a generic JSON-lines log whose FLOP/s count padding: 3/4 of the tokens are real
name=cause-padding
fe4=$(fpt --model llama3-8b --seq 4096)
for i in 1 2 3 4 5 6; do
    awk -v i="$i" -v f="$fe4" 'BEGIN {
        printf "{\"step\": %d, \"step_time_s\": 20.0, \"tokens\": 524288, \"flops_per_s_device\": %.6e}\n", i, f * 524288 / 20.0 / 8 }'
done >"$tmp/pad.jsonl"
ok "$tmp/pad.jsonl" --model llama3-8b --seq 4096 --devices 8 --device h100-sxm \
    --real-tokens-per-step 393216 --json
is .format jsonl
is "$FLOPS.cause" padding
near .context.real_token_fraction 0.75 1e-12
near '.summary.mfu.median / .summary.hfu.median' 0.75 1e-9

# ---- JSON keys (docs/cli.md) and several logs ----------------------------------------------
name=keys
ok "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --model gpt2-xl --device h100-sxm --json
for k in .format .lines.used .lines.skipped .steps .summary.mfu.median \
    .summary.tokens_per_second.median .summary.model_flops_per_second_per_device.median \
    .summary.hfu.p90 .warmup.steps .context.device.peak_flops .context.stack.name; do
    [ "$(jq "$k | type" "$tmp/out")" != '"null"' ] || fail "key $k is missing or null"
done
for k in step tokens_per_second mfu reported_mfu reported_tflops_per_device state \
    recomputed_mfu tokens_per_second_per_device model_flops_per_second_per_device; do
    is "[.series[] | has(\"$k\")] | all" true
done
ok "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --model gpt2-xl --json --no-series
is 'has("series")' false
ok "$logs/nemo/nemo2-bionemo-pr740-progress-printer.log" \
    "$logs/megatron-lm/nccl-issue743-megatron-bert-2022-timers.log" --json
is 'type' array
is 'length' 2
is '.[1].format' megatron
ok "$logs/nemo/nemo2-bionemo-pr740-progress-printer.log" \
    "$logs/megatron-lm/nccl-issue743-megatron-bert-2022-timers.log"
[ "$(grep -c '^== ' "$tmp/out")" = 2 ] || fail "two logs: two blocks"

# ---- the demo ----------------------------------------------------------------------------
name=demo
MFU_DB="$tmp/demo.db" bash "$src/examples/demo.sh" --no-serve "$bin" >"$tmp/demo" 2>&1 || fail "demo: exit $?: $(tail -3 "$tmp/demo")"
n=$(wc -l <"$tmp/demo")
# the analysis adds segments and findings (with evidence and next step) to each of the 5 runs
[ "$n" -lt 140 ] || fail "demo prints $n lines (want < 140)"
grep -q '^segments: 1' "$tmp/demo" || fail "demo lacks the segments"
grep -q 'loss_nan' "$tmp/demo" || fail "demo lacks the nanoGPT nan-loss finding"
[ "$(grep -c '^== examples/' "$tmp/demo")" = 5 ] || fail "demo: not 5 runs"
grep -q 'a100_hardcoded' "$tmp/demo" || fail "demo lacks the nanoGPT check"
[ "$(grep -c ' agrees$' "$tmp/demo")" -ge 5 ] || fail "demo: fewer than 5 agreeing checks"

# ---- bad input: exit 1 (the log) or 2 (usage), one line, nothing on stdout ------------------
name=bad
: >"$tmp/empty.log"
bad 1 "$tmp/empty.log"
grep -q 'empty.log' "$tmp/err" || fail "empty: the message does not name the file"
head -c 4096 /dev/urandom >"$tmp/binary.log"
printf '\0\1\2' >>"$tmp/binary.log"
bad 1 "$tmp/binary.log"
printf 'hello world\nthis is not a training log\n' >"$tmp/prose.log"
bad 1 "$tmp/prose.log"
grep -q -- '--format' "$tmp/err" || fail "unknown format: the message does not name --format"
bad 1 "$tmp/does-not-exist.log"
bad 2 "$tmp/prose.log" --format caffe
bad 2
bad 1 "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --device h999
bad 2 "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --seq abc
bad 2 "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --global-batch 8
bad 2 "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --real-tokens-per-step 2e6
bad 2 "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --stack caffe
bad 2 "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --tolerance 0.9
bad 2 "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --layers 2 --seq 128
run --help
[ "$rc" = 0 ] && grep -q -- '--real-tokens-per-step' "$tmp/out" || fail "--help"
run --list-stacks
[ "$rc" = 0 ] && grep -q '^neox' "$tmp/out" || fail "--list-stacks"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "report: all checks passed"
