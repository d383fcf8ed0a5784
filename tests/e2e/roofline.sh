#!/usr/bin/env bash
# e2e: `mfu roofline` - the products, ridge point and ceiling through the CLI (presets, the
# device table and the overrides together), how the ceiling moves with micro-batch, sequence,
# TP and EP, agreement with `mfu flops`, the JSON keys docs/cli.md promises, and bad input:
# exit 1 or 2 with one line on stderr, never a crash.
E2E_CMD=roofline
source "$(dirname "$0")/lib/e2e.bash"

# Llama 3 8B, one 8192-token sequence on H100 SXM bf16: every product compute-bound.
ok --model llama3-8b --seq 8192 --device h100-sxm --json
near '.ridge_flops_per_byte' 295.373 0.001
near '.device.peak_flops' 989.5e12 1
near '.device.memory_bandwidth_bytes_per_s' 3.35e12 1
jq_is '.products | length' 30
jq_is '[.products[] | select(.bound == "memory")] | length' 0
near '.ceiling_mfu' 1 1e-12
jq_is '.products[0] | [.name, .pass, .m, .n, .k, .count] | map(tostring) | join(" ")' \
    "attn.q fwd 8192 4096 4096 32"
jq_is '[.products[] | select(.name == "attn.scores")][0].mask_fraction' 0.5
jq_is '.sentence' "at micro-batch 1 × 8192 tokens the main matrix products are compute-bound: their shapes do not limit MFU"
for k in .model.name .workload.seq .workload.micro_batch .workload.tokens .workload.recompute \
    .parallel.tp .parallel.ep .parallel.etp .device.id .device.dtype .device.bytes_per_element \
    .device.peak_flops .device.peak_source .device.memory_bandwidth_bytes_per_s \
    .device.bandwidth_source .ridge_flops_per_byte .attention .wgrad_fp32 .fused_projections \
    .products .groups.mlp \
    .groups.attention_core.memory_bound_share .flops .recompute_flops .time_s \
    .memory_bound_share .ceiling_mfu .sentence; do
    [ "$(jq -r "$k | type" "$tmp/out")" != null ] || fail "key $k missing"
done
for k in name group pass m n k count mask_fraction flops bytes intensity_flops_per_byte bound \
    attainable_flops_per_s time_s flops_share recomputed; do
    jq_true "[.products[] | has(\"$k\")] | all"
done
# The forward products are the exact convention's forward FLOPs, per token.
fwd=$(jq '([.products[] | select(.pass == "fwd") | .flops] | add) / .workload.tokens' "$tmp/out")
"$bin" flops --model llama3-8b --seq 8192 --json >"$tmp/out" 2>"$tmp/err"
near ".flops_per_token.forward / $fwd" 1 1e-9

# One token: every product memory-bound, at about 1 FLOP/byte for the projections.
ok --model llama3-8b --seq 1 --device h100-sxm --json
jq_is '[.products[] | select(.bound == "compute")] | length' 0
near '.memory_bound_share' 1 0
jq_true '.ceiling_mfu < 0.01'
near '.products[0].intensity_flops_per_byte' 1 0.001

# The ceiling rises with micro-batch x sequence and falls with TP.
ceiling() { run "$@" --json; jq -r .ceiling_mfu "$tmp/out"; }
c1=$(ceiling --model llama3-8b --seq 64 --device h100-sxm)
c4=$(ceiling --model llama3-8b --seq 64 --micro-batch 4 --device h100-sxm)
c16=$(ceiling --model llama3-8b --seq 256 --micro-batch 4 --device h100-sxm)
awk -v a="$c1" -v b="$c4" -v c="$c16" 'BEGIN { exit !(a < b && b < c && c < 1) }' ||
    fail "ceiling does not rise with micro-batch x seq: $c1 $c4 $c16"
t1=$(ceiling --model llama3-70b --seq 256 --device h100-sxm)
t8=$(ceiling --model llama3-70b --seq 256 --tp 8 --device h100-sxm)
awk -v a="$t1" -v b="$t8" 'BEGIN { exit !(a > b) }' || fail "ceiling does not fall with TP: $t1 $t8"
ok --model llama3-70b --seq 256 --tp 8 --device h100-sxm --json
jq_is '[.products[] | select(.name == "mlp.up" and .pass == "fwd")][0] | [.m, .n, .k] | map(tostring) | join("x")' \
    "256x3584x8192"

# Fused projections (Megatron-LM): at TP 8 the 128-wide K and V projections are memory-bound
# on their own, not inside one QKV GEMM.
ok --model llama3-8b --seq 4096 --tp 8 --device h100-sxm --json
jq_is '[.products[] | select(.name == "attn.k")][0].bound' memory
split=$(jq -r .ceiling_mfu "$tmp/out")
ok --model llama3-8b --seq 4096 --tp 8 --device h100-sxm --fused-projections --json
jq_true '.fused_projections'
jq_is '[.products[] | select(.name == "attn.qkv" and .pass == "fwd")][0] | [.m, .n, .k] | map(tostring) | join("x")' \
    "4096x768x4096"
jq_true ".ceiling_mfu > $split"

# MoE: 128 experts, top-8, 4096 tokens -> 256 tokens per expert, memory-bound on H100;
# EP 4 gathers 4 devices' tokens -> 1024 per expert, compute-bound, a higher ceiling.
ok --model qwen3-30b-a3b --seq 4096 --device h100-sxm --json
near '.parallel.tokens_per_expert' 256 0
near '.groups.experts.memory_bound_share' 1 0
grep -q 'the expert products are memory-bound' "$tmp/out" || fail "MoE sentence"
e1=$(jq -r .ceiling_mfu "$tmp/out")
ok --model qwen3-30b-a3b --seq 4096 --ep 4 --device h100-sxm --json
near '.parallel.tokens_per_expert' 1024 0
near '.groups.experts.memory_bound_share' 0 0
jq_true ".ceiling_mfu > $e1"

# Recomputation: full recompute of a compute-bound step re-runs every forward product but the
# logits (6.1 % of the FLOPs): ceiling = 1 / (1 + (1 - 0.061) / 3) = 0.762.
ok --model llama3-8b --seq 8192 --device h100-sxm --recompute full --json
near '.ceiling_mfu' 0.7617 0.0001
near '.ceiling_mfu * (.flops + .recompute_flops) / .flops' 1 1e-9
jq_true '[.products[] | select(.recomputed)] | length > 0'

# Device overrides: both alone, or over the table's entry.
ok --model llama3-8b --seq 512 --peak-tflops 1000 --bandwidth-tbs 2 --json
near '.ridge_flops_per_byte' 500 1e-9
jq_is '.device.id' null
jq_is '.device.peak_source' "--peak-tflops"
ok --model llama3-8b --seq 512 --device h100-sxm --bandwidth-tbs 4.8 --json
near '.ridge_flops_per_byte' 206.1458 0.001
jq_is '.device.bandwidth_source' "--bandwidth-tbs"
ok --model llama3-8b --seq 512 --device h100-sxm --dtype fp8 --json
near '.device.bytes_per_element' 1 0
near '.ridge_flops_per_byte' 590.746 0.001
ok --model llama3-8b --seq 2048 --device h100-sxm --unfused-attention --wgrad-fp32 --json
jq_is '.attention' unfused
jq_true '.wgrad_fp32'
jq_true '[.products[] | select(.name == "attn.scores")][0].bound == "memory"'

# Text: the table, the ridge point, the ceiling, the finding's sentence.
ok --model llama3-8b --seq 128 --device h100-sxm
grep -q '^ridge point 295.4 FLOP/byte' "$tmp/out" || fail "text lacks the ridge point"
grep -q '^mlp.up  *fwd  *128×14336×4096 ' "$tmp/out" || fail "text lacks the mlp.up row"
grep -q '^ceiling     MFU at most ' "$tmp/out" || fail "text lacks the ceiling"
grep -q 'not a prediction' "$tmp/out" || fail "text does not say it is a ceiling"
grep -q '^finding     at micro-batch 1 × 128 tokens the MLP' "$tmp/out" || fail "text finding"

# A ceiling of 90 % or more is said as what it means, never as "at most 96 %".
run --model llama3-8b --seq 512 --tp 8 --device h100-sxm --json
jq_true '.ceiling_mfu >= 0.9 and .ceiling_mfu < 1'
jq_is '.sentence' "at micro-batch 1 × 512 tokens (TP 8) the attention projection products are memory-bound, yet the shapes allow MFU above 90 %"

# Bad input.
bad 2 --model llama3-8b --seq 2048
grep -q -- '--bandwidth-tbs' "$tmp/err" || fail "no device: no --bandwidth-tbs hint"
bad 2 --model llama3-8b --seq 2048 --peak-tflops 989
bad 1 --model llama3-8b --seq 2048 --device "NVIDIA H900"
bad 1 --model llama3-8b --seq 2048 --device a100-sxm4-80gb --dtype fp8
bad 2 --model llama3-8b --seq 2048 --device h100-sxm --dtype bf17
bad 2 --model llama3-8b --seq 2048 --device h100-sxm --tp 3
grep -q -- '--heads' "$tmp/err" || fail "--tp 3: message does not name --heads"
bad 2 --model llama3-8b --seq 2048 --device h100-sxm --ep 2
bad 2 --model mixtral-8x7b --seq 2048 --device h100-sxm --ep 3
bad 2 --model llama3-8b --seq 2048 --device h100-sxm --micro-batch 0
bad 2 --model llama3-8b --seq 2048 --device h100-sxm --micro-batch -1
bad 2 --model llama3-8b --seq 2048 --device h100-sxm --micro-batch 99999999999
bad 2 --model llama3-8b --seq 2048 --device h100-sxm --bandwidth-tbs -1
bad 2 --model llama3-8b --seq 2048 --device h100-sxm --peak-tflops nan
bad 2 --model llama3-8b --seq 2048 --device h100-sxm --convention palm
bad 2 --config "$data/model/llama3-8b.json" --device h100-sxm   # no trained length: --seq
# a preset's trained length is the default, and said
run --model llama3-8b --device h100-sxm --json
[ "$rc" = 0 ] || fail "preset without --seq: exit $rc"
jq_is '.workload.seq' 8192
jq_is '.workload.seq_source' trained_seq
run --model llama3-8b --device h100-sxm
grep -q '^note        seq 8192, the length llama3-8b was trained at' "$tmp/out" || fail "no trained-length note"
bad 2 --layers 2 --hidden 64 --heads 4 --seq 32 --device h100-sxm
grep -q -- '--vocab' "$tmp/err" || fail "missing vocab: message does not name --vocab"
bad 2 --model llama3-8b --seq 2048 --device h100-sxm --bogus
bad 2 --model llama3-8b --seq 2048 --device h100-sxm extra
run --help
[ "$rc" = 0 ] && grep -q 'Examples' "$tmp/out" || fail "--help"

e2e_finish
