#!/usr/bin/env bash
# e2e: `mfu estimate` - published cases through the CLI (model presets, conventions and the
# device table together), every throughput form, the reverse question, the JSON keys that
# docs/cli.md promises, and bad input: exit 1 or 2 with one line on stderr, never a crash.
E2E_CMD=estimate
source "$(dirname "$0")/lib/e2e.bash"

# PaLM 540B (Chowdhery et al. 2022, App. B): 6144 TPU v4 at 275 TFLOP/s, 238.3K tokens/s.
ok --convention 6n --params 540e9 --seq 2048 --device tpu-v4 --devices 6144 \
    --tokens-per-sec 238.3e3 --json
near '.mfu * 100' 45.70 0.005
near '.device.peak_flops' 275e12 1
ok --convention palm --params 540e9 --layers 118 --heads 48 --head-dim 256 --seq 2048 \
    --peak-tflops 275 --devices 6144 --tokens-per-sec 238.3e3 --json
near '.mfu * 100' 46.20 0.005

# MT-NLG 530B as PaLM Table 3 computed it: 1920 x 2048 tokens per 60.1 s on 2240 A100 -> 30.2 %.
ok --convention palm --params 530e9 --layers 105 --hidden 20480 --heads 128 --seq 2048 \
    --device a100-sxm4-80gb --devices 2240 --step-time 60.1 --batch-size 1920 --json
near '.mfu * 100' 30.26 0.01
near '.tokens_per_second' 65426.96 0.01

# torchtitan docs/performance.md (2024-04), Llama 3 8B on 64 A100, selective-layer AC:
# 2904 tokens/s per GPU -> 56.8 % (N including embeddings at that commit).
ok --model llama3-8b --seq 8192 --convention torchtitan --count-embeddings \
    --device "NVIDIA A100-SXM4-80GB" --devices 64 --tokens-per-sec-per-device 2904 --json
near '.mfu * 100' 56.84 0.01
near '.device.peak_flops' 312e12 1

# llm-foundry MPT-7B on 8 H100 bf16: 85144 tokens/s -> MFU 46.44 %, 459.5 model TFLOP/s.
ok --model mpt-7b --seq 2048 --convention llm-foundry --device h100-sxm --devices 8 \
    --tokens-per-sec 85144 --json
near '.mfu * 100' 46.44 0.01
near '.model_flops_per_second_per_device / 1e12' 459.5 0.05
# ... and with activation checkpointing (MPT-70B row: 42.57 / 56.76).
ok --model mpt-70b --seq 2048 --convention llm-foundry --recompute full --device h100-sxm \
    --devices 64 --tokens-per-sec 66523 --json
near '.mfu * 100' 42.57 0.01
near '.hfu * 100' 56.76 0.01

# NeMo 24.07, LLAMA2-7B on 8 H100 fp8: 16934 tokens/s/GPU -> 780 model TFLOP/s per GPU.
ok --model llama2-7b --seq 4096 --convention nemo-2024 --device h100-sxm --dtype fp8 \
    --devices 8 --tokens-per-sec-per-device 16934 --json
near '.model_flops_per_second_per_device / 1e12' 780 0.5
near '.device.peak_flops' 1979e12 1

# The same throughput in every form gives the same MFU.
base="--model llama3-8b --seq 8192 --device h100-sxm --devices 8"
ok $base --tokens-per-sec 46848 --json
want=$(jq -r .mfu "$tmp/out")
ok $base --tokens-per-sec-per-device 5856 --json
near .mfu "$want" 1e-9
ok $base --step-time 1.39891 --batch-tokens 65536 --json
near .mfu "$want" 1e-5
ok $base --step-time 1.39891 --batch-size 8 --json
near .mfu "$want" 1e-5
tf=$(jq -r '.model_flops_per_second_per_device / 1e12' "$tmp/out")
ok $base --tflops-per-device "$tf" --json
near .mfu "$want" 1e-5

# Every key docs/cli.md promises is there, ratios are fractions.
ok $base --tokens-per-sec 46848 --json
for k in .convention .flops_per_token.model .flops_per_token.hardware .flops_per_token.breakdown \
    .model.params_total .model.params_matmul .model.params_active .device.name .device.dtype \
    .device.peak_flops .device.count .tokens_per_second .tokens_per_second_per_device \
    .model_flops_per_second_per_device .hardware_flops_per_second_per_device .mfu .hfu; do
    [ "$(jq -r "$k | type" "$tmp/out")" != null ] || fail "key $k missing"
done
near '.mfu' 0.3046 0.0005
near '.device.count' 8 0

# Recomputation changes HFU, never MFU.
ok $base --tokens-per-sec 46848 --recompute full --json
near .mfu "$want" 1e-12
[ "$(jq -r '.hfu > .mfu' "$tmp/out")" = true ] || fail "full recompute: hfu not above mfu"

# The reverse question.
ok $base --target-mfu 40% --json
near .mfu 0.40 1e-12
near '.tokens_per_second * .flops_per_token.model / (8 * .device.peak_flops)' 0.40 1e-9
ok $base --target-mfu 0.4 --json
near .mfu 0.40 1e-12

# Text output names the figures.
ok $base --tokens-per-sec-per-device 5856
grep -q '^MFU  *30.46%$' "$tmp/out" || fail "text output lacks 'MFU 30.46%': $(cat "$tmp/out")"
grep -q 'h100-sxm' "$tmp/out" || fail "text output lacks the device id"

# A preset without --seq: its trained length (llama3-70b: 8192), named in the output; the same
# figures as --seq 8192.
ok --model llama3-70b --device h100-sxm --devices 64 --step-time 12.5 --batch-size 256 --json
jq_is '.workload.seq' 8192
jq_is '.workload.seq_source' trained_seq
mfu70=$(jq .mfu "$tmp/out")
ok --model llama3-70b --seq 8192 --device h100-sxm --devices 64 --step-time 12.5 --batch-size 256 --json
jq_true ".mfu == $mfu70"
ok --model llama3-70b --device h100-sxm --devices 64 --step-time 12.5 --batch-size 256
grep -q '^note        seq 8192, the length llama3-70b was trained at' "$tmp/out" || fail "no trained-length note"

# The spellings of report (--global-batch, --tokens-per-step) mean the same here.
ok --model llama3-70b --device h100-sxm --devices 64 --step-time 12.5 --global-batch 256 --json
jq_true ".mfu == $mfu70"
ok --model llama3-70b --device h100-sxm --devices 64 --step-time 12.5 --tokens-per-step 2097152 --json
jq_true ".mfu == $mfu70"
bad 2 --model llama3-70b --device h100-sxm --step-time 12.5 --global-batch 256 --batch-tokens 9
grep -q 'not both' "$tmp/err" || fail "both batch spellings: message"
bad 2 --model llama3-70b --device h100-sxm --tokens-per-sec 1 --batch-sise 3
grep -qF "(did you mean --batch-size?" "$tmp/err" || fail "--batch-sise: no did-you-mean"

# Bad input.
bad 1 $base --device "NVIDIA H900" --tokens-per-sec 1
grep -q -- '--peak-tflops' "$tmp/err" || fail "unknown device: no --peak-tflops hint"
bad 1 --model llama3-8b --seq 8192 --device h100 --tokens-per-sec 1
bad 2 --model llama3-8b --seq 8192 --device h100-sxm
bad 2 $base --tokens-per-sec 1 --tokens-per-sec-per-device 1
bad 2 --model llama3-8b --seq 8192 --device h100-sxm --devices 0 --tokens-per-sec 1
bad 2 $base --tokens-per-sec -5
bad 2 $base --tokens-per-sec abc
bad 2 $base --step-time 2
bad 2 $base --target-mfu 150%
bad 2 --model llama3-8b --seq 8192 --tokens-per-sec 1000
bad 1 --model llama3-8b --seq 8192 --device a100-sxm4-80gb --dtype fp8 --tokens-per-sec 1
bad 2 --model llama3-8b --seq 8192 --device h100-sxm --dtype bf17 --tokens-per-sec 1
bad 2 --layers -3 --hidden 4096 --heads 32 --vocab 32000 --seq 2048 --device h100-sxm \
    --tokens-per-sec 1
bad 2 --model nosuchmodel --seq 2048 --device h100-sxm --tokens-per-sec 1
bad 2 $base --tokens-per-sec 1 --bogus
run --help
[ "$rc" = 0 ] && grep -q 'Examples' "$tmp/out" || fail "--help"

e2e_finish
