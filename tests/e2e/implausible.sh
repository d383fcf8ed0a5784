#!/usr/bin/env bash
# e2e: the "implausible_mfu" finding. An MFU below what any healthy run reaches on its kind of
# device is about the setup, not about kernels: on a CPU below 5 % of the peak (an optimised
# BLAS runs large products at half of it; a reference BLAS at a few percent), on an
# accelerator below 1 %. Logs are real excerpts or written as nanoGPT prints them.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"

has_finding() { jq -e '[.findings[] | select(.kind == "implausible_mfu")] | length == 1' "$tmp/out" >/dev/null; }

# --- accelerator: nanoGPT on one V100 (issue 215), told it ran on 512: MFU 0.07 % (35.75 % / 512)
f=$data/logs/nanogpt/nanogpt-issue215-v100-fp16-nan.log
ctx=(--model gpt2 --seq 1024 --device v100-sxm2 --dtype fp16 --tokens-per-step 61440)
ok "$f" "${ctx[@]}" --devices 512 --json
has_finding || fail "512 devices: no implausible_mfu finding"
jq_true '.findings[] | select(.kind == "implausible_mfu") | .severity == "warning"'
jq_true '.findings[] | select(.kind == "implausible_mfu") | .next_step | test("--devices")'
ok "$f" "${ctx[@]}" --devices 512
grep -q 'implausible_mfu, steps 2920-3060: MFU 0.07 % of v100-sxm2.s dense fp16 peak' "$tmp/out" ||
    fail "text: $(grep implausible "$tmp/out")"
# the run as it was (1 device, about 38 %): no such finding
ok "$f" "${ctx[@]}" --devices 1 --json
has_finding && fail "1 device: an implausible_mfu finding at MFU $(jq .summary.mfu.median "$tmp/out")"

# --- this machine's CPU: nanoGPT's "I only have a macbook" model (4 layers, 128 wide, block 64,
# batch 12: 768 tokens per iteration). The step time is chosen from the peak mfu computes here,
# so the test means the same on any CPU: 2 % of the peak (a reference BLAS) and 30 % (optimised).
peak=$("$bin" devices cpu --dtype fp32 --json 2>/dev/null | jq -r '.device.peak_flops_per_s // empty')
if [ -z "$peak" ]; then
    echo "implausible.sh: no CPU peak on this machine; CPU part skipped"
else
    model=(--layers 4 --hidden 128 --heads 4 --vocab 65 --learned-positions 64 --tied --seq 64)
    fpt=$("$bin" flops "${model[@]}" --json | jq .flops_per_token.model)
    cpu_log() { # FILE MFU: nanoGPT's lines at the step time that gives that MFU
        awk -v fpt="$fpt" -v peak="$peak" -v mfu="$2" 'BEGIN {
            ms = 768 * fpt / (mfu * peak) * 1000
            print "tokens per iteration will be: 768"
            print "found vocab_size = 65 (inside data/shakespeare_char/meta.pkl)"
            print "Initializing a new model from scratch"
            print "number of parameters: 0.80M"
            print "using fused AdamW: False"
            print "step 0: train loss 4.1791, val loss 4.1788"
            for (i = 0; i <= 40; i++) {
                t = ms * (i == 0 ? 3 : 1 + 0.01 * ((i * 7) % 5 - 2))
                printf "iter %d: loss %.4f, time %.2fms, mfu %s\n", i, 4.18 - 0.03 * i, t, \
                    i < 5 ? "-100.00%" : "0.00%"
            }
        }' >"$1"
    }
    cpu_log "$tmp/ref.log" 0.02
    ok "$tmp/ref.log" "${model[@]}" --device cpu --dtype fp32 --devices 1 --json
    near '.summary.mfu.median' 0.02 0.001
    has_finding || fail "cpu at 2 %: no implausible_mfu finding"
    jq_true '.findings[] | select(.kind == "implausible_mfu") | .summary | test("BLAS")'
    jq_true '.findings[] | select(.kind == "implausible_mfu") | .next_step | test("torch.__config__.show")'
    cpu_log "$tmp/opt.log" 0.30
    ok "$tmp/opt.log" "${model[@]}" --device cpu --dtype fp32 --devices 1 --json
    near '.summary.mfu.median' 0.30 0.01
    has_finding && fail "cpu at 30 %: an implausible_mfu finding"
fi

e2e_finish
